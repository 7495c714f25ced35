package orders_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/orders"
)

// attemptShown is what get_order shows of a payment attempt, ids aside.
type attemptShown struct {
	Attempt                             int
	Status, DeclineCode, Provider, Mode string
	CardBrand, CardLast4                string
	Reference                           bool
}

// TestGetOrderShowsCards: get_order lists every payment attempt of the
// order's session, a decline before the payment that made it among them,
// each with the card's brand and last four as Stripe (played by the
// emulator, through stripe-go) said them, in its structured content and its
// text, and never a payment token.
func TestGetOrderShowsCards(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := newStripeShop(t, db)
		cs, err := s.co.Create(ctx, checkout.Request{
			Items:   &[]checkout.Item{{ID: "enamel-camp-mug-cream", Quantity: 1}},
			Address: &checkout.Address{Name: "Ada", LineOne: "1 Market St", City: "San Francisco", State: "CA", Country: "US", PostalCode: "94105"},
			Buyer:   &checkout.Buyer{Email: "ada@example.com"},
		})
		if err != nil {
			t.Fatal(err)
		}
		var done *checkout.Session
		for _, tok := range []string{"pm_card_chargeDeclinedInsufficientFunds", "pm_card_amex"} {
			done, err = s.co.Complete(ctx, checkout.CompleteRequest{SessionID: cs.ID, Payment: checkout.PaymentData{Token: tok, Provider: "stripe"}})
			if tok == "pm_card_amex" && (err != nil || done.Order == nil) {
				t.Fatalf("pay: %v %+v", err, done)
			}
		}
		res := getOrder(t, s.staffShop, done.Order.ID)
		detail := res.Structured.(orders.OrderDetailResult).Order
		var got []attemptShown
		for _, a := range detail.PaymentAttempts {
			got = append(got, attemptShown{Attempt: a.Attempt, Status: a.Status, DeclineCode: a.DeclineCode, Provider: a.Provider, Mode: a.Mode,
				CardBrand: a.CardBrand, CardLast4: a.CardLast4, Reference: strings.HasPrefix(a.Reference, "pi_")})
			if a.Amount.Amount != paid(done.Order) {
				t.Errorf("attempt %d of %s, want %d", a.Attempt, a.Amount.Display, paid(done.Order))
			}
		}
		want := []attemptShown{
			{Attempt: 1, Status: "declined", DeclineCode: "insufficient_funds", Provider: "stripe", Mode: "test", CardBrand: "visa", CardLast4: "9995", Reference: true},
			{Attempt: 2, Status: "succeeded", Provider: "stripe", Mode: "test", CardBrand: "amex", CardLast4: "8431", Reference: true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("payment attempts (-want +got):\n%s", diff)
		}
		if detail.PaymentAttempts[1].Reference != done.Order.Receipt.Payment.Reference {
			t.Errorf("the paid attempt's reference %s, the receipt's %s", detail.PaymentAttempts[1].Reference, done.Order.Receipt.Payment.Reference)
		}
		for _, line := range []string{"Payment attempt 1 declined (insufficient_funds): ", " with visa •••• 9995 (stripe test pi_",
			"Payment attempt 2 succeeded: ", " with amex •••• 8431 (stripe test " + done.Order.Receipt.Payment.Reference + ")."} {
			if !strings.Contains(res.Text, line) {
				t.Errorf("text lacks %q:\n%s", line, res.Text)
			}
		}
		raw, _ := json.Marshal(res.Structured)
		for _, secret := range []string{"pm_card_", "token", "idempotency"} {
			if strings.Contains(string(raw)+res.Text, secret) {
				t.Errorf("get_order shows %q: %s", secret, raw)
			}
		}
		// The buyer's receipt says nothing of the card.
		if b, _ := json.Marshal(done.Order.Receipt); strings.Contains(string(b), "8431") || strings.Contains(string(b), "amex") {
			t.Errorf("the receipt shows the card: %s", b)
		}
	})
}

// getOrder runs the staff's get_order as a viewer.
func getOrder(t *testing.T, s *staffShop, orderID string) *shop.Result {
	t.Helper()
	for _, tl := range s.admin.Tools() {
		if tl.Name == "get_order" {
			raw, _ := json.Marshal(map[string]string{"order_id": orderID})
			res, err := tl.Handle(shop.WithActor(context.Background(), viewer), raw)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
	}
	t.Fatal("no get_order")
	return nil
}
