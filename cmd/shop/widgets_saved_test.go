package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"shop/checkout"
	"shop/contract"
	"shop/notify/smtptest"
)

// Saved cards in the checkout widget (issue 48): a guest's widget offers
// none; a linked buyer who saved a card on the shop's payment page pays
// their next session with it in the widget, in one tap, in a host without
// a payment sheet. These run as cases of TestWidgets (its shop and browser).

// testSavedCards: a guest's checkout widget offers no saved cards (a
// linked buyer's session lists them in payment_provider.managed_payment_methods,
// shown to that buyer only; see checkout's TestSavedCardRoad), and Pay
// keeps the guest's road.
func testSavedCards(t *testing.T, p *page) {
	s := p.readySession()
	p.loadCheckout(s.ID, loadOptions{})
	var has bool
	p.eval(`!!document.querySelector("#saved-cards")`, &has)
	if has {
		t.Fatal("a guest's widget offers saved cards")
	}
	if got := p.text("#pay-hint"); got == "" {
		t.Error("no payment hint under Pay")
	}
}

// linkedHost is what the cases of a linked buyer need of TestWidgets: its
// browser, the test host of its shop without a payment sheet, that shop
// (its URL and database) and the mailbox its sign-in codes go to.
type linkedHost struct {
	bctx            context.Context
	host, shop, dsn string
	mail            *smtptest.Server
}

func (h linkedHost) cases() []widgetCase {
	return []widgetCase{
		{name: "SavedCardPays", run: h.testSavedCardPays},
		{name: "SavedCardNeedsAuth", run: h.testSavedCardNeedsAuth},
		{name: "Remembered", run: h.testRemembered},
		{name: "ReceiptRefund", run: h.testReceiptRefund},
		{name: "ReceiptReturn", run: h.testReceiptReturn},
	}
}

// savedScopes are what a host asks of a buyer who pays with saved cards:
// the cards (payments) and the sessions they own (account).
const savedScopes = "orders:read account payments"

// buyerPage links a new buyer's account through the shop's OAuth server
// and opens the test host acting for them (their token in its fragment).
func (h linkedHost) buyerPage(t *testing.T, p *page) *page {
	t.Helper()
	token := linkBuyer(t, p.ctx, h.shop, linkedEmail(t), savedScopes, h.mail)
	return openHost(t, h.bctx, h.host+"#bearer="+token)
}

// saveOnPage pays a new session of the buyer on the shop's payment page
// with card and "Save this card for next time" ticked, waits until the page
// shows done (a CSS selector), and answers the card as the buyer's next
// session lists it, the newest.
func (p *page) saveOnPage(card, done string) contract.ManagedPaymentMethod {
	p.t.Helper()
	s := p.readySession()
	if m := s.PaymentProvider.ManagedPaymentMethods; len(m) != 0 {
		p.t.Fatalf("a new buyer's session lists saved cards %+v", m)
	}
	var link checkout.PaymentLink
	p.call("create_payment_link", map[string]any{"checkout_session_id": s.ID}, &link)
	tab := p.openPayTab(link.URL)
	var offered bool
	tab.eval(`!!document.getElementById("save-card")`, &offered)
	if !offered {
		tab.shot("no-save-box")
		p.t.Fatal("the payment page does not offer to save the card: is the session not the linked buyer's?")
	}
	tab.do("tick the save box", chromedp.Click(chromedp.CSS("#save-card")))
	tab.pay(card)
	tab.do("the page after paying", chromedp.WaitVisible(chromedp.CSS(done)))
	tab.shot("saved")
	m := p.readySession().PaymentProvider.ManagedPaymentMethods
	if len(m) == 0 {
		p.t.Fatalf("after saving %s on the page the next session lists no saved card", card)
	}
	return m[0]
}

// savedRadio is the CSS selector of the widget's choice of a saved card.
func savedRadio(id string) string {
	return fmt.Sprintf(`#saved-cards input[name="saved-card"][value=%q]`, id)
}

// completions are the widget's complete_checkout calls for session id,
// with the token each paid with.
func (p *page) completions(id string) []string {
	p.t.Helper()
	var tokens []string
	for _, c := range p.events("tools/call") {
		var args struct {
			ID      string `json:"checkout_session_id"`
			Payment struct {
				Token string `json:"token"`
			} `json:"payment_data"`
		}
		if err := json.Unmarshal(c.Arguments, &args); err == nil && c.Name == "complete_checkout" && args.ID == id {
			tokens = append(tokens, args.Payment.Token)
		}
	}
	return tokens
}

// countRows answers a count of the shop's database at dsn.
func countRows(t *testing.T, dsn, query string, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	db := openDB(t, dsn)
	var n int64
	if err := db.WithContext(ctx).Raw(query, args...).Scan(&n).Error; err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// testSavedCardPays: a linked buyer saves a card on the payment page; in
// a host without a payment sheet, the widget of their next session offers
// it above Pay (brand, last four); chosen, Pay charges it through
// complete_checkout with its id, with no sheet and no page, and the widget
// shows the receipt of the session's one order. The same buyer's session,
// rendered by a guest's host, offers no saved card.
func (h linkedHost) testSavedCardPays(t *testing.T, p *page) {
	lp := h.buyerPage(t, p)
	card := lp.saveOnPage("pm_card_visa", "#return-note")
	if card.Type != "card" || card.DisplayBrand != "visa" || card.DisplayLast4 != "4242" || !strings.HasPrefix(card.ID, "pm_") {
		t.Fatalf("the saved card is %+v, want the visa ending 4242", card)
	}

	s := lp.readySession()
	lp.loadCheckout(s.ID, loadOptions{OpenAI: true})
	lp.waitFor("the saved card", fmt.Sprintf(`!!document.querySelector(%q)`, savedRadio(card.ID)))
	lp.shot("saved-card")
	lp.named("the checkout with a saved card")
	shown := lp.text(fmt.Sprintf(`#saved-cards label:has(input[value=%q])`, card.ID))
	if !strings.Contains(shown, "Visa") || !strings.Contains(shown, "4242") {
		t.Errorf("the saved card shows %q, want its brand and last four", shown)
	}
	// The buyer picks a new card, then the saved one again.
	lp.in(chromedp.Click(chromedp.CSS(savedRadio(""))))
	lp.waitFor("the new card's hint", `!document.querySelector("#pay-hint").innerText.includes("4242")`)
	lp.in(chromedp.Click(chromedp.CSS(savedRadio(card.ID))))
	lp.waitFor("the saved card's hint", `document.querySelector("#pay-hint").innerText.includes("4242")`)

	lp.pressPay()
	lp.receipt(s.ID, "with the saved card")
	if paid := lp.completions(s.ID); len(paid) != 1 || paid[0] != card.ID {
		t.Errorf("complete_checkout paid with %q, want once with the saved card %s", paid, card.ID)
	}
	if sheets, links := lp.events("checkout"), lp.events("open-link"); len(sheets) != 0 || len(links) != 0 {
		t.Errorf("paying with a saved card asked for the sheet %+v and opened %+v, want neither", sheets, links)
	}
	if n := countRows(t, h.dsn, "SELECT COUNT(*) FROM orders WHERE checkout_session_id = ?", s.ID); n != 1 {
		t.Errorf("the session has %d orders, want 1", n)
	}
	if n := countRows(t, h.dsn, "SELECT COUNT(*) FROM payment_attempts WHERE session_id = ?", s.ID); n != 1 {
		t.Errorf("the session has %d payment attempts, want 1", n)
	}

	// A guest's host rendering the buyer's next session offers no saved card.
	next := lp.readySession()
	if m := p.session(next.ID).PaymentProvider.ManagedPaymentMethods; len(m) != 0 {
		t.Errorf("a guest reading a linked buyer's session sees saved cards %+v", m)
	}
	p.loadCheckout(next.ID, loadOptions{OpenAI: true})
	var has bool
	p.eval(`!!document.querySelector("#saved-cards")`, &has)
	if has {
		t.Error("a guest's widget offers the linked buyer's saved cards")
	}
}

// testSavedCardNeedsAuth: a saved card whose bank wants the buyer to
// confirm (pm_card_authenticationRequired, charged off-session) charges
// nothing; the widget says so and offers the payment page, which opens
// and pays: no dead end.
func (h linkedHost) testSavedCardNeedsAuth(t *testing.T, p *page) {
	lp := h.buyerPage(t, p)
	card := lp.saveOnPage("pm_card_authenticationRequired", "#pay-error")
	s := lp.readySession()
	lp.loadCheckout(s.ID, loadOptions{OpenAI: true})
	var chosen bool
	lp.eval(fmt.Sprintf(`!!document.querySelector(%q) && document.querySelector(%q).checked`, savedRadio(card.ID), savedRadio(card.ID)), &chosen)
	if !chosen {
		t.Fatalf("the widget does not offer the saved card %s, chosen", card.ID)
	}
	lp.pressPay()
	lp.waitFor("the bank's request", `document.querySelector("#pay-failed") && document.querySelector("#pay-page") && !document.querySelector("#pay-page").disabled`)
	lp.shot("needs-auth")
	if got := lp.text("#pay-failed"); !strings.Contains(got, "Your bank wants you to confirm this payment") {
		t.Errorf("the widget says %q", got)
	}
	var twice bool
	lp.eval(`!!document.querySelector("#pay-error")`, &twice)
	if twice {
		t.Errorf("the widget says the bank's request twice, in its note and in an alert: %q", lp.text("#pay-error"))
	}
	if hint := lp.text("#pay-hint"); !strings.Contains(hint, "payment page") {
		t.Errorf("under the offer of the payment page the hint says %q", hint)
	}
	got := lp.session(s.ID)
	needs := false
	for _, m := range got.Messages {
		needs = needs || m.Code == "requires_3ds"
	}
	if got.Status != checkout.Ready || got.Order != nil || !needs {
		t.Fatalf("after the bank's request the session is %s, order %v, messages %+v; want ready with requires_3ds", got.Status, got.Order, got.Messages)
	}
	if paid := lp.completions(s.ID); len(paid) != 1 || paid[0] != card.ID {
		t.Errorf("complete_checkout paid with %q, want once with the saved card %s", paid, card.ID)
	}

	lp.in(chromedp.Click(chromedp.CSS("#pay-page")))
	lp.waitEvent("open-link")
	links := lp.events("open-link")
	if len(links) != 1 || !strings.Contains(links[0].URL, "/pay/"+s.ID) {
		t.Fatalf("open-link %+v, want the payment page of %s", links, s.ID)
	}
	tab := lp.openPayTab(links[0].URL)
	tab.pay("pm_card_visa")
	tab.do("the receipt page", chromedp.WaitVisible(chromedp.CSS("#return-note")))
	lp.waitFor("the receipt in the widget", `document.querySelector('[data-view="receipt"]')`)
	if sheets := lp.events("checkout"); len(sheets) != 0 {
		t.Errorf("requestCheckout was called: %+v", sheets)
	}
	if n := countRows(t, h.dsn, "SELECT COUNT(*) FROM orders WHERE checkout_session_id = ?", s.ID); n != 1 {
		t.Errorf("the session has %d orders, want 1", n)
	}
}
