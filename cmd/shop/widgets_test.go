package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/notify/smtptest"
	"shop/widgets"
)

// TestWidgets drives the widgets as a buyer would, in headless Chromium,
// inside the test host (an MCP Apps host built on ext-apps' AppBridge with
// ChatGPT's window.openai), against a shop started in-process.
func TestWidgets(t *testing.T) {
	chromium, hostPage := needBrowser(t)
	dsn := dbtest.DSN(t, database.SQLite)
	// The shop mails sign-in codes for linked buyers' cases.
	mail := smtptest.Start(t)
	shop := startShop(t, dsn, map[string]string{"SHOP_SMTP_URL": mail.URL, "SHOP_ADMIN_TOKENS": "owner:" + ownerToken})
	hostURL := testHost(t, hostPage, shop.url)
	// A second shop whose policy enables the payment sheet.
	sheetDSN := dbtest.DSN(t, database.SQLite)
	sheetURL := testHost(t, hostPage, startShopArgs(t, nil, "--db", sheetDSN, "--config", sheetPolicy(t)))
	bctx := browser(t, chromium)

	cases := []widgetCase{
		{name: "Products", run: testProducts},
		{name: "ToolInput", run: testToolInput},
		{name: "Exponents", run: testExponents},
		{name: "Checkout", sheet: true, run: testCheckout},
		{name: "Declined", sheet: true, run: testDeclined},
		{name: "NoPaymentSheet", run: testNoPaymentSheet},
		{name: "PaymentLink", run: testPaymentLink},
		{name: "PaymentLinkCanceled", run: testPaymentLinkCanceled},
		{name: "ThemeAndLocale", run: testThemeAndLocale},
		{name: "Narrow", run: testNarrow},
		{name: "ErrCSPViolation", run: testCSPViolation},
		{name: "OpenAIOnly", sheet: true, run: testOpenAIOnly},
		{name: "Remount", sheet: true, run: func(t *testing.T, p *page) { testRemount(t, p, sheetDSN) }},
		{name: "RemountGone", run: testRemountGone},
		{name: "SavedCards", run: testSavedCards},
	}
	cases = append(cases, shopperCases(bctx, hostURL)...)
	linked := linkedHost{bctx: bctx, host: hostURL, shop: shop.url, dsn: dsn, mail: mail}
	cases = append(cases, linked.cases()...)
	for _, tc := range append(cases, roadCases(sheetDSN)...) {
		t.Run(tc.name, func(t *testing.T) {
			at := hostURL
			if tc.sheet {
				at = sheetURL
			}
			p := openHost(t, bctx, at)
			tc.run(t, p)
			if tc.name != "ErrCSPViolation" {
				if err := p.violations(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// widgetCase is a case of TestWidgets: sheet runs it against the shop
// whose policy enables the payment sheet.
type widgetCase struct {
	name  string
	sheet bool
	run   func(*testing.T, *page)
}

// search returns the ids of the first n products a search finds.
func (p *page) search(query string, n int) []string {
	p.t.Helper()
	var page searchResult
	p.call("search_products", map[string]any{"query": query, "limit": n}, &page)
	var ids []string
	for _, s := range page.Products {
		ids = append(ids, s.ID)
	}
	if len(ids) != n {
		p.t.Fatalf("search %q found %d products, want %d", query, len(ids), n)
	}
	return ids
}

func (p *page) session(id string) checkout.Session {
	p.t.Helper()
	var s checkout.Session
	p.call("get_checkout_session", map[string]any{"checkout_session_id": id}, &s)
	return s
}

// receipt waits for the widget's receipt of session id, paid by road, and
// answers the session: completed, with the order the receipt's heading names.
func (p *page) receipt(id, road string) checkout.Session {
	p.t.Helper()
	p.waitFor("the receipt in the widget", `!!document.querySelector('[data-view="receipt"]')`)
	p.shot("receipt")
	done := p.session(id)
	if done.Status != checkout.Completed || done.Order == nil {
		p.t.Fatalf("after paying %s the session is %s, order %v", road, done.Status, done.Order)
	}
	if h := p.text("h1"); h != fmt.Sprintf("Order #%d is confirmed", done.Order.Number) {
		p.t.Errorf("the receipt's heading is %q, want order %d", h, done.Order.Number)
	}
	return done
}

func testProducts(t *testing.T, p *page) {
	ids := p.search("mug", 3)
	m := p.load(loadOptions{URI: widgets.ProductsURI, Tool: "render_products", Args: map[string]any{"product_ids": ids}, OpenAI: true})
	logRender(t, "products", "with window.openai.toolOutput", m)
	p.shot("cards")
	p.named("the cards")

	var cards int
	p.eval(`document.querySelectorAll("article.card").length`, &cards)
	if cards != 3 {
		t.Fatalf("%d cards, want 3", cards)
	}
	p.waitFor("the first card's image from the shop", `(() => { const i = document.querySelector("article.card img"); return i && i.complete && i.naturalWidth > 0; })()`)
	if title := p.text("article.card h2"); !strings.Contains(title, "Mug") {
		t.Errorf("first card's title %q", title)
	}

	// On the second card (two sizes, both in stock), choose the second
	// variant with the keyboard, two units, and add to cart.
	first := fmt.Sprintf(`article[data-product=%q]`, ids[1])
	p.in(chromedp.Focus(chromedp.CSS(first+" select")), chromedp.KeyEvent(kb.ArrowDown))
	var variant string
	p.eval(fmt.Sprintf(`document.querySelector(%q).value`, first+" select"), &variant)
	p.in(chromedp.Click(chromedp.CSS(first + ` button[aria-label^="Increase"]`)))
	p.in(chromedp.Click(chromedp.CSS(first + ` button.primary`)))
	p.waitFor("the added status", `document.querySelector(".status").innerText.startsWith("Added 2")`)
	p.shot("added")
	p.named("the cards after an add")

	calls := p.events("tools/call")
	if len(calls) != 1 || calls[0].Name != "create_checkout_session" || !strings.Contains(string(calls[0].Arguments), `"quantity":2`) || !strings.Contains(string(calls[0].Arguments), variant) {
		t.Fatalf("tools/call %+v, want create_checkout_session with 2 × %s", calls, variant)
	}
	mc := p.events("model-context")
	if len(mc) != 1 || !strings.Contains(mc[0].Text, "render_checkout") {
		t.Fatalf("model context %+v", mc)
	}
	var sc struct {
		ID string `json:"checkout_session_id"`
	}
	if err := json.Unmarshal(mc[0].Structured, &sc); err != nil || !strings.HasPrefix(sc.ID, "cs_") {
		t.Fatalf("model context's structured content %s: %v", mc[0].Structured, err)
	}

	// A second product goes into the same session.
	third := fmt.Sprintf(`article[data-product=%q]`, ids[2])
	p.in(chromedp.Click(chromedp.CSS(third + ` button.primary`)))
	p.waitFor("the second add", `document.querySelector(".status").innerText.includes("Cart: 3 items")`)
	calls = p.events("tools/call")
	if len(calls) != 2 || calls[1].Name != "update_checkout_session" {
		t.Fatalf("tools/call %+v, want update_checkout_session", calls)
	}
	if s := p.session(sc.ID); len(s.LineItems) != 2 || s.LineItems[0].Item.ID != variant || s.LineItems[0].Item.Quantity != 2 {
		t.Errorf("session's lines %+v", s.LineItems)
	}

	// A re-render keeps the buyer's choice (setWidgetState).
	p.load(loadOptions{URI: widgets.ProductsURI, Tool: "render_products", Args: map[string]any{"product_ids": ids}, OpenAI: true})
	var kept struct {
		Variant string `json:"variant"`
		Qty     string `json:"qty"`
	}
	p.eval(fmt.Sprintf(`({variant: document.querySelector(%q).value, qty: document.querySelector(%q).value})`,
		first+" select", first+` input[type="number"]`), &kept)
	if kept.Variant != variant || kept.Qty != "2" {
		t.Errorf("after a re-render the card shows %+v, want %s × 2", kept, variant)
	}
}

// testToolInput: while the render tool runs, the host sends its input and
// the widget says what it is looking up; then the result replaces it. Also
// the products widget's first render through the MCP Apps bridge alone.
func testToolInput(t *testing.T, p *page) {
	ids := p.search("mug", 3)
	products := loadOptions{URI: widgets.ProductsURI, Tool: "render_products", Args: map[string]any{"product_ids": ids}}
	logRender(t, "products", "through the MCP Apps bridge alone", p.load(products))

	p.loadPending(products)
	p.waitFor("the lookup", `document.querySelector('[role="status"]').innerText === "Looking up 3 products…"`)
	p.shot("products-pending")
	m := p.release()
	p.waitFor("the cards", `document.querySelectorAll("article.card").length === 3 && !document.querySelector("p[role=status].muted")`)
	t.Logf("products widget showed the held result %.0f ms after it was sent", m.FirstRenderMs)

	// In ChatGPT window.openai.toolInput is there before the result.
	var s checkout.Session
	p.call("create_checkout_session", map[string]any{"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 1}}}, &s)
	p.loadPending(loadOptions{URI: widgets.CheckoutURI, Tool: "render_checkout", Args: map[string]any{"checkout_session_id": s.ID}, OpenAI: true})
	p.waitFor("the cart's loading status", `document.querySelector('[role="status"]').innerText === "Loading your cart…"`)
	p.shot("checkout-pending")
	p.release()
	p.waitFor("the checkout", `document.querySelector('[data-view="checkout"]')`)
}

// testExponents: amounts are formatted with the shop's ISO 4217 exponents
// (money), whatever Intl thinks: 0 digits for jpy, 3 for kwd, 2 for huf
// (where Intl says 0). The test host relabels the products' prices.
func testExponents(t *testing.T, p *page) {
	ids := p.search("mug", 3)
	var res struct {
		Products []struct {
			ID       string `json:"id"`
			Variants []struct {
				Price     struct{ Amount int64 } `json:"price"`
				Available int64                  `json:"available"`
			} `json:"variants"`
		} `json:"products"`
	}
	p.call("render_products", map[string]any{"product_ids": ids}, &res)
	currencies := []string{"jpy", "kwd", "huf"}
	p.load(loadOptions{URI: widgets.ProductsURI, Tool: "render_products", Args: map[string]any{"product_ids": ids}, OpenAI: true, Currencies: currencies})
	p.shot("currencies")
	for i, pr := range res.Products {
		var a int64 = -1
		for _, v := range pr.Variants {
			if v.Available > 0 {
				a = v.Price.Amount
				break
			}
		}
		if a < 0 {
			t.Fatalf("product %s has no variant in stock", pr.ID)
		}
		var want, code string
		switch currencies[i] {
		case "jpy":
			want, code = group(a), "¥"
		case "kwd":
			want, code = fmt.Sprintf("%s.%03d", group(a/1000), a%1000), "KWD"
		case "huf":
			want, code = fmt.Sprintf("%s.%02d", group(a/100), a%100), "HUF"
		}
		got := p.text(fmt.Sprintf(`article[data-product=%q] .price`, pr.ID))
		if !strings.Contains(got, want) || !strings.Contains(got, code) || currencies[i] == "jpy" && strings.Contains(got, ".") {
			t.Errorf("%d minor units of %s show as %q, want %s with %s", a, currencies[i], got, want, code)
		}
	}
}

// group writes n with en-US thousands separators.
func group(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// attr is an attribute of the first element matching sel ("" if none).
func (p *page) attr(sel, name string) string {
	p.t.Helper()
	var s string
	p.eval(fmt.Sprintf(`(document.querySelector(%q) || {getAttribute: () => ""}).getAttribute(%q) || ""`, sel, name), &s)
	return s
}

// nameless lists the widget's controls without an accessible name: none of
// aria-label, aria-labelledby naming text, a label, their own text (or an
// image's alt inside) or a title.
const nameless = `(() => {
	const t = (s) => (s || "").replace(/\s+/g, " ").trim();
	const named = (el) =>
		t(el.getAttribute("aria-label")) ||
		(el.getAttribute("aria-labelledby") || "").split(/\s+/).some((id) => { const r = id && document.getElementById(id); return r && t(r.textContent); }) ||
		[...(el.labels || [])].some((l) => t(l.textContent)) ||
		(el.matches("button, a, [role=button], summary") && (t(el.textContent) || [...el.querySelectorAll("img[alt]")].some((i) => t(i.alt)))) ||
		(el.matches("input[type=submit], input[type=button], input[type=reset]") && t(el.value)) ||
		t(el.getAttribute("title"));
	return [...document.querySelectorAll("button, input:not([type=hidden]), select, textarea, a[href], [role=button], summary, [tabindex]:not([tabindex='-1'])")]
		.filter((el) => !named(el))
		.map((el) => el.outerHTML.slice(0, 160));
})()`

// named fails the test for every control of the widget's view without an accessible name.
func (p *page) named(view string) {
	p.t.Helper()
	var bad []string
	p.eval(nameless, &bad)
	var n int
	p.eval(`document.querySelectorAll("button, input, select, textarea, a[href]").length`, &n)
	if n == 0 {
		p.t.Errorf("%s: no controls at all", view)
	}
	for _, b := range bad {
		p.t.Errorf("%s: a control without an accessible name: %s", view, b)
	}
}

// readySession creates a session ready for payment, without the widget.
func (p *page) readySession() checkout.Session {
	p.t.Helper()
	var s checkout.Session
	p.call("create_checkout_session", map[string]any{
		"items":               []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 2}},
		"fulfillment_address": address, "buyer": buyer,
	}, &s)
	if s.Status != checkout.Ready {
		p.t.Fatalf("not ready: %+v", s.Messages)
	}
	return s
}

func (p *page) loadCheckout(id string, o loadOptions) metrics {
	p.t.Helper()
	o.URI, o.Tool, o.Args = widgets.CheckoutURI, "render_checkout", map[string]any{"checkout_session_id": id}
	return p.load(o)
}

// pressPay clicks Pay once it is there and enabled, as a buyer does: a
// click on a button not rendered yet, or still disabled, would be lost.
func (p *page) pressPay() {
	p.t.Helper()
	p.waitFor("Pay, enabled", `(() => { const b = document.querySelector("#pay"); return !!b && !b.disabled; })()`)
	p.in(chromedp.Click(chromedp.CSS("#pay")))
}

func (p *page) disabled(sel string) bool {
	p.t.Helper()
	var d bool
	p.eval(fmt.Sprintf(`document.querySelector(%q).disabled`, sel), &d)
	return d
}

func testCheckout(t *testing.T, p *page) {
	var s checkout.Session
	p.call("create_checkout_session", map[string]any{"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 2}}}, &s)
	m := p.loadCheckout(s.ID, loadOptions{OpenAI: true})
	logRender(t, "checkout", "with window.openai.toolOutput", m)
	p.shot("empty")
	p.named("the checkout without an address")
	if !p.disabled("#pay") {
		t.Error("Pay is enabled for a session without an address")
	}

	// The line's image, and its quantity stepper: + and − change the
	// session and the totals.
	const line = `li.line[data-item="enamel-camp-mug-forest-green"]`
	p.waitFor("the line's image", `(() => { const i = document.querySelector('`+line+` img'); return i && i.complete && i.naturalWidth > 0; })()`)
	if img, want := p.attr(line+" img", "src"), s.LineItems[0].Images; len(want) == 0 || img != want[0] {
		t.Errorf("the line's image is %q, want the first of %q", img, want)
	}
	for _, step := range []struct {
		button string
		want   int64
	}{{"Increase", 3}, {"Decrease", 2}} {
		p.in(chromedp.Click(chromedp.CSS(line + fmt.Sprintf(` button[aria-label^=%q]`, step.button))))
		p.waitFor(fmt.Sprintf("%d on the line", step.want), fmt.Sprintf(`document.querySelector('%s input').value === "%d" && !document.querySelector('%s button[aria-label^="Increase"]').disabled`, line, step.want, line))
		got := p.session(s.ID)
		if len(got.LineItems) != 1 || got.LineItems[0].Item.Quantity != step.want {
			t.Fatalf("after %s the session's lines are %+v, want %d", step.button, got.LineItems, step.want)
		}
		// Without an address there is no tax: the items figure is the subtotal, and the line's.
		sub := totalOf(got.Totals, checkout.TotalSubtotal)
		if shown, want := p.text(`[data-total="items"]`), fmt.Sprintf("$%d.%02d", sub/100, sub%100); shown != want {
			t.Errorf("after %s the items figure shows %q, want %s", step.button, shown, want)
		}
		if shown, want := p.text(line+" .price"), fmt.Sprintf("$%d.%02d", got.LineItems[0].Subtotal/100, got.LineItems[0].Subtotal%100); shown != want {
			t.Errorf("after %s the line shows %q, want %s", step.button, shown, want)
		}
	}

	// An address with a postal code of the wrong shape: the error shows at the field.
	for _, f := range [][2]string{{"name", "Ada Lovelace"}, {"email", "ada@example.com"}, {"line_one", "1 Market St"},
		{"city", "San Francisco"}, {"state", "CA"}, {"postal_code", "9410"}} {
		p.typeInto("#addr-"+f[0], f[1])
	}
	if c := p.attr("#addr-country", "name"); c != "country" {
		t.Fatal("no country list in the form")
	}
	var country string
	p.eval(`document.querySelector("#addr-country").value`, &country)
	if country != "US" {
		t.Errorf("an en-US buyer's form starts with the country %q, want US", country)
	}
	p.in(chromedp.Click(chromedp.CSS("#save-address")))
	p.waitFor("the postal code's error", `document.querySelector("#addr-postal_code-error") && document.querySelector("#addr-postal_code").getAttribute("aria-invalid") === "true"`)
	p.shot("address-error")
	p.named("the address with an error")
	if !p.disabled("#pay") {
		t.Error("Pay is enabled with an invalid postal code")
	}

	// Fixed, the error goes and the shipping options come.
	p.typeInto("#addr-postal_code", "94105")
	p.in(chromedp.KeyEvent(kb.Enter))
	p.waitFor("the error to go and the options to come", `!document.querySelector("#addr-postal_code-error") && document.querySelectorAll("[data-option]").length >= 2 && !document.querySelector("fieldset.options").disabled`)
	var options []string
	p.eval(`[...document.querySelectorAll("[data-option]")].map(e => e.dataset.option)`, &options)
	if win := p.text(fmt.Sprintf(`[data-option=%q]`, options[1])); !strings.Contains(win, "Arrives") {
		t.Errorf("option %q shows no delivery window", win)
	}
	p.in(chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-option=%q] input`, options[1]))))
	p.waitFor("the chosen option", fmt.Sprintf(`document.querySelector('[data-option=%q] input').checked && !document.querySelector("fieldset.options").disabled`, options[1]))
	if got := p.session(s.ID).FulfillmentOptionID; got != options[1] {
		t.Errorf("session's option %q, want %q", got, options[1])
	}

	// The demo promotion.
	p.typeInto("#promo", "WELCOME10")
	p.in(chromedp.Click(chromedp.CSS("#apply-promo")))
	// WELCOME10 takes 10% off the lines: the items figure (the lines
	// without tax, as in the US) drops to the session's discounted subtotal.
	p.waitFor("the promotion", `(() => { const s = document.querySelector("#promo-status"); return !document.querySelector("fieldset.options").disabled && s && s.innerText.trim() === ""; })()`)
	discounted := p.session(s.ID)
	if totalOf(discounted.Totals, checkout.TotalItemsDiscount) == 0 {
		t.Fatalf("WELCOME10 did not apply: %+v", discounted.Messages)
	}
	sub := totalOf(discounted.Totals, checkout.TotalSubtotal)
	if shown, want := p.text(`[data-total="items"]`), fmt.Sprintf("$%d.%02d", sub/100, sub%100); shown != want {
		t.Errorf("after WELCOME10 the items figure shows %q, want %s", shown, want)
	}
	p.shot("ready")
	p.named("the ready checkout")

	// Each change told the model what the buyer did (ui/update-model-context).
	p.waitHost("the promotion's model context", `hostAPI.events.some(e => e.kind === "model-context" && e.text.includes("entered the promotion code WELCOME10"))`)
	for _, want := range []string{"changed the quantities", "saved the shipping address", "chose shipping: ", "entered the promotion code WELCOME10"} {
		var told bool
		for _, e := range p.events("model-context") {
			var sc struct {
				ID string `json:"checkout_session_id"`
			}
			_ = json.Unmarshal(e.Structured, &sc)
			told = told || strings.Contains(e.Text, want) && strings.Contains(e.Text, s.ID) && sc.ID == s.ID
		}
		if !told {
			t.Errorf("the model was not told %q: %+v", want, p.events("model-context"))
		}
	}

	// A legal link opens through the host.
	p.in(chromedp.Click(chromedp.CSS(`[data-link="terms_of_use"]`)))
	p.waitEvent("open-link")
	if links := p.events("open-link"); len(links) != 1 || !strings.HasPrefix(links[0].URL, "http") {
		t.Errorf("open-link %+v", links)
	}

	// Pay: the host's sheet pays with pm_card_visa; the receipt shows the order.
	ready := p.session(s.ID)
	if ready.Status != checkout.Ready || p.disabled("#pay") {
		t.Fatalf("session %s, Pay disabled %v", ready.Status, p.disabled("#pay"))
	}
	if pay := p.text("#pay"); !strings.Contains(pay, fmt.Sprintf("$%d.%02d", total(ready)/100, total(ready)%100)) {
		t.Errorf("Pay button %q does not show the total %d", pay, total(ready))
	}
	p.pressPay()
	p.receipt(s.ID, "on the sheet")
	p.named("the receipt")
	if pays := p.events("checkout"); len(pays) != 1 || pays[0].Token != "pm_card_visa" {
		t.Errorf("requestCheckout calls %+v", pays)
	}
}

func testDeclined(t *testing.T, p *page) {
	s := p.readySession()
	p.loadCheckout(s.ID, loadOptions{OpenAI: true, Cards: []string{"pm_card_visa_chargeDeclined", "pm_card_visa"}})
	p.pressPay()
	p.waitFor("the decline", `document.querySelector("#pay-error") && !document.querySelector("#pay").disabled`)
	p.shot("declined")
	var declined string
	for _, m := range p.session(s.ID).Messages {
		if m.Code == "payment_declined" {
			declined = m.Content
		}
	}
	// The buyer reads the catalog's sentence, not the shop's text for the model.
	if got := p.text("#pay-error"); declined == "" || got == declined || !strings.Contains(got, "declined") {
		t.Errorf("the widget shows %q; the session's decline for the model is %q", got, declined)
	}
	p.pressPay()
	p.waitFor("the receipt", `document.querySelector('[data-view="receipt"]')`)
	if done := p.session(s.ID); done.Status != checkout.Completed {
		t.Errorf("after the second card the session is %s", done.Status)
	}
}

// testNoPaymentSheet: through the MCP Apps bridge alone (no window.openai),
// Pay opens the shop's payment page through the host and waits; the buyer
// can check at once or go back to the cart. (widgets_link_test.go pays.)
func testNoPaymentSheet(t *testing.T, p *page) {
	s := p.readySession()
	m := p.loadCheckout(s.ID, loadOptions{OpenAI: false})
	logRender(t, "checkout", "through the MCP Apps bridge alone", m)
	p.shot("no-sheet")
	if p.disabled("#pay") {
		t.Fatal("Pay is disabled for a ready session without a payment sheet")
	}
	p.pressPay()
	p.waitEvent("open-link")
	p.waitFor("the waiting state", `document.querySelector("#pay-waiting")`)
	p.shot("waiting")
	p.named("the wait for the payment page")
	if links := p.events("open-link"); len(links) != 1 || !strings.Contains(links[0].URL, "/pay/"+s.ID) {
		t.Errorf("open-link %+v, want the payment page of %s", links, s.ID)
	}

	// "Check now" asks the shop; nothing is paid, so the widget keeps waiting.
	calls := len(p.events("tools/call"))
	p.in(chromedp.Click(chromedp.CSS("#pay-check")))
	p.waitHost("a check", fmt.Sprintf(`hostAPI.events.filter(e => e.kind === "tools/call" && e.name === "get_checkout_session").length > 0 && hostAPI.events.filter(e => e.kind === "tools/call").length > %d`, calls))
	p.waitFor("the check to end", `document.querySelector("#pay-check") && !document.querySelector("#pay-check").disabled`)

	// Back to the cart: Pay again, the session untouched.
	p.in(chromedp.Click(chromedp.CSS("#pay-back")))
	p.waitFor("the cart", `document.querySelector('[data-view="checkout"]') && !document.querySelector("#pay").disabled`)
	if got := p.session(s.ID).Status; got != checkout.Ready {
		t.Errorf("after going back the session is %s", got)
	}
}

// rgb reads "rgb(r, g, b)" into its relative luminance (0 black, 1 white).
func luminance(t *testing.T, css string) float64 {
	t.Helper()
	var r, g, b float64
	if _, err := fmt.Sscanf(css, "rgb(%g, %g, %g)", &r, &g, &b); err != nil {
		t.Fatalf("colour %q: %v", css, err)
	}
	return (0.2126*r + 0.7152*g + 0.0722*b) / 255
}

func testThemeAndLocale(t *testing.T, p *page) {
	s := p.readySession()
	p.loadCheckout(s.ID, loadOptions{OpenAI: true, Theme: "dark"})
	p.shot("dark")
	var dark struct{ Theme, Bg, Fg string }
	p.eval(`({theme: document.documentElement.dataset.theme, bg: getComputedStyle(document.body).backgroundColor, fg: getComputedStyle(document.querySelector("h1")).color})`, &dark)
	if dark.Theme != "dark" || luminance(t, dark.Bg) > 0.2 || luminance(t, dark.Fg) < 0.8 {
		t.Errorf("dark theme renders %+v", dark)
	}

	// The host's CSS variables win over the widget's defaults.
	p.loadCheckout(s.ID, loadOptions{OpenAI: true, Styles: map[string]string{"--color-text-primary": "rgb(1, 2, 3)", "--color-background-primary": "rgb(250, 250, 240)"}})
	var light struct{ Bg, Fg string }
	p.eval(`({bg: getComputedStyle(document.body).backgroundColor, fg: getComputedStyle(document.querySelector("h1")).color})`, &light)
	if light.Bg != "rgb(250, 250, 240)" || light.Fg != "rgb(1, 2, 3)" {
		t.Errorf("host style variables not applied: %+v", light)
	}

	// Amounts and dates in the host's locale.
	p.loadCheckout(s.ID, loadOptions{OpenAI: true, Locale: "de-DE"})
	p.shot("de-DE")
	if got := p.text(`[data-total="total"]`); !strings.Contains(got, ",") || !strings.Contains(got, "$") || strings.Contains(got, ".") && !strings.Contains(got, ",") {
		t.Errorf("total in de-DE shows %q", got)
	}
	want := fmt.Sprintf("%d,%02d", total(s)/100, total(s)%100)
	if got := p.text(`[data-total="total"]`); !strings.Contains(got, want) {
		t.Errorf("total in de-DE shows %q, want %s", got, want)
	}
}

// overflow lists the elements wider than the widget's viewport.
const overflow = `document.documentElement.scrollWidth > document.documentElement.clientWidth
	? [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).map(e => e.tagName + "." + e.className).slice(0, 5)
	: []`

func testNarrow(t *testing.T, p *page) {
	ids := p.search("mug", 3)
	p.load(loadOptions{URI: widgets.ProductsURI, Tool: "render_products", Args: map[string]any{"product_ids": ids}, OpenAI: true, Width: 320})
	p.shot("products-320")
	var wide []string
	p.eval(overflow, &wide)
	if len(wide) > 0 {
		t.Errorf("products at 320 px overflow: %v", wide)
	}
	s := p.readySession()
	p.loadCheckout(s.ID, loadOptions{OpenAI: true, Width: 320})
	p.shot("checkout-320")
	p.eval(overflow, &wide)
	if len(wide) > 0 {
		t.Errorf("checkout at 320 px overflows: %v", wide)
	}

	// An address with an error shows the error at its field.
	bad := map[string]any{}
	for k, v := range address {
		bad[k] = v
	}
	bad["postal_code"] = "9410"
	var wrong checkout.Session
	p.call("create_checkout_session", map[string]any{
		"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 1}}, "fulfillment_address": bad, "buyer": buyer,
	}, &wrong)
	p.loadCheckout(wrong.ID, loadOptions{OpenAI: true, Width: 320})
	p.waitFor("the postal code's error", `document.querySelector("#addr-postal_code-error")`)
	p.shot("error-320")
	p.eval(overflow, &wide)
	if len(wide) > 0 {
		t.Errorf("checkout with an address error at 320 px overflows: %v", wide)
	}

	// The receipt.
	var paid checkout.Session
	p.call("complete_checkout", map[string]any{"checkout_session_id": s.ID, "payment_data": map[string]any{"token": "pm_card_visa", "provider": "stripe"}}, &paid)
	if paid.Order == nil {
		t.Fatalf("complete_checkout: session %s without an order: %+v", paid.Status, paid.Messages)
	}
	p.loadCheckout(s.ID, loadOptions{OpenAI: true, Width: 320})
	p.waitFor("the receipt", `document.querySelector('[data-view="receipt"]')`)
	p.shot("receipt-320")
	p.eval(overflow, &wide)
	if len(wide) > 0 {
		t.Errorf("the receipt at 320 px overflows: %v", wide)
	}
}

// testCSPViolation is the negative test of the CSP check every other test
// makes: a product image from an origin the resource's CSP does not name
// must be blocked and reported.
func testCSPViolation(t *testing.T, p *page) {
	const evil = "http://127.0.0.1:1/evil.svg"
	ids := p.search("mug", 1)
	p.load(loadOptions{URI: widgets.ProductsURI, Tool: "render_products", Args: map[string]any{"product_ids": ids}, OpenAI: true, EvilImage: evil})
	p.waitEvent("csp")
	err := p.violations()
	if err == nil || !strings.Contains(err.Error(), evil) || !strings.Contains(err.Error(), "img-src") {
		t.Errorf("violations() = %v, want the blocked %s", err, evil)
	}
}

// TestWidgetToolsAccessible: every tool the widgets call through tools/call
// (host.call in widgets/web/src) is marked widget-accessible in tools/list
// as docs/buying.md says (_meta["openai/widgetAccessible"] = true), and no
// MCP Apps visibility (_meta.ui.visibility) hides it from the app.
func TestWidgetToolsAccessible(t *testing.T) {
	called := map[string]bool{"create_checkout_session": true, "update_checkout_session": true}
	re := regexp.MustCompile(`host\.call\(\s*"([a-z_]+)"`)
	err := filepath.WalkDir("../../widgets/web/src", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".ts") && !strings.HasSuffix(path, ".tsx") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			called[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"get_checkout_session", "create_payment_link"} {
		if !called[name] {
			t.Errorf("found no host.call(%q) in widgets/web/src: does the pattern still find the widgets' calls?", name)
		}
	}

	shop := startShop(t, dbtest.DSN(t, database.SQLite), nil)
	res, err := connect(t, shop.url).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	for name := range called {
		tool := tools[name]
		if tool == nil {
			t.Errorf("the widgets call %s, which tools/list does not list", name)
			continue
		}
		if tool.Meta["openai/widgetAccessible"] != true {
			t.Errorf("%s: _meta[\"openai/widgetAccessible\"] is %v, want true", name, tool.Meta["openai/widgetAccessible"])
		}
		if ui, ok := tool.Meta["ui"].(map[string]any); ok {
			if vis, ok := ui["visibility"].([]any); ok && !slices.Contains(vis, any("app")) {
				t.Errorf("%s: _meta.ui.visibility %v hides it from the widgets", name, vis)
			}
		}
	}
}
