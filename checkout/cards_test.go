package checkout_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/checkout"
	"shop/database/dbtest"
)

// attemptCard is what a payment attempt keeps of its payment.
type attemptCard struct {
	Status, Token, Reference, CardBrand, CardLast4 string
}

// attemptCards are the statuses, tokens, references and cards of a
// session's payment attempts, oldest first.
func attemptCards(t *testing.T, db *gorm.DB, sessionID string) []attemptCard {
	t.Helper()
	var rows []attemptCard
	err := db.Raw("SELECT status, token, reference, card_brand, card_last4 FROM payment_attempts WHERE session_id = ? ORDER BY attempt", sessionID).Scan(&rows).Error
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if rows[i].Reference != "" {
			rows[i].Reference = "pi_…"
		}
	}
	return rows
}

// TestCardKeptOnSettle: an attempt settled keeps the card's brand and last
// four digits in place of its token, whether it was declined, needs 3D
// Secure or paid, and whether the caller or the reconciler settled it; an
// attempt that charged nothing keeps no card.
func TestCardKeptOnSettle(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		for _, tok := range []string{"pm_card_chargeDeclinedInsufficientFunds", "pm_card_authenticationRequired", "pm_card_made_up_by_buyer", "pm_card_visa"} {
			if _, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay(tok)}); err != nil && tok != "pm_card_made_up_by_buyer" {
				t.Fatalf("%s: %v", tok, err)
			}
		}
		want := []attemptCard{
			{Status: "declined", Reference: "pi_…", CardBrand: "visa", CardLast4: "9995"},
			{Status: "requires_action", Reference: "pi_…", CardBrand: "visa", CardLast4: "3184"},
			{Status: "failed"},
			{Status: "succeeded", Reference: "pi_…", CardBrand: "visa", CardLast4: "4242"},
		}
		if diff := cmp.Diff(want, attemptCards(t, db, s.ID)); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}

		// An answer lost: the reconciler settles the attempt with the card
		// the provider's record of the charge says.
		lost := &lostAnswer{charge: true}
		q := payingShop(t, db, lost)
		lost.Sandbox = q.sandbox
		s2 := q.ready(t)
		if got, err := q.co.Complete(ctx, checkout.CompleteRequest{SessionID: s2.ID, Payment: pay("pm_card_mastercard")}); err != nil || got.Status != checkout.InProgress {
			t.Fatalf("answer lost: %v %+v", err, got)
		}
		q.clk.Add(2 * time.Second)
		if n, err := q.co.Reconcile(ctx); err != nil || n != 1 {
			t.Fatalf("reconcile: %d %v", n, err)
		}
		want = []attemptCard{{Status: "succeeded", Reference: "pi_…", CardBrand: "mastercard", CardLast4: "4444"}}
		if diff := cmp.Diff(want, attemptCards(t, db, s2.ID)); diff != "" {
			t.Errorf("attempts after reconcile (-want +got):\n%s", diff)
		}
	})
}

// TestCardKeptStripe: through Stripe (the emulator, with stripe-go), a
// decline and a payment keep the card Stripe's expanded charge says, and so
// does a hosted page's payment, from the Checkout Session's PaymentIntent.
func TestCardKeptStripe(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newHostedShop(t, db)
		s := h.ready(t)
		for _, tok := range []string{"pm_card_visa_chargeDeclined", "pm_card_mastercard"} {
			if _, err := h.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay(tok)}); err != nil {
				t.Fatalf("%s: %v", tok, err)
			}
		}
		want := []attemptCard{
			{Status: "declined", Reference: "pi_…", CardBrand: "visa", CardLast4: "0002"},
			{Status: "succeeded", Reference: "pi_…", CardBrand: "mastercard", CardLast4: "4444"},
		}
		if diff := cmp.Diff(want, attemptCards(t, db, s.ID)); diff != "" {
			t.Errorf("attempts (-want +got):\n%s", diff)
		}

		s2 := h.ready(t)
		_, page := h.page(t, s2)
		h.stripe.Pay(page) // with 4242 4242 4242 4242
		if err := h.co.SettleHosted(ctx, page); err != nil {
			t.Fatal(err)
		}
		want = []attemptCard{{Status: "succeeded", Reference: "pi_…", CardBrand: "visa", CardLast4: "4242"}}
		if diff := cmp.Diff(want, attemptCards(t, db, s2.ID)); diff != "" {
			t.Errorf("hosted page's attempts (-want +got):\n%s", diff)
		}
	})
}
