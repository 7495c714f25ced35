package payments_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gorm.io/gorm"

	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// TestSandboxAnswersAsStripe: for every test card of payments.TestCards the
// sandbox answers what payments.Stripe makes of the Stripe emulator's
// answer (status, message, card), but for the decline code of a generic
// decline, which the sandbox records as card_declined where Stripe says
// generic_decline.
func TestSandboxAnswersAsStripe(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sb := payments.NewSandbox(db, nil)
		st := stripetest.New(t).Stripe(payments.StripeOptions{})
		for _, c := range payments.TestCards {
			t.Run(c.Method, func(t *testing.T) {
				want, err := st.Charge(ctx, charge(c.Method, "key_stripe_"+c.Method))
				if err != nil {
					t.Fatalf("Stripe: %v", err)
				}
				got, err := sb.Charge(ctx, charge(c.Method, "key_sandbox_"+c.Method))
				if err != nil {
					t.Fatalf("sandbox: %v", err)
				}
				if want.DeclineCode == "generic_decline" {
					want.DeclineCode = "card_declined"
				}
				want.Simulated = true
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(payments.Result{}, "Reference")); diff != "" {
					t.Errorf("sandbox (-Stripe +sandbox):\n%s", diff)
				}
				if got.Status != c.Outcome || got.CardLast4 != c.Last4 {
					t.Errorf("sandbox: %s ending %s, want %s ending %s as TestCards says", got.Status, got.CardLast4, c.Outcome, c.Last4)
				}
			})
		}
	})
}
