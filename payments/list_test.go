package payments_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// lister is a provider as the reconciler's search for payments without an
// attempt sees it.
type lister interface {
	Charge(ctx context.Context, r payments.Request) (*payments.Result, error)
	Refund(ctx context.Context, r payments.RefundRequest) (*payments.Refund, error)
	Payments(ctx context.Context, since time.Time) ([]payments.Result, error)
}

// TestPayments: Stripe (the emulator, through its search, past a page of
// 100) and the sandbox list the shop's succeeded charges since a time, each
// with its amount, metadata and refunds, and leave out declines and payments
// made before the time.
func TestPayments(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		clk := time.Now().UTC()
		srv := stripetest.New(t)
		for name, p := range map[string]lister{
			"stripe":  srv.Stripe(payments.StripeOptions{Retries: -1}),
			"sandbox": payments.NewSandbox(db, &payments.SandboxOptions{Now: func() time.Time { return clk }}),
		} {
			t.Run(name, func(t *testing.T) {
				charge := func(key, token string, amount int64) *payments.Result {
					t.Helper()
					res, err := p.Charge(ctx, payments.Request{Amount: amount, Currency: "usd", Token: token, IdempotencyKey: key,
						Metadata: map[string]string{"checkout_session_id": "cs_" + key}})
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				since := time.Now().Add(-time.Minute)
				for i := range 101 {
					charge(fmt.Sprintf("k_%d", i), "pm_card_visa", int64(100+i))
				}
				charge("k_declined", "pm_card_visa_chargeDeclined", 500)
				refunded := charge("k_refunded", "pm_card_mastercard", 700)
				if _, err := p.Refund(ctx, payments.RefundRequest{Reference: refunded.Reference, Amount: 700, IdempotencyKey: "r_1"}); err != nil {
					t.Fatal(err)
				}
				got, err := p.Payments(ctx, since)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 102 {
					t.Fatalf("%d payments, want 102 (101 and the refunded one)", len(got))
				}
				byKey := map[string]payments.Result{}
				for _, r := range got {
					if r.Status != payments.Succeeded || r.Metadata[payments.ChargedBy] != payments.ChargedByShop {
						t.Errorf("listed %+v", r)
					}
					byKey[r.Metadata["idempotency_key"]] = r
				}
				if r := byKey["k_7"]; r.Amount != 107 || r.Currency != "usd" || r.Refunded != 0 || r.Metadata["checkout_session_id"] != "cs_k_7" {
					t.Errorf("k_7: %+v", r)
				}
				if r := byKey["k_refunded"]; r.Reference != refunded.Reference || r.Refunded != 700 || r.CardLast4 != "4444" {
					t.Errorf("refunded: %+v", r)
				}
				if _, ok := byKey["k_declined"]; ok {
					t.Error("a decline listed")
				}
				if later, err := p.Payments(ctx, time.Now().Add(time.Hour)); err != nil || len(later) != 0 {
					t.Errorf("since an hour ahead: %d, %v", len(later), err)
				}
			})
		}
	})
}
