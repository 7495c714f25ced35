package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/widgets"
)

// TestWidgets drives the widgets as a buyer would, in headless Chromium,
// inside the test host (an MCP Apps host built on ext-apps' AppBridge with
// ChatGPT's window.openai), against a shop started in-process.
func TestWidgets(t *testing.T) {
	chromium, hostPage := needBrowser(t)
	shop := startShop(t, dbtest.DSN(t, database.SQLite), nil)
	hostURL := testHost(t, hostPage, shop.url)
	bctx := browser(t, chromium)

	for _, tc := range []struct {
		name string
		run  func(*testing.T, *page)
	}{
		{"Products", testProducts},
		{"Checkout", testCheckout},
		{"Declined", testDeclined},
		{"NoPaymentSheet", testNoPaymentSheet},
		{"PaymentLink", testPaymentLink},
		{"PaymentLinkCanceled", testPaymentLinkCanceled},
		{"ThemeAndLocale", testThemeAndLocale},
		{"Narrow", testNarrow},
		{"ErrCSPViolation", testCSPViolation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := openHost(t, bctx, hostURL)
			tc.run(t, p)
			if tc.name != "ErrCSPViolation" {
				if err := p.violations(); err != nil {
					t.Error(err)
				}
			}
		})
	}
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

func testProducts(t *testing.T, p *page) {
	ids := p.search("mug", 3)
	m := p.load(loadOptions{URI: widgets.ProductsURI, Tool: "render_products", Args: map[string]any{"product_ids": ids}, OpenAI: true})
	t.Logf("products widget: first render %.0f ms after the HTML was set (resources/read %.0f ms, %d characters)", m.FirstRenderMs, m.ReadMs, m.Bytes)
	p.shot("cards")

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
	t.Logf("checkout widget: first render %.0f ms after the HTML was set (resources/read %.0f ms, %d characters)", m.FirstRenderMs, m.ReadMs, m.Bytes)
	p.shot("empty")
	if !p.disabled("#pay") {
		t.Error("Pay is enabled for a session without an address")
	}

	// An address with a postal code of the wrong shape: the error shows at the field.
	for _, f := range [][2]string{{"name", "Ada Lovelace"}, {"email", "ada@example.com"}, {"line_one", "1 Market St"},
		{"city", "San Francisco"}, {"state", "CA"}, {"postal_code", "9410"}, {"country", "US"}} {
		p.typeInto("#addr-"+f[0], f[1])
	}
	p.in(chromedp.Click(chromedp.CSS("#save-address")))
	p.waitFor("the postal code's error", `document.querySelector("#addr-postal_code-error") && document.querySelector("#addr-postal_code").getAttribute("aria-invalid") === "true"`)
	p.shot("address-error")
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
	p.waitFor("the promotion", `document.querySelector("#notes").innerText.includes("WELCOME10 applied") && document.querySelector('[data-total="items_discount"]')`)
	if d := p.text(`[data-total="items_discount"]`); !strings.HasPrefix(d, "−$") {
		t.Errorf("discount shows %q", d)
	}
	p.shot("ready")

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
	p.in(chromedp.Click(chromedp.CSS("#pay")))
	p.waitFor("the receipt", `document.querySelector('[data-view="receipt"]')`)
	p.shot("receipt")
	done := p.session(s.ID)
	if done.Order == nil {
		t.Fatalf("session %s has no order", done.Status)
	}
	if h := p.text("h1"); h != fmt.Sprintf("Order #%d is confirmed", done.Order.Number) {
		t.Errorf("receipt heading %q, want order %d", h, done.Order.Number)
	}
	if pays := p.events("checkout"); len(pays) != 1 || pays[0].Token != "pm_card_visa" {
		t.Errorf("requestCheckout calls %+v", pays)
	}
}

func testDeclined(t *testing.T, p *page) {
	s := p.readySession()
	p.loadCheckout(s.ID, loadOptions{OpenAI: true, Cards: []string{"pm_card_visa_chargeDeclined", "pm_card_visa"}})
	p.in(chromedp.Click(chromedp.CSS("#pay")))
	p.waitFor("the decline", `document.querySelector("#pay-error") && !document.querySelector("#pay").disabled`)
	p.shot("declined")
	var declined string
	for _, m := range p.session(s.ID).Messages {
		if m.Code == "payment_declined" {
			declined = m.Content
		}
	}
	if got := p.text("#pay-error"); declined == "" || got != declined {
		t.Errorf("the widget shows %q; the session's decline is %q", got, declined)
	}
	p.in(chromedp.Click(chromedp.CSS("#pay")))
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
	t.Logf("checkout widget through the MCP Apps bridge alone: first render %.0f ms after the HTML was set", m.FirstRenderMs)
	p.shot("no-sheet")
	if p.disabled("#pay") {
		t.Fatal("Pay is disabled for a ready session without a payment sheet")
	}
	p.in(chromedp.Click(chromedp.CSS("#pay")))
	p.waitEvent("open-link")
	p.waitFor("the waiting state", `document.querySelector("#pay-waiting")`)
	p.shot("waiting")
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
