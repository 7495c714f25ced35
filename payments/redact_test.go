package payments_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"shop/payments"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in string
		tokens   []string
		want     string
	}{
		{"NoToken", "HTTP 402 card_error card_declined: Your card was declined.", nil, "HTTP 402 card_error card_declined: Your card was declined."},
		{"PaymentMethod", "No such PaymentMethod: 'pm_1QxYzAbCdEfGhIjKlMnOp'", nil, "No such PaymentMethod: 'pm_1QxYz…'"},
		{"SharedToken", "Invalid token spt_1RgaZcB7WZ01zgkWN1pyM2rT.", nil, "Invalid token spt_1Rga…."},
		{"ShortTestMethod", "payment_method pm_card_visa refused", nil, "payment_method pm_… refused"},
		{"Several", "pm_1QxYzAbCdEfGhIjKlMnOp, spt_1RgaZcB7WZ01zgkWN1pyM2rT", nil, "pm_1QxYz…, spt_1Rga…"},
		{"RequestTokenOfAnyShape", "No such checkout: cs_test_a1B2c3D4e5F6g7H8", []string{"cs_test_a1B2c3D4e5F6g7H8"}, "No such checkout: cs_test_…"},
		{"KeepsReferences", "payment intent pi_3PsSucceeded (idempotency key shop_cs_abc_attempt_1) decline_code card_declined",
			nil, "payment intent pi_3PsSucceeded (idempotency key shop_cs_abc_attempt_1) decline_code card_declined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := payments.Redact(tt.in, tt.tokens...); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	t.Run("Error", func(t *testing.T) {
		err := payments.RedactError(fmtErr("charge: %w: no such PaymentMethod pm_1QxYzAbCdEfGhIjKlMnOp", payments.ErrUnknownOutcome))
		if strings.Contains(err.Error(), "pm_1QxYzAbCdEfGhIjKlMnOp") || !errors.Is(err, payments.ErrUnknownOutcome) {
			t.Errorf("RedactError = %q (wraps ErrUnknownOutcome: %v)", err, errors.Is(err, payments.ErrUnknownOutcome))
		}
		if payments.RedactError(nil) != nil {
			t.Error("RedactError(nil) is not nil")
		}
	})
}

// TestStripeLogsNoToken: whatever Stripe's answer quotes of the payment
// token, neither the provider's log lines (at debug level) nor its errors
// show it.
func TestStripeLogsNoToken(t *testing.T) {
	const token = "pm_1QxYzAbCdEfGhIjKlMnOpSecret"
	quoting := func(status int, typ string) reply {
		return reply{status: status, body: `{"error":{"code":"resource_missing","message":"No such PaymentMethod: '` + token +
			`'; token ` + token + ` is unknown","param":"payment_method","type":"` + typ + `"}}`}
	}
	tests := []struct {
		name   string
		script []reply
	}{
		{"RefusedToken", []reply{quoting(400, "invalid_request_error")}},
		{"RetriedThenUnknown", []reply{quoting(500, "api_error")}},
		{"OtherRefusal", []reply{{status: 400, body: `{"error":{"message":"Invalid request: ` + token + ` cannot be used","type":"invalid_request_error"}}`}}},
		{"Declined", []reply{{status: 402, body: `{"error":{"code":"card_declined","decline_code":"generic_decline","message":"Your card ` + token + ` was declined.","type":"card_error"}}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			f := &fakeStripe{t: t, script: tt.script}
			srv := httptest.NewServer(f)
			defer srv.Close()
			s, err := payments.NewStripe(payments.StripeOptions{
				SecretKey: testKey, APIBase: srv.URL, HTTPClient: srv.Client(), Retries: 2, RetryWait: time.Millisecond,
				Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Charge(context.Background(), stripeCharge(token))
			if err == nil && res.Status == payments.Succeeded {
				t.Fatalf("Charge succeeded: %+v", res)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Errorf("the error shows the token: %v", err)
			}
			if res != nil && strings.Contains(res.Message, token) {
				t.Errorf("the result shows the token: %+v", res)
			}
			if strings.Contains(logs.String(), token) {
				t.Errorf("the log shows the token:\n%s", logs.String())
			}
		})
	}
}

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }
