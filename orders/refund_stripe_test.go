package orders_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database/dbtest"
	"shop/orders"
	"shop/payments"
	"shop/payments/stripetest"
)

// stripeShop is the demo shop charging and refunding through the Stripe
// provider (stripe-go), against the Stripe emulator.
type stripeShop struct {
	*staffShop
	stripe *stripetest.Server
}

func newStripeShop(t *testing.T, db *gorm.DB) *stripeShop {
	t.Helper()
	srv := stripetest.New(t)
	st := srv.Stripe(payments.StripeOptions{}) // 3 retries, 1ms apart
	return &stripeShop{staffShop: newStaffShopWith(t, db, st, st), stripe: srv}
}

// intent is the emulator's PaymentIntent of an order, checked against it.
func (s *stripeShop) intent(t *testing.T, ord *contract.Order) stripetest.PaymentIntent {
	t.Helper()
	for _, pi := range s.stripe.PaymentIntents() {
		if pi.ID == ord.Receipt.Payment.Reference {
			if pi.Status != "succeeded" || pi.Amount != paid(ord) {
				t.Fatalf("payment intent %+v for order %d of %d", pi, ord.Number, paid(ord))
			}
			return pi
		}
	}
	t.Fatalf("the emulator has no payment intent %q for order %d", ord.Receipt.Payment.Reference, ord.Number)
	return stripetest.PaymentIntent{}
}

// refundCalls are the emulator's POST /v1/refunds for a PaymentIntent.
func (s *stripeShop) refundCalls(pi string) []stripetest.Request {
	var out []stripetest.Request
	for _, r := range s.stripe.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/refunds" && r.Form.Get("payment_intent") == pi {
			out = append(out, r)
		}
	}
	return out
}

// madeRefunds are the emulator's refunds of a PaymentIntent.
func (s *stripeShop) madeRefunds(pi string) []stripetest.Refund {
	var out []stripetest.Refund
	for _, re := range s.stripe.Refunds() {
		if re.PaymentIntent == pi {
			out = append(out, re)
		}
	}
	return out
}

// shopRefund is a row of refunds, as the shop recorded it.
type shopRefund struct {
	ID, IdempotencyKey, Status, Reference string
	Amount                                int64
}

func shopRefunds(t *testing.T, db *gorm.DB, orderID string) []shopRefund {
	t.Helper()
	var out []shopRefund
	if err := db.Raw("SELECT id, idempotency_key, status, reference, amount FROM refunds WHERE order_id = ? ORDER BY created_at, id", orderID).Scan(&out).Error; err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStripeRefunds runs refund_order and cancel_order against the Stripe
// provider: Stripe sees each refund once, of the right amount, on the
// order's PaymentIntent, under the key the shop recorded for it (distinct
// per refund, the same on every try), and the shop settles what Stripe did.
func TestStripeRefunds(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStripeShop(t, db)

		t.Run("PartialThenTheRest", func(t *testing.T) {
			ord := s.order(t, 2)
			total := paid(ord)
			pi := s.intent(t, ord)
			if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": 500, "reason": "a chipped mug"}); err != nil {
				t.Fatal(err)
			}
			s.advance(time.Second) // so that the shop's rows sort as they were made
			if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "reason": "requested_by_customer"}); err != nil {
				t.Fatal(err)
			}
			recorded := shopRefunds(t, db, ord.ID)
			made := s.madeRefunds(pi.ID)
			calls := s.refundCalls(pi.ID)
			if len(recorded) != 2 || len(made) != 2 || len(calls) != 2 {
				t.Fatalf("%d refunds recorded, %d made by Stripe in %d calls; want 2 of each", len(recorded), len(made), len(calls))
			}
			wantAmounts := []int64{500, total - 500}
			for i, r := range recorded {
				if r.Amount != wantAmounts[i] || r.Status != "succeeded" || r.Reference != made[i].ID || made[i].Amount != wantAmounts[i] {
					t.Errorf("refund %d: recorded %+v, Stripe made %+v; want %d succeeded", i+1, r, made[i], wantAmounts[i])
				}
				if calls[i].IdempotencyKey == "" || calls[i].IdempotencyKey != r.IdempotencyKey || calls[i].Form.Get("amount") != strconv.FormatInt(wantAmounts[i], 10) {
					t.Errorf("refund %d: Stripe got key %q amount %s; the shop recorded key %q", i+1, calls[i].IdempotencyKey, calls[i].Form.Get("amount"), r.IdempotencyKey)
				}
			}
			if recorded[0].IdempotencyKey == recorded[1].IdempotencyKey {
				t.Errorf("two refunds under one idempotency key %q", recorded[0].IdempotencyKey)
			}
			// Stripe's reasons: free text as requested_by_customer with the
			// text in metadata; one of Stripe's as it is.
			if made[0].Reason != "requested_by_customer" || made[0].Metadata["reason"] != "a chipped mug" || made[1].Reason != "requested_by_customer" {
				t.Errorf("reasons %q %v, %q", made[0].Reason, made[0].Metadata, made[1].Reason)
			}
			if pi := s.intent(t, ord); pi.AmountRefunded != total {
				t.Errorf("Stripe refunded %d of %d", pi.AmountRefunded, total)
			}
			if st := s.status(t, ord.ID); st != orders.StatusRefunded {
				t.Errorf("order %s, want refunded", st)
			}
			// Nothing is left: the shop refuses without asking Stripe.
			if _, err := s.call(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": 1, "reason": "more"}); code(err) != shop.Invalid {
				t.Errorf("a cent more: %v", err)
			}
			if n := len(s.refundCalls(pi.ID)); n != 2 {
				t.Errorf("%d refund calls to Stripe, want 2", n)
			}
		})

		t.Run("CancelRetriedAfter500", func(t *testing.T) {
			before := stockOf(t, db, "enamel-camp-mug-cream")
			ord := s.order(t, 3)
			total := paid(ord)
			pi := s.intent(t, ord)
			args := map[string]any{"order_id": ord.ID, "reason": "buyer asked"}
			prev, err := s.call(t, owner, "cancel_order", args)
			if err != nil {
				t.Fatal(err)
			}
			s.stripe.FailNext(1, http.StatusInternalServerError)
			args["confirm"] = prev["confirm"]
			if _, err := s.call(t, owner, "cancel_order", args); err != nil {
				t.Fatalf("cancel with Stripe failing once: %v", err)
			}
			calls := s.refundCalls(pi.ID)
			if len(calls) != 2 || calls[0].Status != 500 || calls[1].Status != 200 || calls[0].IdempotencyKey != calls[1].IdempotencyKey ||
				calls[0].Form.Encode() != calls[1].Form.Encode() {
				t.Fatalf("refund calls %+v; want a 500 then a 200, the same request under the same key", calls)
			}
			recorded := shopRefunds(t, db, ord.ID)
			made := s.madeRefunds(pi.ID)
			if len(recorded) != 1 || len(made) != 1 || made[0].Amount != total || recorded[0].Amount != total ||
				recorded[0].Status != "succeeded" || recorded[0].Reference != made[0].ID || recorded[0].IdempotencyKey != calls[0].IdempotencyKey {
				t.Errorf("recorded %+v, Stripe made %+v; want one refund of %d", recorded, made, total)
			}
			if st := s.status(t, ord.ID); st != orders.StatusCanceled {
				t.Errorf("order %s, want canceled", st)
			}
			if got := stockOf(t, db, "enamel-camp-mug-cream"); got != before {
				t.Errorf("stock %d, want %d: every unit back", got, before)
			}
		})

		t.Run("DroppedThenReconciled", func(t *testing.T) {
			ord := s.order(t, 2)
			total := paid(ord)
			pi := s.intent(t, ord)
			before := stockOf(t, db, "enamel-camp-mug-cream")
			args := map[string]any{"order_id": ord.ID, "amount": total - 100, "reason": "damaged",
				"restock": []map[string]any{{"line_id": ord.Receipt.LineItems[0].ID, "quantity": 2}}}
			prev, err := s.call(t, owner, "refund_order", args)
			if err != nil {
				t.Fatal(err)
			}
			s.stripe.FailNext(4, http.StatusInternalServerError) // every try
			args["confirm"] = prev["confirm"]
			if _, err := s.call(t, owner, "refund_order", args); code(err) != shop.Unavailable {
				t.Fatalf("refund with Stripe down: %v, want unavailable", err)
			}
			calls := s.refundCalls(pi.ID)
			recorded := shopRefunds(t, db, ord.ID)
			if len(calls) != 4 || len(s.madeRefunds(pi.ID)) != 0 || len(recorded) != 1 || recorded[0].Status != "pending" {
				t.Fatalf("%d calls, %d refunds made, recorded %+v; want 4 failed tries and a pending refund", len(calls), len(s.madeRefunds(pi.ID)), recorded)
			}
			for _, c := range calls {
				if c.Status != 500 || c.IdempotencyKey != recorded[0].IdempotencyKey {
					t.Errorf("try %+v; want a 500 under key %s", c, recorded[0].IdempotencyKey)
				}
			}
			// Reserved: no second refund can take the amount meanwhile.
			if _, err := s.call(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": 101, "reason": "more"}); code(err) != shop.Invalid {
				t.Errorf("refunding past the reserved amount: %v", err)
			}
			if got := stockOf(t, db, "enamel-camp-mug-cream"); got != before {
				t.Errorf("stock %d before the refund settled, want %d", got, before)
			}

			s.advance(2 * time.Minute)
			if n, err := s.admin.ReconcileRefunds(context.Background(), time.Minute); err != nil || n != 1 {
				t.Fatalf("reconciled %d (%v), want 1", n, err)
			}
			calls = s.refundCalls(pi.ID)
			made := s.madeRefunds(pi.ID)
			recorded = shopRefunds(t, db, ord.ID)
			if len(calls) != 5 || calls[4].Status != 200 || calls[4].IdempotencyKey != recorded[0].IdempotencyKey {
				t.Errorf("calls after the reconciler %+v; want a fifth, answered, under the same key", calls)
			}
			if len(made) != 1 || made[0].Amount != total-100 || recorded[0].Status != "succeeded" || recorded[0].Reference != made[0].ID {
				t.Errorf("Stripe made %+v, recorded %+v; want one refund of %d, succeeded", made, recorded, total-100)
			}
			if got := stockOf(t, db, "enamel-camp-mug-cream"); got != before+2 {
				t.Errorf("stock %d after the refund settled, want %d", got, before+2)
			}
			if n, err := s.admin.ReconcileRefunds(context.Background(), time.Minute); err != nil || n != 0 {
				t.Errorf("a second run settled %d (%v)", n, err)
			}
			if n := len(s.refundCalls(pi.ID)); n != 5 {
				t.Errorf("%d refund calls after a second run, want 5", n)
			}
		})

		// Every refund the shop recorded has a key of its own.
		var keys []string
		if err := db.Raw("SELECT idempotency_key FROM refunds").Scan(&keys).Error; err != nil {
			t.Fatal(err)
		}
		slices.Sort(keys)
		if len(keys) != 4 || len(slices.Compact(keys)) != 4 {
			t.Errorf("idempotency keys %v; want 4 distinct", keys)
		}
	})
}
