package checkout_test

import (
	"context"
	"sync"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// lostCharge charges a session's total through prov as the shop's attempt
// under key would have, and returns the charge: a payment whose attempt the
// shop no longer has.
func lostCharge(t *testing.T, prov checkout.Charger, s *checkout.Session, key, token string) *payments.Result {
	t.Helper()
	res, err := prov.Charge(context.Background(), payments.Request{
		Amount: total(s), Currency: s.Currency, Token: token, IdempotencyKey: key,
		Metadata: map[string]string{"checkout_session_id": s.ID},
	})
	if err != nil || res.Status != payments.Succeeded {
		t.Fatalf("charge: %v %+v", err, res)
	}
	return res
}

// TestScanPaymentsWithoutAttempt: the reconciler's search of the provider's
// payments settles a succeeded payment the shop has no attempt for. On a
// session still payable at its amount it becomes the order (its reference
// the payment's); on a session another payment completed it is refunded in
// full, with a surplus payment and an audit event naming the order. A
// second search changes nothing. Against the Stripe emulator and the
// sandbox, on SQLite and PostgreSQL.
func TestScanPaymentsWithoutAttempt(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := stripetest.New(t)
		for name, prov := range map[string]checkout.Charger{"stripe": srv.Stripe(payments.StripeOptions{Retries: -1}), "sandbox": nil} {
			t.Run(name, func(t *testing.T) {
				p := payingShopOpts(t, db, &checkout.Options{Charger: prov}, nil)
				if prov == nil {
					prov = p.sandbox
				}
				refunded := func(ref string) int64 {
					if name == "sandbox" {
						var n int64
						db.Raw("SELECT refunded FROM sandbox_charges WHERE reference = ?", ref).Scan(&n)
						return n
					}
					for _, pi := range srv.PaymentIntents() {
						if pi.ID == ref {
							return pi.AmountRefunded
						}
					}
					return -1
				}

				// A payable session: the payment becomes its order.
				s := p.ready(t)
				paid := lostCharge(t, prov, s, "shop_"+s.ID+"_attempt_1", "pm_card_visa")
				if n, err := p.co.ScanPayments(ctx); err != nil || n != 1 {
					t.Fatalf("scan: %d %v", n, err)
				}
				got, err := p.co.Get(ctx, s.ID)
				if err != nil || got.Status != checkout.Completed {
					t.Fatalf("after the scan: %v %+v", err, got)
				}
				var ref string
				db.Raw("SELECT payment_reference FROM orders WHERE checkout_session_id = ?", s.ID).Scan(&ref)
				if ref != paid.Reference || refunded(paid.Reference) != 0 {
					t.Errorf("order paid by %q, want %s, not refunded (refunded %d)", ref, paid.Reference, refunded(paid.Reference))
				}
				var recovered int64
				db.Raw("SELECT COUNT(*) FROM audit_events WHERE action = 'payment.recovered' AND session_id = ?", s.ID).Scan(&recovered)
				if recovered != 1 {
					t.Errorf("%d audit events of the recovered payment, want 1", recovered)
				}

				// A session completed by another payment: refunded.
				s2 := p.ready(t)
				if got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s2.ID, Payment: pay("pm_card_visa")}); err != nil || got.Status != checkout.Completed {
					t.Fatalf("complete: %v %+v", err, got)
				}
				extra := lostCharge(t, prov, s2, "shop_"+s2.ID+"_attempt_9", "pm_card_mastercard")
				if n, err := p.co.ScanPayments(ctx); err != nil || n != 1 {
					t.Fatalf("scan: %d %v", n, err)
				}
				if r := refunded(extra.Reference); r != total(s2) {
					t.Errorf("the second payment refunded %d, want %d", r, total(s2))
				}
				var surplus struct {
					Status, Reason string
					Amount         int64
				}
				db.Raw("SELECT status, reason, amount FROM surplus_payments WHERE reference = ?", extra.Reference).Scan(&surplus)
				if surplus.Status != "refunded" || surplus.Reason != "the session was already paid" || surplus.Amount != total(s2) {
					t.Errorf("surplus payment %+v", surplus)
				}
				var audited int64
				db.Raw(`SELECT COUNT(*) FROM audit_events WHERE action = 'payment.surplus' AND session_id = ?
					AND order_id = (SELECT id FROM orders WHERE checkout_session_id = ?)`, s2.ID, s2.ID).Scan(&audited)
				if audited != 1 {
					t.Errorf("%d audit events of the surplus payment naming the order, want 1", audited)
				}

				// Everything is accounted for now.
				if n, err := p.co.ScanPayments(ctx); err != nil || n != 0 {
					t.Errorf("scan again: %d %v", n, err)
				}
				var orders int64
				db.Raw("SELECT COUNT(*) FROM orders WHERE checkout_session_id IN (?, ?)", s.ID, s2.ID).Scan(&orders)
				if orders != 2 {
					t.Errorf("%d orders, want 2", orders)
				}
			})
		}
	})
}

// TestReusedKeyOtherAmount: the provider holds, under the key of a new
// attempt, a charge of another amount (made by an attempt the shop lost,
// before the session changed). Nothing is charged for the attempt, which
// fails; the charge held is recorded on it and refunded; the buyer's next
// try pays under a new key and makes the order.
func TestReusedKeyOtherAmount(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		old, err := p.sandbox.Charge(ctx, payments.Request{Amount: total(s) - 100, Currency: s.Currency, Token: "pm_card_visa",
			IdempotencyKey: "shop_" + s.ID + "_attempt_1", Metadata: map[string]string{"checkout_session_id": s.ID}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_mastercard")})
		if shop.ErrorCode(err) != shop.Conflict {
			t.Fatalf("paying under a key holding another amount: %v, want conflict", err)
		}
		var attempt, surplus struct{ Status, Reference, Reason string }
		db.Raw("SELECT status, reference FROM payment_attempts WHERE idempotency_key = ?", "shop_"+s.ID+"_attempt_1").Scan(&attempt)
		db.Raw("SELECT status, reference, reason FROM surplus_payments WHERE session_id = ?", s.ID).Scan(&surplus)
		if attempt.Status != "orphaned" || attempt.Reference != old.Reference {
			t.Errorf("attempt %+v, want orphaned with %s", attempt, old.Reference)
		}
		if surplus.Status != "refunded" || surplus.Reference != old.Reference || surplus.Reason != "the amount paid is not the session's total" {
			t.Errorf("surplus %+v", surplus)
		}
		got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_amex")})
		if err != nil || got.Status != checkout.Completed {
			t.Fatalf("paying again: %v %+v", err, got)
		}
		var kept int64
		db.Raw("SELECT COUNT(*) FROM sandbox_charges WHERE status = 'succeeded' AND refunded < amount").Scan(&kept)
		if kept != 1 {
			t.Errorf("%d charges kept, want 1", kept)
		}
	})
}

// TestLostPaymentSettledOnce: the webhook's deliveries and the reconciler's
// searches, on replicas at once, settle a payment no attempt has once: one
// order paid by it, nothing refunded, whichever wins.
func TestLostPaymentSettledOnce(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		replica := payingShop(t, db, nil)
		for range 3 {
			s := p.ready(t)
			key := "shop_" + s.ID + "_attempt_1"
			paid := lostCharge(t, p.sandbox, s, key, "pm_card_visa")
			var wg sync.WaitGroup
			for i := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					co := []*checkout.Checkout{p.co, replica.co}[i%2]
					if i < 4 {
						_ = co.SettlePayment(ctx, key) // a loser may answer a conflict: Stripe delivers again
					} else {
						_, _ = co.ScanPayments(ctx)
					}
				}()
			}
			wg.Wait()
			if _, err := p.co.ScanPayments(ctx); err != nil {
				t.Fatal(err)
			}
			var orders, surplus, refunded int64
			db.Raw("SELECT COUNT(*) FROM orders WHERE checkout_session_id = ? AND payment_reference = ?", s.ID, paid.Reference).Scan(&orders)
			db.Raw("SELECT COUNT(*) FROM surplus_payments WHERE session_id = ?", s.ID).Scan(&surplus)
			db.Raw("SELECT refunded FROM sandbox_charges WHERE reference = ?", paid.Reference).Scan(&refunded)
			if orders != 1 || surplus != 0 || refunded != 0 {
				t.Errorf("%d orders paid by the payment, %d surplus payments, %d refunded; want 1, 0, 0", orders, surplus, refunded)
			}
		}
	})
}
