package payments_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"shop/payments"
)

// TestStripeSharedTokenOptions: a shop configured with another parameter
// name and Stripe-Version for shared payment tokens (Stripe's preview API
// moves) sends the token under that name, with that version, and a test
// payment method still as payment_method with stripe-go's version.
func TestStripeSharedTokenOptions(t *testing.T) {
	const param, version = "payment_method_data[shared_payment_token]", "2026-09-30.preview"
	f := &fakeStripe{t: t, script: []reply{{status: 200, body: piSucceeded}}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	s, err := payments.NewStripe(payments.StripeOptions{
		SecretKey: testKey, APIBase: srv.URL, HTTPClient: srv.Client(), RetryWait: time.Millisecond,
		SPTParam: param, SPTVersion: version,
	})
	if err != nil {
		t.Fatal(err)
	}
	req := stripeCharge("spt_1RgaZcB7WZ01zgkWN1pyM2rT")
	if _, err := s.Charge(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := f.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	r := got[0]
	if r.Form.Get(param) != req.Token || r.Form.Get(payments.DefaultSPTParam) != "" || r.Form.Get("payment_method") != "" {
		t.Errorf("form %v: want the token under %s alone", r.Form, param)
	}
	if v := r.Header.Values("Stripe-Version"); len(v) != 1 || v[0] != version {
		t.Errorf("Stripe-Version %q, want %q", v, version)
	}
}
