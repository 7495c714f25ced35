package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/payments/stripetest"
)

// TestPurchaseLogsNoToken: a whole purchase through `shop serve` and
// Stripe (the emulator), with a token Stripe does not know, a decline, a
// failed try and a payment, logs at debug level nothing of the payment
// tokens or card details it used; and once settled no attempt keeps its
// token in the database.
func TestPurchaseLogsNoToken(t *testing.T) {
	const (
		unknown = "pm_1LogTestUnknownMethodSecret01"
		shared  = "spt_1LogTestSharedPaymentSecret02"
		decline = "pm_card_visa_chargeDeclined"
	)
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			stripe := stripetest.New(t)
			dsn := dbtest.DSN(t, d)
			logs := &lockedBuffer{}
			ctx, cancel := context.WithCancel(context.Background())
			addrc, done := make(chan string, 1), make(chan error, 1)
			m := &Main{
				Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: logs,
				Getenv: func(k string) string {
					return map[string]string{"STRIPE_SECRET_KEY": stripetest.SecretKey, "STRIPE_API_BASE": stripe.URL}[k]
				},
				Logger:  slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Started: func(addr string) { addrc <- addr },
			}
			go func() { done <- m.Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", dsn}) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("shop serve: %v", err)
				}
			}()
			var base string
			select {
			case addr := <-addrc:
				base = "http://" + addr
			case err := <-done:
				t.Fatalf("shop serve stopped: %v\n%s", err, logs.String())
			case <-time.After(30 * time.Second):
				t.Fatal("shop serve did not start in 30s")
			}
			s := connect(t, base)
			cs := readySession(t, s)

			if res := complete(t, s, cs.ID, unknown); !res.IsError || !strings.Contains(text(res), "$.payment_data.token") {
				t.Fatalf("unknown token: %s", text(res))
			}
			if got := session(t, complete(t, s, cs.ID, decline)); got.Status != checkout.Ready || len(got.Messages) == 0 || got.Messages[0].Code != "payment_declined" {
				t.Fatalf("decline: %s %+v", got.Status, got.Messages)
			}
			stripe.FailNext(1, 500) // one try fails, the next pays
			if got := session(t, complete(t, s, cs.ID, shared)); got.Status != checkout.Completed || got.Order == nil {
				t.Fatalf("payment: %s %+v", got.Status, got.Messages)
			}

			log := logs.String()
			if !strings.Contains(log, "stripe refused the payment token") || !strings.Contains(log, "trying again") {
				t.Fatalf("the log lacks the lines about the refused token and the retry; the test sees nothing:\n%s", log)
			}
			for _, secret := range []string{unknown, shared, decline, "4242424242424242"} {
				if strings.Contains(log, secret) {
					t.Errorf("the log shows %q:\n%s", secret, log)
				}
			}

			db, err := database.Open(context.Background(), dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = database.Close(db) }()
			var rows []struct{ Status, Token string }
			if err := db.Raw("SELECT status, token FROM payment_attempts ORDER BY attempt").Scan(&rows).Error; err != nil {
				t.Fatal(err)
			}
			if len(rows) != 3 {
				t.Fatalf("attempts %+v, want 3", rows)
			}
			for _, r := range rows {
				if r.Token != "" {
					t.Errorf("a %s attempt keeps its token %q", r.Status, r.Token)
				}
			}
		})
	}
}
