package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"shop/checkout"
)

// Every road to payment and every state on it (issue 49), in both host
// setups: the MCP Apps host (its bridge; with window.openai's sheet where
// the road needs one) and the host that speaks window.openai alone. The
// default policy (the demo's) pays on the shop's payment page; a second
// shop enables the payment sheet. These run as cases of TestWidgets.

// hostSetup is one of the test host's setups.
type hostSetup struct {
	name string
	o    loadOptions
}

var (
	// pageHosts render a widget through the MCP Apps bridge alone, or with
	// window.openai alone (which has a payment sheet the policy leaves unused).
	pageHosts = []hostSetup{{"bridge", loadOptions{}}, {"openai", loadOptions{OpenAIOnly: true}}}
	// sheetHosts offer window.openai's payment sheet, with the bridge or without.
	sheetHosts = []hostSetup{{"bridge", loadOptions{OpenAI: true}}, {"openai", loadOptions{OpenAIOnly: true}}}
)

// sheetPolicy writes the demo's policy with the payment sheet enabled (and
// Apple Pay and Google Pay) to a directory of its own and answers its path.
func sheetPolicy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	raw, err := os.ReadFile("../../testdata/demo/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	on := strings.Replace(string(raw), "  enabled: false\n", "  enabled: true\n  wallets: [apple_pay, google_pay]\n", 1)
	if on == string(raw) {
		t.Fatal("the demo policy has no payment_sheet.enabled: false to turn on")
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(on), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "static"), os.DirFS("../../testdata/demo/static")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "policy.yaml")
}

// roadCases are TestWidgets' cases of this file, per host setup.
func roadCases(sheetDSN string) []widgetCase {
	var cases []widgetCase
	for _, h := range pageHosts {
		cases = append(cases,
			widgetCase{name: "RoadPage/" + h.name, run: func(t *testing.T, p *page) { testRoadPage(t, p, h.o) }},
			widgetCase{name: "ToolCancelled/" + h.name, run: func(t *testing.T, p *page) { testToolCancelled(t, p, h.o) }},
			widgetCase{name: "Language/" + h.name, run: func(t *testing.T, p *page) { testLanguage(t, p, h.o) }},
			widgetCase{name: "DisplayModes/" + h.name, run: func(t *testing.T, p *page) { testDisplayModes(t, p, h.o) }},
		)
	}
	for _, h := range sheetHosts {
		cases = append(cases,
			widgetCase{name: "SheetCancel/" + h.name, sheet: true, run: func(t *testing.T, p *page) { testSheetCancel(t, p, h.o) }},
			widgetCase{name: "SheetFails/" + h.name, sheet: true, run: func(t *testing.T, p *page) { testSheetFails(t, p, h.o) }},
			widgetCase{name: "UnknownOutcome/" + h.name, sheet: true, run: func(t *testing.T, p *page) { testUnknownOutcome(t, p, h.o, sheetDSN) }},
		)
	}
	return cases
}

// with is o with the host setup's fields set.
func with(h loadOptions, o loadOptions) loadOptions {
	o.OpenAI, o.OpenAIOnly = h.OpenAI, h.OpenAIOnly
	return o
}

// payOnPage opens the payment page the widget asked the host to open (the
// last open-link event, which must be the session's), pays there, and
// waits for the receipt in the widget.
func (p *page) payOnPage(s checkout.Session) {
	p.t.Helper()
	p.waitEvent("open-link")
	p.waitFor("the waiting state", `!!document.querySelector("#pay-waiting")`)
	links := p.events("open-link")
	url := links[len(links)-1].URL
	if !strings.Contains(url, "/pay/"+s.ID) {
		p.t.Fatalf("open-link %+v, want the payment page of %s", links, s.ID)
	}
	tab := p.openPayTab(url)
	tab.pay("pm_card_visa")
	tab.do("the receipt page", chromedp.WaitVisible(chromedp.CSS("#return-note")))
	p.receipt(s.ID, "on the page")
}

// testRoadPage: by default (the demo policy) Pay opens the shop's payment
// page, even in a host that has a payment sheet, and the receipt shows
// once the buyer paid there.
func testRoadPage(t *testing.T, p *page, h loadOptions) {
	s := p.readySession()
	if s.PaymentSheet {
		t.Fatal("the demo policy's session says payment_sheet")
	}
	p.loadCheckout(s.ID, with(h, loadOptions{}))
	if hint := p.text("#pay-hint"); !strings.Contains(hint, "payment page") {
		t.Errorf("Pay's hint %q does not say the payment page opens", hint)
	}
	p.pressPay()
	p.shot("waiting")
	p.payOnPage(s)
	p.shot("receipt")
	if sheets := p.events("checkout"); len(sheets) != 0 {
		t.Errorf("the payment sheet was used with the sheet off: %+v", sheets)
	}
}

// testSheetCancel: with the sheet on, the buyer closing it is a neutral
// note (no alert) and Pay again pays.
func testSheetCancel(t *testing.T, p *page, h loadOptions) {
	s := p.readySession()
	if !s.PaymentSheet || len(s.PaymentProvider.SupportedPaymentMethods) != 3 ||
		s.PaymentProvider.SupportedPaymentMethods[1].Type != "apple_pay" || s.PaymentProvider.SupportedPaymentMethods[2].Type != "google_pay" {
		t.Fatalf("the sheet shop's session: payment_sheet %v, methods %+v", s.PaymentSheet, s.PaymentProvider.SupportedPaymentMethods)
	}
	if d := s.LineItems[0].Description; d != "A steel mug with a glossy enamel coat and a rolled rim, built for campfire coffee and long porch mornings." {
		t.Errorf("the line's description %q, want the first sentence of the product's", d)
	}
	p.loadCheckout(s.ID, with(h, loadOptions{Sheets: []string{"cancel", "pay"}}))
	p.pressPay()
	p.waitFor("the cancelled note", `!!document.querySelector("#pay-cancelled") && !document.querySelector("#pay").disabled`)
	p.shot("cancelled")
	if got := p.text("#pay-cancelled"); !strings.HasPrefix(got, "Payment cancelled, nothing was charged") {
		t.Errorf("the note says %q", got)
	}
	var alerts int
	p.eval(`document.querySelectorAll('[role="alert"]:not(:empty), .notice.error').length`, &alerts)
	if alerts != 0 {
		t.Errorf("%d alerts after the buyer closed the sheet, want none", alerts)
	}
	if st := p.session(s.ID).Status; st != checkout.Ready {
		t.Errorf("after the close the session is %s", st)
	}
	p.pressPay()
	p.waitFor("the receipt", `!!document.querySelector('[data-view="receipt"]')`)
	p.shot("receipt")
	if done := p.session(s.ID); done.Status != checkout.Completed {
		t.Errorf("after paying again the session is %s", done.Status)
	}
	if sheets := p.events("checkout"); len(sheets) != 2 || sheets[0].Mode != "cancel" || sheets[1].Token != "pm_card_visa" {
		t.Errorf("requestCheckout calls %+v, want a close and a payment", sheets)
	}
}

// testSheetFails: a sheet that fails offers the payment page on the spot,
// and that page pays.
func testSheetFails(t *testing.T, p *page, h loadOptions) {
	s := p.readySession()
	p.loadCheckout(s.ID, with(h, loadOptions{Sheets: []string{"fail"}}))
	p.pressPay()
	p.waitFor("the offer of the payment page", `!!document.querySelector("#pay-failed #pay-page")`)
	p.shot("failed")
	if got := p.text("#pay-failed"); !strings.Contains(got, "payment page") {
		t.Errorf("the failure says %q", got)
	}
	p.in(chromedp.Click(chromedp.CSS("#pay-page")))
	p.payOnPage(s)
	p.shot("receipt")
}

// setStatus sets a session's status in the database, as a provider's
// timeout leaves it (in_progress) and as the reconciler settles it.
func setStatus(t *testing.T, dsn, id string, st checkout.Status) {
	t.Helper()
	ctx := context.Background()
	db := openDB(t, dsn)
	res := db.WithContext(ctx).Exec("UPDATE checkout_sessions SET status = ? WHERE id = ?", string(st), id)
	if res.Error != nil || res.RowsAffected != 1 {
		t.Fatalf("set %s %s: %v (%d rows)", id, st, res.Error, res.RowsAffected)
	}
}

// testUnknownOutcome: the sheet answers a payment still in progress (the
// provider timed out): the widget says "Checking your payment…", never
// "try again", and polls until the shop has the order.
func testUnknownOutcome(t *testing.T, p *page, h loadOptions, dsn string) {
	s := p.readySession()
	p.loadCheckout(s.ID, with(h, loadOptions{Sheets: []string{"unknown"}}))
	setStatus(t, dsn, s.ID, checkout.InProgress)
	p.pressPay()
	p.waitFor("the checking state", `!!document.querySelector('[data-view="confirming"]')`)
	p.shot("checking")
	if got := p.text("#pay-confirming"); !strings.HasPrefix(got, "Checking your payment…") {
		t.Errorf("the checking state says %q", got)
	}
	reads := func() int {
		n := 0
		for _, c := range p.events("tools/call") {
			if c.Name == "get_checkout_session" && strings.Contains(string(c.Arguments), s.ID) {
				n++
			}
		}
		return n
	}
	before := reads()
	time.Sleep(4 * time.Second) // two checks at least: 2 s, then 3 s later
	var body string
	p.eval(`document.body.innerText`, &body)
	if strings.Contains(strings.ToLower(body), "try again") || strings.Contains(body, "#pay") {
		t.Errorf("while the outcome is unknown the widget says %q", body)
	}
	var payShown bool
	p.eval(`!!document.querySelector("#pay")`, &payShown)
	if payShown {
		t.Error("Pay is offered while a charge may be pending")
	}
	if got := reads(); got <= before {
		t.Errorf("the widget did not check the session while the outcome was unknown (%d reads, %d before)", got, before)
	}

	// The reconciler settles it: the charge went through.
	setStatus(t, dsn, s.ID, checkout.Ready)
	var paid checkout.Session
	p.call("complete_checkout", map[string]any{"checkout_session_id": s.ID, "payment_data": map[string]any{"token": "pm_card_visa", "provider": "stripe"}}, &paid)
	if paid.Order == nil {
		t.Fatalf("complete_checkout: %s %+v", paid.Status, paid.Messages)
	}
	p.waitFor("the receipt", `!!document.querySelector('[data-view="receipt"]')`)
	p.shot("receipt")
}

// testToolCancelled: a host that cancels the render tool ends both
// widgets' spinners with a short "cancelled" state.
func testToolCancelled(t *testing.T, p *page, h loadOptions) {
	if h.OpenAIOnly {
		// window.openai has no cancellation: the bridge's notification is
		// the one to test, here with window.openai beside it.
		h = loadOptions{OpenAI: true}
	}
	ids := p.search("mug", 3)
	s := p.readySession()
	for _, w := range []loadOptions{
		{URI: "ui://shop/products-v1.html", Tool: "render_products", Args: map[string]any{"product_ids": ids}},
		{URI: "ui://shop/checkout-v1.html", Tool: "render_checkout", Args: map[string]any{"checkout_session_id": s.ID}},
	} {
		w = with(h, w)
		w.HoldResult = true
		p.loadPending(w)
		p.waitFor("the pending status", `!!document.querySelector('[role="status"]') && !document.querySelector("#cancelled")`)
		p.host(`hostAPI.cancel("The user stopped the response.")`, nil)
		p.waitFor("the cancelled state", `!!document.querySelector("#cancelled")`)
		p.shot("cancelled-" + w.Tool)
		var spinning bool
		p.eval(`[...document.querySelectorAll('[role="status"]')].some(e => /Looking up|Loading/.test(e.innerText))`, &spinning)
		if spinning {
			t.Errorf("%s: a loading status remains after tool-cancelled", w.Tool)
		}
	}
}

// english are labels the widgets would show in English; none may remain in
// another language (the merchant's own data, such as product names and
// shipping options, stays as the merchant wrote it).
var english = []string{"Checkout", "Shipping address", "Save address", "Promotion code", "Apply", "Subtotal", "Total",
	"Terms of use", "Privacy policy", "Returns", "Support", "Full name", "Street address", "City", "Postal code",
	"Pay ", "Test mode", "payment page", "Add to cart", "In stock", "Only ", "Quantity", "Increase", "Decrease", "Items"}

// shown is what the widget shows and names: its text, placeholders and accessible names.
const shown = `document.body.innerText + "\n" + [...document.querySelectorAll("[placeholder], [aria-label]")]
	.map(e => (e.getAttribute("placeholder") || "") + " " + (e.getAttribute("aria-label") || "")).join("\n")`

// testLanguage: a de-DE host gets German labels and a ja-JP host Japanese
// ones, in both widgets; the screenshots show them.
func testLanguage(t *testing.T, p *page, h loadOptions) {
	ids := p.search("mug", 3)
	s := p.readySession()
	for _, l := range []struct {
		locale string
		want   []string
	}{
		{"de-DE", []string{"Kasse", "Lieferadresse", "Gesamt", "bezahlen", "In den Warenkorb"}},
		{"ja-JP", []string{"購入手続き", "お届け先", "合計", "を支払う", "カートに追加"}},
	} {
		p.load(with(h, loadOptions{URI: "ui://shop/products-v1.html", Tool: "render_products", Args: map[string]any{"product_ids": ids}, Locale: l.locale}))
		p.shot("products-" + l.locale)
		var products string
		p.eval(shown, &products)
		p.loadCheckout(s.ID, with(h, loadOptions{Locale: l.locale}))
		p.shot("checkout-" + l.locale)
		var checkout string
		p.eval(shown, &checkout)
		all := products + "\n" + checkout
		for _, w := range l.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: %q is not shown", l.locale, w)
			}
		}
		for _, e := range english {
			if strings.Contains(all, e) {
				t.Errorf("%s: the English %q is shown:\n%s", l.locale, e, all)
			}
		}
		var lang string
		p.eval(`document.documentElement.lang`, &lang)
		if lang != l.locale {
			t.Errorf("the document's lang is %q, want %s", lang, l.locale)
		}
	}
}

// testDisplayModes: the widgets declare their display modes, the checkout
// asks for fullscreen where the host offers it (and offers nothing where
// it does not), and the products widget shows a few products as a
// carousel and many as a grid.
func testDisplayModes(t *testing.T, p *page, h loadOptions) {
	s := p.readySession()
	p.loadCheckout(s.ID, with(h, loadOptions{}))
	var offered bool
	p.eval(`!!document.querySelector("#fullscreen")`, &offered)
	if offered {
		t.Error("fullscreen is offered by a host without it")
	}
	p.loadCheckout(s.ID, with(h, loadOptions{Fullscreen: true}))
	p.waitFor("the fullscreen button", `!!document.querySelector("#fullscreen")`)
	p.in(chromedp.Click(chromedp.CSS("#fullscreen")))
	p.waitEvent("display-mode")
	if modes := p.events("display-mode"); len(modes) != 1 || modes[0].Mode != "fullscreen" {
		t.Errorf("display-mode requests %+v, want one for fullscreen", modes)
	}
	if !h.OpenAIOnly {
		caps := p.events("app-capabilities")
		if len(caps) != 2 || strings.Join(caps[0].Modes, ",") != "inline,fullscreen" {
			t.Errorf("the checkout declares the display modes %+v, want inline and fullscreen", caps)
		}
	}

	ids := p.search("mug", 3)
	p.load(with(h, loadOptions{URI: "ui://shop/products-v1.html", Tool: "render_products", Args: map[string]any{"product_ids": ids}}))
	p.shot("carousel")
	if got := p.attr("[data-layout]", "data-layout"); got != "carousel" {
		t.Errorf("3 products are shown as a %q, want a carousel", got)
	}
	var page searchResult
	p.call("search_products", map[string]any{"limit": 6}, &page)
	var many []string
	for _, x := range page.Products {
		many = append(many, x.ID)
	}
	if len(many) != 6 {
		t.Fatalf("the catalog lists %d products, want 6", len(many))
	}
	p.load(with(h, loadOptions{URI: "ui://shop/products-v1.html", Tool: "render_products", Args: map[string]any{"product_ids": many}}))
	p.shot("grid")
	if got := p.attr("[data-layout]", "data-layout"); got != "grid" {
		t.Errorf("6 products are shown as a %q, want a grid", got)
	}
}
