package checkout_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/database/dbtest"
)

// TestReconcileSessionNeverGivesUp: the webhook's path (ReconcileSession)
// settles what the provider shows and leaves alone an attempt it does not
// show, however old: the charge may still be on its way, and giving the
// session back would let the buyer pay twice. Only the reconciler gives up,
// after its grace period. Then the provider shows the charge, and the
// webhook's path completes the order.
func TestReconcileSessionNeverGivesUp(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		for _, charged := range []bool{false, true} {
			lost := &lostAnswer{charge: charged}
			p := payingShop(t, db, lost)
			lost.Sandbox = p.sandbox
			s := p.ready(t)
			if got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err != nil || got.Status != checkout.InProgress {
				t.Fatalf("with the answer lost: %v %s", err, got.Status)
			}
			p.clk.Add(time.Hour) // long past the reconciler's grace
			if err := p.co.ReconcileSession(ctx, s.ID); err != nil {
				t.Fatal(err)
			}
			var status string
			db.Raw("SELECT status FROM payment_attempts WHERE session_id = ?", s.ID).Scan(&status)
			got, err := p.co.Get(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			want, attempt := checkout.InProgress, "pending"
			if charged {
				want, attempt = checkout.Completed, "succeeded"
			}
			if got.Status != want || status != attempt {
				t.Fatalf("charged %t, after the webhook's reconcile: session %s, attempt %s; want %s, %s", charged, got.Status, status, want, attempt)
			}
			if charged {
				continue
			}
			// The reconciler, past its grace, gives the attempt up.
			if n, err := p.co.Reconcile(ctx); err != nil || n != 1 {
				t.Fatalf("reconcile: %d %v", n, err)
			}
			if got, _ := p.co.Get(ctx, s.ID); got.Status != checkout.Ready {
				t.Errorf("after the reconciler: %s, want ready_for_payment", got.Status)
			}
		}
	})
}
