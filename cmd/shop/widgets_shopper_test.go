package main

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"shop/checkout"
	"shop/contract"
)

// A checkout a shopper trusts, in their language (issue 56), in both host
// setups (the MCP Apps bridge, and window.openai alone): figures that add
// up as shown, the buyer's messages from the widget's catalogs, a complete
// address as text with Change, Japanese throughout for ja-JP, fullscreen
// and back; and screenshots in three languages at two widths. These run as
// cases of TestWidgets.

// berlin is a complete German address: tax applies, and the EU zone ships.
var berlin = map[string]any{
	"name": "Erika Mustermann", "line_one": "Unter den Linden 1", "city": "Berlin", "country": "DE", "postal_code": "10117",
}

// shopperCases are TestWidgets' cases of this file, per host setup. Each
// opens the test host (at hostURL, in bctx) as a buyer of its own (an
// anonymous host user id), so the sessions other cases leave open do not
// count against its limits.
func shopperCases(bctx context.Context, hostURL string) []widgetCase {
	own := func(run func(*testing.T, *page)) func(*testing.T, *page) {
		return func(t *testing.T, _ *page) {
			p := openHost(t, bctx, hostURL+"#subject="+url.QueryEscape("buyer-"+t.Name()))
			run(t, p)
			if err := p.violations(); err != nil {
				t.Error(err)
			}
		}
	}
	var cases []widgetCase
	for _, h := range pageHosts {
		cases = append(cases,
			widgetCase{name: "FiguresAddUp/" + h.name, run: own(func(t *testing.T, p *page) { testFiguresAddUp(t, p, h.o) })},
			widgetCase{name: "WrongPromoGerman/" + h.name, run: own(func(t *testing.T, p *page) { testWrongPromoGerman(t, p, h.o) })},
			widgetCase{name: "AddressAsText/" + h.name, run: own(func(t *testing.T, p *page) { testAddressAsText(t, p, h.o) })},
			widgetCase{name: "Japanese/" + h.name, run: own(func(t *testing.T, p *page) { testJapanese(t, p, h.o) })},
			widgetCase{name: "FullscreenAndBack/" + h.name, run: own(func(t *testing.T, p *page) { testFullscreenAndBack(t, p, h.o) })},
		)
	}
	return append(cases, widgetCase{name: "Screenshots", run: own(testScreenshots)})
}

// berlinSession is a ready session of one mug for a buyer in Berlin.
func (p *page) berlinSession() checkout.Session {
	p.t.Helper()
	var s checkout.Session
	p.call("create_checkout_session", map[string]any{
		"items":               []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 1}},
		"fulfillment_address": berlin, "buyer": map[string]any{"name": "Erika Mustermann", "email": "erika@example.com"},
	}, &s)
	if s.Status != checkout.Ready || len(s.LineItems) != 1 || s.FulfillmentOptionID == "" {
		p.t.Fatalf("the Berlin session is %s with %d lines, option %q: %+v", s.Status, len(s.LineItems), s.FulfillmentOptionID, s.Messages)
	}
	return s
}

// cancel cancels session id; a case defers it, so that the sessions the
// cases leave unpaid stay under the shop's open-session limit for the one
// buyer all cases are.
func (p *page) cancel(id string) {
	p.call("cancel_checkout_session", map[string]any{"checkout_session_id": id}, nil)
}

// minor reads an amount as the widget shows it ("18,00 $", "−$5.00") as
// minor units of a two-decimal currency, negative when it has a minus.
func minor(t *testing.T, shown string) int64 {
	t.Helper()
	digits := regexp.MustCompile(`[^0-9]`).ReplaceAllString(shown, "")
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || !regexp.MustCompile(`[.,]\d\d(\D|$)`).MatchString(shown) {
		t.Fatalf("%q is not an amount with two decimals", shown)
	}
	if strings.ContainsAny(shown, "−-") {
		n = -n
	}
	return n
}

// testFiguresAddUp: a de-DE buyer in Berlin sees the line's price as the
// items figure and the chosen option's price as the shipping figure, and
// the figures shown add up to the total (the tax as its own line, or as
// "incl." information where prices include it).
func testFiguresAddUp(t *testing.T, p *page, h loadOptions) {
	s := p.berlinSession()
	defer p.cancel(s.ID)
	// The shop's convention for Berlin, and each convention forced by the test host.
	for _, d := range []*contract.Display{nil, {PricesIncludeTax: true, TaxName: contract.TaxVAT}, {PricesIncludeTax: false, TaxName: contract.TaxSales}} {
		figuresAddUp(t, p, h, s, d)
	}
}

func figuresAddUp(t *testing.T, p *page, h loadOptions, s checkout.Session, d *contract.Display) {
	t.Logf("display %+v", d)
	o := with(h, loadOptions{Locale: "de-DE", Width: 600})
	o.Display = d
	p.loadCheckout(s.ID, o)
	p.shot("de-DE")
	chosen := fmt.Sprintf(`[data-option=%q] .price`, s.FulfillmentOptionID)
	line, items := p.text("li.line .price"), p.text(`[data-total="items"]`)
	option, shipping := p.text(chosen), p.text(`[data-total="fulfillment"]`)
	if line == "" || line != items {
		t.Errorf("the line shows %q, the items figure %q: want the same", line, items)
	}
	if option == "" || option != shipping {
		t.Errorf("the chosen option shows %q, the shipping figure %q: want the same", option, shipping)
	}
	if !strings.Contains(line, ",") || !strings.Contains(line, "$") {
		t.Errorf("the line's price %q is not German", line)
	}
	sum := minor(t, items) + minor(t, shipping)
	if d := p.text(`[data-total="discount"]`); d != "" {
		sum += minor(t, d)
	}
	tax, incl := p.text(`[data-total="tax"]`), p.text(`[data-total="tax-included"]`)
	if tax != "" {
		sum += minor(t, tax)
	}
	if total := minor(t, p.text(`[data-total="total"]`)); sum != total || total != totalOf(s.Totals, checkout.TotalTotal) {
		t.Errorf("the figures shown add up to %d, the total shown is %d, the session's %d", sum, total, totalOf(s.Totals, checkout.TotalTotal))
	}
	if (tax == "") == (incl == "") {
		t.Errorf("the tax shows as a line %q and as information %q: want exactly one", tax, incl)
	}
	if incl != "" && !strings.HasPrefix(incl, "inkl.") {
		t.Errorf("the tax included reads %q, want German", incl)
	}
	if d != nil && (incl != "") != d.PricesIncludeTax {
		t.Errorf("with %+v the tax shows as a line %q, as information %q", d, tax, incl)
	}
}

// english are words of the widget's English catalog and of the shop's texts
// for the model that a German or Japanese buyer must not see.
var englishWords = regexp.MustCompile(`(?i)\b(promotion|spelling|send|the|add|business days|arrives|check|shipping|postal|required)\b`)

// testWrongPromoGerman: a wrong promotion code typed into the de-DE widget
// shows a German sentence, and no English (the shop's text for the model).
func testWrongPromoGerman(t *testing.T, p *page, h loadOptions) {
	s := p.berlinSession()
	defer p.cancel(s.ID)
	p.loadCheckout(s.ID, with(h, loadOptions{Locale: "de-DE"}))
	p.typeInto("#promo", "NOPE")
	p.in(chromedp.Click(chromedp.CSS("#apply-promo")))
	p.waitFor("a sentence about the code", `document.querySelector("#promo-status").innerText.trim() !== ""`)
	p.shot("wrong-promo")
	said := p.text("#promo-status")
	if !strings.Contains(said, "NOPE") || !regexp.MustCompile(`\b(Aktion|Gutscheincode|Code)\b`).MatchString(said) {
		t.Errorf("the wrong code reads %q, want a German sentence naming NOPE", said)
	}
	if w := englishWords.FindString(said); w != "" {
		t.Errorf("the wrong code reads %q, with the English %q", said, w)
	}
	for _, m := range p.session(s.ID).Messages {
		if m.Content != "" && strings.Contains(p.text("body"), m.Content) {
			t.Errorf("the widget shows the shop's text for the model: %q", m.Content)
		}
	}
}

// testAddressAsText: a complete address is one or two lines of text with
// Change, in its country's order and the buyer's language; Change opens the
// form with the country chosen from the shop's shipping countries.
func testAddressAsText(t *testing.T, p *page, h loadOptions) {
	s := p.berlinSession()
	defer p.cancel(s.ID)
	p.loadCheckout(s.ID, with(h, loadOptions{Locale: "de-DE", Width: 600}))
	var form bool
	p.eval(`!!document.querySelector("form.form")`, &form)
	if form {
		t.Error("the form shows for a complete address")
	}
	text := p.text("#address-text address")
	if !strings.Contains(text, "Unter den Linden 1") || !strings.Contains(text, "10117 Berlin") || !strings.Contains(text, "Deutschland") {
		t.Errorf("the address reads %q, want the street, 10117 Berlin and Deutschland", text)
	}
	if n := strings.Count(strings.TrimSpace(text), "\n") + 1; n > 2 {
		t.Errorf("the address takes %d lines: %q", n, text)
	}
	if got := p.text("#change-address"); got != "Ändern" {
		t.Errorf("the change button reads %q", got)
	}
	var height float64
	p.eval(`document.documentElement.scrollHeight`, &height)
	if height > 720 {
		t.Errorf("the ready checkout at 600 px is %.0f px tall, want about 700 at most", height)
	}
	p.in(chromedp.Click(chromedp.CSS("#change-address")))
	p.waitFor("the form", `!!document.querySelector("form.form select#addr-country")`)
	p.shot("change")
	var country struct {
		Value   string   `json:"value"`
		Name    string   `json:"name"`
		Options []string `json:"options"`
	}
	p.eval(`(() => { const s = document.querySelector("#addr-country"); return {value: s.value, name: s.selectedOptions[0].text, options: [...s.options].map(o => o.value)}; })()`, &country)
	if country.Value != "DE" || country.Name != "Deutschland" || len(country.Options) != len(s.ShippingCountries) {
		t.Errorf("the country list shows %+v, want DE as Deutschland among the shop's %d shipping countries", country, len(s.ShippingCountries))
	}
	var street string
	p.eval(`document.querySelector("#addr-line_one").value`, &street)
	if street != "Unter den Linden 1" {
		t.Errorf("the form's street is %q, want the address being changed", street)
	}
	p.in(chromedp.Click(chromedp.CSS("#cancel-address")))
	p.waitFor("the text again", `!!document.querySelector("#address-text") && !document.querySelector("form.form")`)
}

// testJapanese: for ja-JP the labels, the buyer's messages and the delivery
// estimates are Japanese.
func testJapanese(t *testing.T, p *page, h loadOptions) {
	var bare checkout.Session
	p.call("create_checkout_session", map[string]any{"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 1}}}, &bare)
	p.loadCheckout(bare.ID, with(h, loadOptions{Locale: "ja-JP"}))
	p.typeInto("#promo", "NOPE")
	p.in(chromedp.Click(chromedp.CSS("#apply-promo")))
	p.waitFor("a sentence about the code", `document.querySelector("#promo-status").innerText.trim() !== ""`)
	p.shot("ja-JP-form")
	var body string
	p.eval(shown, &body)
	for _, want := range []string{"購入手続き", "お届け先", "国", "郵便番号", "NOPE"} {
		if !strings.Contains(body, want) {
			t.Errorf("ja-JP: %q is not shown", want)
		}
	}
	if said := p.text("#promo-status"); !regexp.MustCompile(`[\p{Han}\p{Hiragana}\p{Katakana}]`).MatchString(said) || englishWords.MatchString(said) {
		t.Errorf("ja-JP: the wrong code reads %q", said)
	}

	s := p.berlinSession()
	defer p.cancel(s.ID)
	p.loadCheckout(s.ID, with(h, loadOptions{Locale: "ja-JP"}))
	p.shot("ja-JP-ready")
	estimate := p.text(fmt.Sprintf(`[data-option=%q] .muted`, s.FulfillmentOptionID))
	if !strings.Contains(estimate, "お届け予定") || !regexp.MustCompile(`\(\p{Han}\)`).MatchString(estimate) || englishWords.MatchString(estimate) {
		t.Errorf("ja-JP: the delivery estimate reads %q", estimate)
	}
	p.eval(shown, &body)
	for _, e := range english {
		if strings.Contains(body, e) {
			t.Errorf("ja-JP: the English %q is shown", e)
		}
	}
	if w := englishWords.FindString(body); w != "" {
		t.Errorf("ja-JP: the English %q is shown:\n%s", w, body)
	}
}

// testFullscreenAndBack: Expand asks for fullscreen; in fullscreen the
// button leaves it, and back inline it expands again.
func testFullscreenAndBack(t *testing.T, p *page, h loadOptions) {
	s := p.readySession()
	defer p.cancel(s.ID)
	p.loadCheckout(s.ID, with(h, loadOptions{Fullscreen: true}))
	p.waitFor("Expand", `(document.querySelector("#fullscreen") || {}).innerText === "Expand"`)
	p.in(chromedp.Click(chromedp.CSS("#fullscreen")))
	p.waitFor("Exit fullscreen", `document.querySelector("#fullscreen").innerText === "Exit fullscreen"`)
	p.shot("fullscreen")
	p.in(chromedp.Click(chromedp.CSS("#fullscreen")))
	p.waitFor("Expand again", `document.querySelector("#fullscreen").innerText === "Expand"`)
	modes := p.events("display-mode")
	if len(modes) != 2 || modes[0].Mode != "fullscreen" || modes[1].Mode != "inline" {
		t.Errorf("display-mode requests %+v, want fullscreen then inline", modes)
	}
}

// testScreenshots: the ready checkout (a Berlin address) in en-US, de-DE
// and ja-JP at 360 and 600 px, with the bridge and window.openai, for a
// person to look at; nothing overflows.
func testScreenshots(t *testing.T, p *page) {
	s := p.berlinSession()
	defer p.cancel(s.ID)
	for _, locale := range []string{"en-US", "de-DE", "ja-JP"} {
		for _, width := range []int{360, 600} {
			o := loadOptions{OpenAI: true, Locale: locale, Width: width}
			if locale != "en-US" {
				// Tax included, as in the EU and Japan (docs/messages.md).
				o.Display = &contract.Display{PricesIncludeTax: true, TaxName: contract.TaxVAT}
			}
			p.loadCheckout(s.ID, o)
			p.shot(fmt.Sprintf("%s-%d", locale, width))
			var wide []string
			p.eval(overflow, &wide)
			if len(wide) > 0 {
				t.Errorf("%s at %d px overflows: %v", locale, width, wide)
			}
		}
	}
}

// testRemembered: a linked buyer without a saved address sees "Save to my
// account" ticked (and can untick and tick it: save_address follows); once
// they paid, their next checkout starts with that order's address, shown
// as text with Change, and the choice unticked (they have one now).
func (h linkedHost) testRemembered(t *testing.T, guest *page) {
	p := h.buyerPage(t, guest)
	var s checkout.Session
	p.call("create_checkout_session", map[string]any{
		"items":               []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 1}},
		"fulfillment_address": berlin,
	}, &s)
	if s.SaveAddress == nil || !*s.SaveAddress || s.Status != checkout.Ready {
		t.Fatalf("a new linked buyer's session: %s, save_address %v: %+v", s.Status, s.SaveAddress, s.Messages)
	}
	p.loadCheckout(s.ID, loadOptions{Locale: "de-DE"})
	const box = "#save-address-account"
	p.waitFor("the choice, ticked", `(() => { const b = document.querySelector("`+box+`"); return !!b && b.checked && !b.disabled; })()`)
	p.shot("save-ticked")
	if got := p.text(`label[for="save-address-account"]`); !strings.Contains(got, "In meinem Konto speichern") {
		t.Errorf("the choice reads %q", got)
	}
	for _, want := range []bool{false, true} {
		p.in(chromedp.Click(chromedp.CSS(box)))
		p.waitFor(fmt.Sprintf("the choice %v", want), fmt.Sprintf(`(() => { const b = document.querySelector("%s"); return b.checked === %v && !b.disabled; })()`, box, want))
		if got := p.session(s.ID).SaveAddress; got == nil || *got != want {
			t.Fatalf("after a click the session's save_address is %v, want %v", got, want)
		}
	}

	var paid checkout.Session
	p.call("complete_checkout", map[string]any{"checkout_session_id": s.ID, "payment_data": map[string]any{"token": "pm_card_visa", "provider": "stripe"}}, &paid)
	if paid.Order == nil {
		t.Fatalf("complete_checkout: %s %+v", paid.Status, paid.Messages)
	}

	var next checkout.Session
	p.call("create_checkout_session", map[string]any{"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 1}}}, &next)
	defer p.cancel(next.ID)
	if next.FulfillmentAddress == nil || next.FulfillmentAddress.LineOne != "Unter den Linden 1" {
		t.Fatalf("the next session's address is %+v, want the last order's", next.FulfillmentAddress)
	}
	p.loadCheckout(next.ID, loadOptions{Locale: "de-DE"})
	p.waitFor("the address as text", `!!document.querySelector("#address-text") && !document.querySelector("form.form")`)
	p.shot("remembered")
	if text := p.text("#address-text address"); !strings.Contains(text, "Unter den Linden 1") || !strings.Contains(text, "Deutschland") {
		t.Errorf("the next checkout's address reads %q", text)
	}
	var ticked bool
	p.eval(`document.querySelector("`+box+`").checked`, &ticked)
	if ticked {
		t.Error("Save to my account is ticked for a buyer who has a saved address")
	}
}

// testReceiptRefund: a receipt shows what was refunded, with the amount,
// in the buyer's language, and never the provider's references.
func (h linkedHost) testReceiptRefund(t *testing.T, _ *page) {
	p := openHost(t, h.bctx, h.host+"#subject="+url.QueryEscape("buyer-"+t.Name())) // a buyer of its own
	s := p.berlinSession()
	var paid checkout.Session
	p.call("complete_checkout", map[string]any{"checkout_session_id": s.ID, "payment_data": map[string]any{"token": "pm_card_visa", "provider": "stripe"}}, &paid)
	if paid.Order == nil {
		t.Fatalf("complete_checkout: %s %+v", paid.Status, paid.Messages)
	}
	// A refund of 5.00 the provider made (as refund_order records it).
	now := time.Now().UTC()
	res := openDB(t, h.dsn).Exec(`INSERT INTO refunds (id, order_id, amount, reason, idempotency_key, status, reference, actor, created_at, updated_at)
		VALUES (?, ?, 500, 'damaged', ?, 'succeeded', 're_provider_secret', 'test', ?, ?)`, "rf_"+s.ID, paid.Order.ID, "key_"+s.ID, now, now)
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	if res = openDB(t, h.dsn).Exec(`UPDATE orders SET refunded = 500 WHERE id = ?`, paid.Order.ID); res.Error != nil || res.RowsAffected != 1 {
		t.Fatalf("mark order %s refunded: %v", paid.Order.ID, res.Error)
	}
	p.loadCheckout(s.ID, loadOptions{Locale: "de-DE"})
	p.waitFor("the refund on the receipt", `!!document.querySelector('[data-view="receipt"] #refunds')`)
	p.shot("refunded")
	if got := strings.ReplaceAll(p.text("#refunds"), "\u00a0", " "); !strings.Contains(got, "Erstattet: 5,00 $") {
		t.Errorf("the receipt's refunds read %q, want Erstattet: 5,00 $", got)
	}
	if body := p.text("body"); strings.Contains(body, "re_provider_secret") || strings.Contains(body, "pi_") {
		t.Errorf("the receipt shows a provider's reference:\n%s", body)
	}
}
