package main

import (
	"net/url"
	"strings"
	"testing"

	"shop/checkout"
	"shop/money"
)

// testReceiptReturn: a return the buyer asked for with the real
// request_return tool, after staff shipped the order (fulfill_order on the
// admin endpoint), shows on the checkout widget's receipt with its status
// and refund amount in the buyer's language (de-DE).
func (h linkedHost) testReceiptReturn(t *testing.T, _ *page) {
	p := openHost(t, h.bctx, h.host+"#subject="+url.QueryEscape("buyer-"+t.Name())) // a buyer of its own
	s := p.berlinSession()
	var paid checkout.Session
	p.call("complete_checkout", map[string]any{"checkout_session_id": s.ID, "payment_data": map[string]any{"token": "pm_card_visa", "provider": "stripe"}}, &paid)
	if paid.Order == nil || len(paid.Order.Receipt.LineItems) == 0 {
		t.Fatalf("complete_checkout: %s %+v", paid.Status, paid.Messages)
	}
	admin := connectAdmin(t, h.shop, ownerToken)
	if res := call(t, admin, "fulfill_order", map[string]any{"order_id": paid.Order.ID, "carrier": "DHL", "tracking_number": "00340434"}); res.IsError {
		t.Fatalf("fulfill_order: %s", resultText(res))
	}
	var asked struct {
		Return struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			RefundAmount int64  `json:"refund_amount"`
		} `json:"return"`
	}
	p.call("request_return", map[string]any{"order_id": paid.Order.ID, "email": "erika@example.com", "reason": "damaged",
		"lines": []map[string]any{{"line_item_id": paid.Order.Receipt.LineItems[0].ID, "quantity": 1}}}, &asked)
	r := asked.Return
	if r.ID == "" || r.Status != "requested" || r.RefundAmount <= 0 {
		t.Fatalf("request_return answered %+v", asked)
	}
	p.loadCheckout(s.ID, loadOptions{Locale: "de-DE"})
	p.waitFor("the return on the receipt", `!!document.querySelector('[data-view="returns"]')`)
	p.shot("return")
	usd, err := money.Lookup("usd")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(p.text(`[data-view="returns"]`), "\u00a0", " ")
	amount := strings.ReplaceAll(usd.FormatIn("de-DE", r.RefundAmount), "\u00a0", " ")
	for _, want := range []string{"Rücksendungen", "Rücksendung " + r.ID, "angemeldet, Paket erwartet", "Erstattung " + amount} {
		if !strings.Contains(got, want) {
			t.Errorf("the receipt's returns read %q, want %q in it", got, want)
		}
	}
}
