package checkout_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/payments"
)

// attemptTokens maps each payment attempt's status to the tokens its
// attempts still hold ("" when cleared).
func attemptTokens(t *testing.T, db *gorm.DB) map[string][]string {
	t.Helper()
	var rows []struct{ Status, Token string }
	if err := db.Raw("SELECT status, token FROM payment_attempts ORDER BY created_at, attempt").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, r := range rows {
		out[r.Status] = append(out[r.Status], r.Token)
	}
	return out
}

// TestTokenClearedOnSettle: an attempt keeps its payment token only while
// its outcome is unknown; declined, requires_action, failed and succeeded
// attempts keep none, and the reconciler settles an open one without it.
func TestTokenClearedOnSettle(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		for _, tok := range []string{"pm_card_visa_chargeDeclined", "pm_card_authenticationRequired", "pm_card_made_up_by_buyer", "pm_card_visa"} {
			if _, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay(tok)}); err != nil && tok != "pm_card_made_up_by_buyer" {
				t.Fatalf("%s: %v", tok, err)
			}
		}
		want := map[string][]string{"declined": {""}, "requires_action": {""}, "failed": {""}, "succeeded": {""}}
		got := attemptTokens(t, db)
		for status, tokens := range want {
			if len(got[status]) != len(tokens) || got[status][0] != "" {
				t.Errorf("%s attempts hold tokens %q; want none", status, got[status])
			}
		}

		// An answer lost: the open attempt holds its token until the
		// reconciler settles it.
		lost := &lostAnswer{charge: true}
		q := payingShop(t, db, lost)
		lost.Sandbox = q.sandbox
		s2 := q.ready(t)
		if got, err := q.co.Complete(ctx, checkout.CompleteRequest{SessionID: s2.ID, Payment: pay("spt_made_up_0123456789")}); err != nil || got.Status != checkout.InProgress {
			t.Fatalf("answer lost: %v %+v", err, got)
		}
		if got := attemptTokens(t, db)["pending"]; len(got) != 1 || got[0] != "spt_made_up_0123456789" {
			t.Fatalf("open attempt tokens %q", got)
		}
		q.clk.Add(2 * time.Second)
		if n, err := q.co.Reconcile(ctx); err != nil || n != 1 {
			t.Fatalf("reconcile: %d %v", n, err)
		}
		if s, err := q.co.Get(ctx, s2.ID); err != nil || s.Status != checkout.Completed {
			t.Fatalf("after reconcile: %v %+v", err, s)
		}
		var left int64
		if err := db.Raw("SELECT COUNT(*) FROM payment_attempts WHERE token <> ''").Scan(&left).Error; err != nil || left != 0 {
			t.Errorf("%d attempts hold a token after settling (%v)", left, err)
		}
	})
}

// quotingCharger is a provider whose refusals and failures quote the token
// they were given, as providers' messages do.
type quotingCharger struct {
	*payments.Sandbox
	lost bool
}

func (q *quotingCharger) Charge(_ context.Context, r payments.Request) (*payments.Result, error) {
	if q.lost {
		return nil, fmt.Errorf("%w: connection reset while sending %s", payments.ErrUnknownOutcome, r.Token)
	}
	return nil, fmt.Errorf("provider: no such payment method: '%s'", r.Token)
}

// TestChargeErrorsLogNoToken: what completion logs or answers of a
// provider's error never holds the payment token the error quotes.
func TestChargeErrorsLogNoToken(t *testing.T) {
	ctx := context.Background()
	const token = "pm_1ChargeErrorsLogNoTokenSecret"
	for _, lost := range []bool{false, true} {
		t.Run(map[bool]string{false: "Refused", true: "Lost"}[lost], func(t *testing.T) {
			db := dbtest.Open(t, database.SQLite)
			var logs bytes.Buffer
			clk := &clock{now: time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)}
			q := &quotingCharger{Sandbox: payments.NewSandbox(db, nil), lost: lost}
			co := newCheckout(t, db, clk, &checkout.Options{Charger: q,
				Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			p := &paying{co: co, clk: clk, db: db}
			s := p.ready(t)
			_, err := co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay(token)})
			if !lost && err == nil {
				t.Fatal("a refused charge answered no error")
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Errorf("the error shows the token: %v", err)
			}
			if logs.Len() == 0 {
				t.Fatal("nothing logged: the test sees nothing")
			}
			if strings.Contains(logs.String(), token) {
				t.Errorf("the log shows the token:\n%s", logs.String())
			}
		})
	}
}
