package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"shop/checkout"
	"shop/database"
)

// TestCrash ends the real process in the middle of a payment and starts it
// again: the reconciler settles the payment, with exactly one charge and at
// most one order.
func TestCrash(t *testing.T) {
	bin := buildShop(t)
	cases := []struct {
		point string
		want  checkout.Status // after the restart's reconciler
	}{
		{"after_charge", checkout.Completed}, // charged, no order yet: the order is written
		{"before_charge", checkout.Ready},    // nothing charged: the session can be paid again
	}
	for _, tc := range cases {
		t.Run(tc.point, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "shop.db")
			p := runShop(t, bin, db, []string{"SHOP_TEST_FAULT=" + tc.point})
			cs := payUntilFault(t, p)

			p = runShop(t, bin, db, nil, "--reconcile-grace", "1ms")
			s := connect(t, "http://"+p.addr)
			var got checkout.Session
			for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				got = session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": cs.ID}))
				if got.Status != checkout.InProgress {
					break
				}
			}
			if got.Status != tc.want {
				t.Fatalf("after restart: %s, want %s (%+v)", got.Status, tc.want, got.Messages)
			}
			if tc.want == checkout.Ready {
				if paid := session(t, complete(t, s, cs.ID, "pm_card_visa")); paid.Status != checkout.Completed {
					t.Fatalf("paying after the restart: %s %+v", paid.Status, paid.Messages)
				}
			}
			counts := rows(t, db, "sandbox_charges", "orders")
			if counts["sandbox_charges"] != 1 || counts["orders"] != 1 {
				t.Errorf("after the crash: %v; want one charge and one order", counts)
			}
		})
	}
}

// payUntilFault readies a session on p, a shop started with SHOP_TEST_FAULT,
// and pays for it: the process ends at the fault, mid-payment.
func payUntilFault(t *testing.T, p *process) checkout.Session {
	t.Helper()
	s := connect(t, "http://"+p.addr)
	cs := readySession(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.CallTool(ctx, completeParams(cs.ID, "pm_card_visa")); err == nil {
		t.Fatal("complete_checkout answered; the process should have ended")
	}
	select {
	case err := <-p.done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 3 {
			t.Fatalf("process ended with %v, want exit status 3", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the process did not end at the fault")
	}
	return cs
}

// rows counts the rows of tables in the database at dsn (a SQLite path or
// a postgres:// URL).
func rows(t *testing.T, dsn string, tables ...string) map[string]int64 {
	t.Helper()
	db, err := database.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	out := map[string]int64{}
	for _, table := range tables {
		var n int64
		if err := db.Table(table).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}
