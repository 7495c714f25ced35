package payments_test

import (
	"context"
	"strings"
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
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(payments.Result{}, "Reference", "Metadata")); diff != "" {
					t.Errorf("sandbox (-Stripe +sandbox):\n%s", diff)
				}
				if got.Status != c.Outcome || got.CardLast4 != c.Last4 {
					t.Errorf("sandbox: %s ending %s, want %s ending %s as TestCards says", got.Status, got.CardLast4, c.Outcome, c.Last4)
				}
			})
		}
	})
}

// TestTestMethods: a method and a brand per test card, in the table's order.
func TestTestMethods(t *testing.T) {
	methods, brands := payments.TestMethods()
	if len(methods) != len(payments.TestCards) || len(brands) != len(payments.TestCards) {
		t.Fatalf("%d methods, %d brands for %d cards", len(methods), len(brands), len(payments.TestCards))
	}
	for i, c := range payments.TestCards {
		if methods[i] != c.Method || brands[i] != c.Brand {
			t.Errorf("%d: %s %s, want %s %s", i, methods[i], brands[i], c.Method, c.Brand)
		}
	}
}

// TestCheckSPT: the shared payment token settings are empty or shaped as
// Stripe's; a refusal names the variable and what to send.
func TestCheckSPT(t *testing.T) {
	for _, tc := range []struct{ param, version, err string }{
		{"", "", ""},
		{payments.DefaultSPTParam, payments.DefaultSPTVersion, ""},
		{"payment_method_data[shared_payment_token]", "2026-09-30", ""},
		{"payment_method_data[token", "", "STRIPE_SPT_PARAM"},
		{"", "latest", "STRIPE_SPT_VERSION"},
	} {
		err := payments.CheckSPT(tc.param, tc.version)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q %q: %v", tc.param, tc.version, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "send")):
			t.Errorf("%q %q: %v, want a refusal naming %s", tc.param, tc.version, err, tc.err)
		}
	}
}
