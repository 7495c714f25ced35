package stripetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"shop"
	"shop/payments"
	"shop/payments/stripetest"
)

// page is a hosted checkout with two lines, a discount, shipping and tax:
// 2×1250 + 899 − 340 + 500 + 271 = 3830.
func page(key string) payments.HostedCheckoutRequest {
	return payments.HostedCheckoutRequest{
		Currency: "usd",
		Lines: []payments.HostedLine{
			{Name: "Ceramic mug", Quantity: 2, UnitAmount: 1250, ImageURL: "https://shop.example/img/mug.png"},
			{Name: "Tea towel", Quantity: 1, UnitAmount: 899},
		},
		Discount:        340,
		Shipping:        &payments.HostedShipping{Name: "Standard", Amount: 500, MinDays: 3, MaxDays: 5},
		Tax:             271,
		Total:           3830,
		ClientReference: "cs_shop_1",
		Metadata:        map[string]string{"checkout_session_id": "cs_shop_1"},
		Email:           "buyer@example.com",
		SuccessURL:      "https://shop.example/checkout/cs_shop_1/done?stripe_session={CHECKOUT_SESSION_ID}",
		CancelURL:       "https://shop.example/checkout/cs_shop_1/cancel",
		ExpiresAt:       time.Now().Add(2 * time.Hour),
		IdempotencyKey:  key,
	}
}

// TestHostedCheckoutLife drives a real payments.Stripe through a hosted
// checkout: create, pay, retrieve, look up, refund, expire.
func TestHostedCheckoutLife(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	ctx := context.Background()
	const key = "shop_cs_shop_1_link_1"

	hc, err := p.CreateHostedCheckout(ctx, page(key))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hc.ID, "cs_test_") || !strings.HasPrefix(hc.URL, "https://checkout.stripe.com/c/pay/"+hc.ID) {
		t.Errorf("page %q at %q", hc.ID, hc.URL)
	}
	var paths []string
	for _, r := range srv.Requests() {
		paths = append(paths, r.Method+" "+r.Path+" "+r.IdempotencyKey)
	}
	want := []string{"POST /v1/coupons " + key + "_coupon", "POST /v1/checkout/sessions " + key}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	open, err := p.HostedCheckout(ctx, hc.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantOpen := &payments.HostedPayment{ID: hc.ID, Status: "open", Amount: 3830, Currency: "usd",
		ClientReference: "cs_shop_1", Metadata: map[string]string{"checkout_session_id": "cs_shop_1"}}
	if diff := cmp.Diff(wantOpen, open); diff != "" {
		t.Errorf("open page (-want +got):\n%s", diff)
	}
	if _, found, err := p.Lookup(ctx, key); err != nil || found {
		t.Errorf("Lookup before Pay = found %v, %v", found, err)
	}

	pi := srv.Pay(hc.ID)
	paid, err := p.HostedCheckout(ctx, hc.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantPaid := *wantOpen
	wantPaid.Status, wantPaid.Paid, wantPaid.PaymentIntent = "complete", true, pi
	wantPaid.CardBrand, wantPaid.CardLast4 = "visa", "4242"
	if diff := cmp.Diff(&wantPaid, paid); diff != "" {
		t.Errorf("paid page (-want +got):\n%s", diff)
	}
	if got := srv.SuccessURL(hc.ID); got != "https://shop.example/checkout/cs_shop_1/done?stripe_session="+hc.ID {
		t.Errorf("SuccessURL = %q", got)
	}

	res, found, err := p.Lookup(ctx, key)
	if err != nil || !found {
		t.Fatalf("Lookup = found %v, %v", found, err)
	}
	if diff := cmp.Diff(&payments.Result{Status: payments.Succeeded, Reference: pi, CardBrand: "visa", CardLast4: "4242"}, res, readBack); diff != "" {
		t.Errorf("Lookup (-want +got):\n%s", diff)
	}
	intents := srv.PaymentIntents()
	wantIntents := []stripetest.PaymentIntent{{ID: pi, Status: "succeeded", Amount: 3830, Currency: "usd",
		Metadata: map[string]string{"checkout_session_id": "cs_shop_1", "idempotency_key": key}, CheckoutSession: hc.ID}}
	if diff := cmp.Diff(wantIntents, intents); diff != "" {
		t.Errorf("PaymentIntents (-want +got):\n%s", diff)
	}

	refund := func(amount int64, k string) (*payments.Refund, error) {
		return p.Refund(ctx, payments.RefundRequest{Reference: pi, Amount: amount, IdempotencyKey: k, Reason: "Arrived broken"})
	}
	re, err := refund(1000, "refund_1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(re.Reference, "re_") || re.Amount != 1000 || re.Status != "succeeded" {
		t.Errorf("Refund = %+v", re)
	}
	if _, err := refund(2831, "refund_2"); shop.ErrorCode(err) != shop.Invalid {
		t.Errorf("Refund of more than is left = %v, want a shop.Error invalid", err)
	}
	if _, err := refund(2830, "refund_3"); err != nil {
		t.Fatal(err)
	}
	if _, err := refund(1, "refund_4"); shop.ErrorCode(err) != shop.Invalid {
		t.Errorf("Refund of a refunded payment = %v, want a shop.Error invalid", err)
	}
	var amounts []int64
	for _, r := range srv.Refunds() {
		if r.PaymentIntent != pi || r.Reason != "requested_by_customer" || r.Metadata["reason"] != "Arrived broken" {
			t.Errorf("refund %+v", r)
		}
		amounts = append(amounts, r.Amount)
	}
	if diff := cmp.Diff([]int64{1000, 2830}, amounts); diff != "" {
		t.Errorf("refunds (-want +got):\n%s", diff)
	}
	if got := srv.PaymentIntents()[0].AmountRefunded; got != 3830 {
		t.Errorf("AmountRefunded %d", got)
	}

	// A complete page cannot be expired: Stripe refuses, the provider asks
	// for its status and is content.
	n := len(srv.Requests())
	if err := p.ExpireHostedCheckout(ctx, hc.ID); err != nil {
		t.Errorf("ExpireHostedCheckout of a complete page = %v", err)
	}
	reqs := srv.Requests()[n:]
	if len(reqs) != 2 || reqs[0].Status != http.StatusBadRequest || reqs[1].Method != http.MethodGet {
		t.Errorf("expire of a complete page: %+v", reqs)
	}
}

func TestExpire(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	ctx := context.Background()

	hc, err := p.CreateHostedCheckout(ctx, page("k_expire_1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ExpireHostedCheckout(ctx, hc.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := p.HostedCheckout(ctx, hc.ID); err != nil || got.Status != "expired" || got.Paid {
		t.Errorf("after expire: %+v, %v", got, err)
	}
	if err := p.ExpireHostedCheckout(ctx, hc.ID); err != nil {
		t.Errorf("expiring again = %v", err)
	}
	if err := p.ExpireHostedCheckout(ctx, "cs_test_nope"); shop.ErrorCode(err) != shop.NotFound {
		t.Errorf("expiring an unknown page = %v, want not_found", err)
	}
	if _, err := p.HostedCheckout(ctx, "cs_test_nope"); shop.ErrorCode(err) != shop.NotFound {
		t.Errorf("retrieving an unknown page = %v, want not_found", err)
	}

	// The test's controls: Expire, and the clock.
	hc2, err := p.CreateHostedCheckout(ctx, page("k_expire_2"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Expire(hc2.ID)
	if got, _ := p.HostedCheckout(ctx, hc2.ID); got.Status != "expired" {
		t.Errorf("after Expire: %+v", got)
	}
	hc3, err := p.CreateHostedCheckout(ctx, page("k_expire_3"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Advance(3 * time.Hour)
	if got, _ := p.HostedCheckout(ctx, hc3.ID); got.Status != "expired" {
		t.Errorf("3 hours later: %+v", got)
	}
}

// TestIdempotency: the same key and request answer the first answer again;
// the same key with another request is Stripe's idempotency_error.
func TestIdempotency(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	ctx := context.Background()
	req := page("k_replay")

	first, err := p.CreateHostedCheckout(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.CreateHostedCheckout(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("replay (-first +again):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 || reqs[0].Replayed || !reqs[2].Replayed || !reqs[3].Replayed {
		t.Errorf("requests %+v: want the last two replayed", reqs)
	}

	other := req
	other.Lines = append([]payments.HostedLine{{Name: "Teapot", Quantity: 1, UnitAmount: 100}}, req.Lines...)
	other.Total += 100
	if _, err := p.CreateHostedCheckout(ctx, other); !errors.Is(err, payments.ErrKeyReused) {
		t.Errorf("same key, other lines = %v, want ErrKeyReused", err)
	}

	// Charges: a decline is stored and replayed like a success.
	charge := payments.Request{Amount: 2599, Currency: "usd", Token: "pm_card_visa_chargeDeclined", IdempotencyKey: "k_charge"}
	for range 2 {
		res, err := p.Charge(ctx, charge)
		if err != nil || res.Status != payments.Declined || res.DeclineCode != "generic_decline" || !strings.HasPrefix(res.Reference, "pi_") {
			t.Errorf("Charge = %+v, %v", res, err)
		}
	}
	if n := len(srv.PaymentIntents()); n != 1 {
		t.Errorf("%d PaymentIntents, want 1", n)
	}
	charge.Amount = 2600
	if _, err := p.Charge(ctx, charge); !errors.Is(err, payments.ErrKeyReused) {
		t.Errorf("same key, other amount = %v, want ErrKeyReused", err)
	}

	// A key used on another endpoint is an idempotency_error too.
	status, body := call(t, srv, http.MethodPost, "/v1/refunds", url.Values{"payment_intent": {"pi_x"}}, "k_charge")
	if status != http.StatusBadRequest || !strings.Contains(body, `"type": "idempotency_error"`) {
		t.Errorf("key of a charge on /v1/refunds: %d %s", status, body)
	}
}

func TestCharge(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	ctx := context.Background()
	tests := []struct {
		token string
		want  payments.Result
	}{
		{"pm_card_visa", payments.Result{Status: payments.Succeeded, CardBrand: "visa", CardLast4: "4242"}},
		{"pm_card_mastercard", payments.Result{Status: payments.Succeeded, CardBrand: "mastercard", CardLast4: "4444"}},
		{"pm_card_amex", payments.Result{Status: payments.Succeeded, CardBrand: "amex", CardLast4: "8431"}},
		{"spt_1RgaZcB7WZ01zgkWN1pyM2rT", payments.Result{Status: payments.Succeeded, CardBrand: "visa", CardLast4: "4242"}},
		{"pm_card_visa_chargeDeclined", payments.Result{Status: payments.Declined, DeclineCode: "generic_decline", Message: "Your card was declined.",
			CardBrand: "visa", CardLast4: "0002"}},
		{"pm_card_chargeDeclinedInsufficientFunds", payments.Result{Status: payments.Declined, DeclineCode: "insufficient_funds", Message: "Your card has insufficient funds.",
			CardBrand: "visa", CardLast4: "9995"}},
		{"pm_card_authenticationRequired", payments.Result{Status: payments.RequiresAction, DeclineCode: "authentication_required",
			CardBrand: "visa", CardLast4: "3184"}},
	}
	for i, tt := range tests {
		key := fmt.Sprintf("k_charge_%d", i)
		got, err := p.Charge(ctx, payments.Request{Amount: 2599, Currency: "usd", Token: tt.token, IdempotencyKey: key,
			Metadata: map[string]string{"checkout_session_id": "cs_shop_2"}})
		if err != nil {
			t.Errorf("%s: %v", tt.token, err)
			continue
		}
		if !strings.HasPrefix(got.Reference, "pi_") {
			t.Errorf("%s: reference %q", tt.token, got.Reference)
		}
		tt.want.Reference = got.Reference
		if tt.want.Status == payments.RequiresAction {
			tt.want.Message = got.Message
		}
		if diff := cmp.Diff(&tt.want, got, readBack); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.token, diff)
		}
		// Looked up, the charge shows the same card (its latest charge, or
		// for 3D Secure its payment method, expanded in the list).
		found, ok, err := p.Lookup(ctx, key)
		if err != nil || !ok || found.Reference != got.Reference || found.CardBrand != tt.want.CardBrand || found.CardLast4 != tt.want.CardLast4 {
			t.Errorf("%s: Lookup = %+v, %v, %v; want the card %s %s", tt.token, found, ok, err, tt.want.CardBrand, tt.want.CardLast4)
		}
	}
	if _, err := p.Charge(ctx, payments.Request{Amount: 100, Currency: "usd", Token: "pm_1Nope", IdempotencyKey: "k_nope"}); shop.ErrorCode(err) != shop.Invalid {
		t.Errorf("unknown payment method = %v, want invalid", err)
	}
}

// TestLookupBySearch: a charge older than the 100 most recent is found by
// search.
func TestLookupBySearch(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	ctx := context.Background()
	charge := func(key string) string {
		res, err := p.Charge(ctx, payments.Request{Amount: 100, Currency: "usd", Token: "pm_card_visa", IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return res.Reference
	}
	old := charge("k_it's_old")
	for i := range 100 {
		charge(fmt.Sprintf("k_new_%d", i))
	}
	n := len(srv.Requests())
	res, found, err := p.Lookup(ctx, "k_it's_old")
	if err != nil || !found || res.Reference != old {
		t.Fatalf("Lookup = %+v, %v, %v", res, found, err)
	}
	var paths []string
	for _, r := range srv.Requests()[n:] {
		paths = append(paths, r.Path)
	}
	if diff := cmp.Diff([]string{"/v1/payment_intents", "/v1/payment_intents/search"}, paths); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if q := srv.Requests()[n+1].Form.Get("query"); q != `metadata['idempotency_key']:'k_it\'s_old'` {
		t.Errorf("query %q", q)
	}
}

// TestFailNext: failures are retried with the same key, and change nothing.
func TestFailNext(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: 3})
	ctx := context.Background()
	for _, status := range []int{500, 429, 409} {
		key := fmt.Sprintf("k_fail_%d", status)
		n := len(srv.Requests())
		srv.FailNext(2, status)
		res, err := p.Charge(ctx, payments.Request{Amount: 100, Currency: "usd", Token: "pm_card_visa", IdempotencyKey: key})
		if err != nil || res.Status != payments.Succeeded {
			t.Errorf("%d twice, then: %+v, %v", status, res, err)
		}
		var got []string
		for _, r := range srv.Requests()[n:] {
			got = append(got, fmt.Sprintf("%d %s", r.Status, r.IdempotencyKey))
		}
		want := []string{fmt.Sprintf("%d %s", status, key), fmt.Sprintf("%d %s", status, key), "200 " + key}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
	}
	if n := len(srv.PaymentIntents()); n != 3 {
		t.Errorf("%d PaymentIntents, want 3", n)
	}
	srv.FailNext(4, 503)
	if _, err := p.Charge(ctx, payments.Request{Amount: 100, Currency: "usd", Token: "pm_card_visa", IdempotencyKey: "k_down"}); !errors.Is(err, payments.ErrUnknownOutcome) {
		t.Errorf("Stripe down = %v, want ErrUnknownOutcome", err)
	}
}

// TestEvent: events are signed as Stripe signs them, and read by
// payments.ParseStripeEvent.
func TestEvent(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	ctx := context.Background()
	hc, err := p.CreateHostedCheckout(ctx, page("k_event"))
	if err != nil {
		t.Fatal(err)
	}
	pi := srv.Pay(hc.ID)

	payload, sig := srv.Event("checkout.session.completed", stripetest.WebhookSecret, hc.ID)
	ev, err := payments.ParseStripeEvent(payload, sig, stripetest.WebhookSecret)
	if err != nil {
		t.Fatal(err)
	}
	want := &payments.Event{ID: ev.ID, Type: "checkout.session.completed", Status: payments.Succeeded,
		Metadata: map[string]string{"checkout_session_id": "cs_shop_1"}, Created: ev.Created,
		HostedCheckout: hc.ID, ClientReference: "cs_shop_1"}
	if diff := cmp.Diff(want, ev); diff != "" || !strings.HasPrefix(ev.ID, "evt_") || time.Since(ev.Created) > time.Minute {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	if _, err := payments.ParseStripeEvent(payload, sig, "whsec_other"); err == nil {
		t.Error("an event signed with another secret was accepted")
	}

	payload, sig = srv.Event("payment_intent.succeeded", "whsec_x", pi)
	ev, err = payments.ParseStripeEvent(payload, sig, "whsec_x")
	if err != nil || ev.PaymentIntent != pi || ev.Status != payments.Succeeded || ev.Metadata["idempotency_key"] != "k_event" {
		t.Errorf("payment_intent.succeeded: %+v, %v", ev, err)
	}

	// stripe-go's strict reading: the API version is its own, and the
	// signature is its own.
	sev, err := webhook.ConstructEvent(payload, sig, "whsec_x")
	if err != nil {
		t.Fatal(err)
	}
	var spi stripe.PaymentIntent
	if err := json.Unmarshal(sev.Data.Raw, &spi); err != nil || spi.ID != pi || spi.Amount != 3830 || spi.LatestCharge == nil {
		t.Errorf("payment intent %+v, %v", spi, err)
	}
	at := time.Unix(1714567890, 0)
	if got, want := stripetest.Sign(payload, "whsec_x", at), webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{
		Payload: payload, Secret: "whsec_x", Timestamp: at}).Header; got != want {
		t.Errorf("Sign = %s, stripe-go's %s", got, want)
	}
}

// TestShapes: stripe-go reads the emulator's objects and errors into its
// types with the fields filled.
func TestShapes(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	ctx := context.Background()
	hc, err := p.CreateHostedCheckout(ctx, page("k_shapes"))
	if err != nil {
		t.Fatal(err)
	}
	client := stripe.NewClient(stripetest.SecretKey, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL: stripe.String(srv.URL), HTTPClient: srv.Client(), LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
	cs, err := client.V1CheckoutSessions.Retrieve(ctx, hc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cs.AmountSubtotal != 2*1250+899+271 || cs.AmountTotal != 3830 || cs.TotalDetails.AmountDiscount != 340 ||
		cs.TotalDetails.AmountShipping != 500 || cs.CustomerEmail != "buyer@example.com" || cs.Mode != stripe.CheckoutSessionModePayment ||
		cs.PaymentStatus != stripe.CheckoutSessionPaymentStatusUnpaid || cs.ExpiresAt == 0 || len(cs.Discounts) != 1 || cs.Discounts[0].Coupon.ID == "" {
		t.Errorf("checkout session %+v", cs)
	}

	_, err = client.V1PaymentIntents.Create(ctx, &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(500), Currency: stripe.String("usd"), Confirm: stripe.Bool(true), PaymentMethod: stripe.String("pm_card_visa_chargeDeclined"),
	})
	var se *stripe.Error
	if !errors.As(err, &se) || se.HTTPStatusCode != 402 || se.Type != stripe.ErrorTypeCard || se.Code != stripe.ErrorCodeCardDeclined ||
		se.DeclineCode != stripe.DeclineCodeGenericDecline || se.PaymentIntent == nil || se.PaymentIntent.Status != stripe.PaymentIntentStatusRequiresPaymentMethod ||
		se.PaymentIntent.LastPaymentError == nil || se.RequestID == "" {
		t.Errorf("decline: %v", err)
	}

	// Expanded, a PaymentIntent's latest charge and payment method have
	// Stripe's shape, with the card; what cannot be expanded is refused.
	cp := &stripe.PaymentIntentCreateParams{
		Amount: stripe.Int64(500), Currency: stripe.String("usd"), Confirm: stripe.Bool(true), PaymentMethod: stripe.String("pm_card_visa"),
	}
	cp.AddExpand("latest_charge")
	cp.AddExpand("payment_method")
	pi, err := client.V1PaymentIntents.Create(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	if ch := pi.LatestCharge; ch == nil || !strings.HasPrefix(ch.ID, "ch_") || ch.Status != stripe.ChargeStatusSucceeded || !ch.Paid ||
		ch.PaymentMethodDetails == nil || ch.PaymentMethodDetails.Card == nil || ch.PaymentMethodDetails.Card.Brand != "visa" ||
		ch.PaymentMethodDetails.Card.Last4 != "4242" || ch.PaymentIntent == nil || ch.PaymentIntent.ID != pi.ID {
		t.Errorf("latest charge %+v", ch)
	}
	if pm := pi.PaymentMethod; pm == nil || pm.Card == nil || pm.Card.Brand != "visa" || pm.Card.Last4 != "4242" || pm.Type != "card" {
		t.Errorf("payment method %+v", pm)
	}
	if unexpanded, err := client.V1PaymentIntents.Retrieve(ctx, pi.ID, nil); err != nil || unexpanded.LatestCharge == nil ||
		unexpanded.LatestCharge.ID != pi.LatestCharge.ID || unexpanded.LatestCharge.PaymentMethodDetails != nil {
		t.Errorf("retrieved without expand: %+v, %v; want the charge's id only", unexpanded, err)
	}
	if status, body := call(t, srv, http.MethodGet, "/v1/payment_intents?expand[0]=latest_charge", nil, ""); status != http.StatusBadRequest || !strings.Contains(body, "cannot be expanded") {
		t.Errorf("a list expanding latest_charge (not data.latest_charge): %d %s", status, body)
	}

	status, body := call(t, srv, http.MethodGet, "/v1/checkout/sessions/cs_test_nope", nil, "")
	var e struct{ Error map[string]string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || status != 404 || e.Error["code"] != "resource_missing" ||
		e.Error["type"] != "invalid_request_error" || e.Error["param"] != "session" {
		t.Errorf("unknown session: %d %s", status, body)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/payment_intents", nil)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a key: %d", res.StatusCode)
	}
}

// call sends one request with the test key and returns the status and body.
func call(t *testing.T, srv *stripetest.Server, method, path string, form url.Values, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+stripetest.SecretKey)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

// readBack leaves out of a comparison what a Result reads back of the
// charge (its amount, refunds and metadata), which TestPayments (package
// payments) checks.
var readBack = cmpopts.IgnoreFields(payments.Result{}, "Amount", "Currency", "Refunded", "Metadata")

// TestSearchQueries: the search takes clauses joined by AND, answers
// Stripe's search_result with has_more and next_page, pages by page, and
// refuses a query it does not understand with a 400 naming query.
func TestSearchQueries(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	ctx := context.Background()
	for i, token := range []string{"pm_card_visa", "pm_card_visa", "pm_card_visa_chargeDeclined", "pm_card_visa"} {
		_, _ = p.Charge(ctx, payments.Request{Amount: int64(100 * (i + 1)), Currency: "usd", Token: token, IdempotencyKey: fmt.Sprintf("k_%d", i),
			Metadata: map[string]string{"checkout_session_id": "cs_1"}})
	}
	search := func(form url.Values) (int, map[string]any) {
		t.Helper()
		status, body := call(t, srv, http.MethodGet, "/v1/payment_intents/search", form, "")
		var v map[string]any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		return status, v
	}
	q := "metadata['checkout_session_id']:'cs_1' AND status:'succeeded' AND created>=1000 AND amount:200"
	if status, v := search(url.Values{"query": {q}}); status != 200 || len(v["data"].([]any)) != 1 || v["object"] != "search_result" {
		t.Errorf("%s: %d %v", q, status, v)
	}
	q = "metadata['checkout_session_id']:'cs_1' AND status:'succeeded'"
	status, first := search(url.Values{"query": {q}, "limit": {"2"}})
	if status != 200 || len(first["data"].([]any)) != 2 || first["has_more"] != true || first["next_page"] == nil {
		t.Fatalf("first page: %d %v", status, first)
	}
	status, second := search(url.Values{"query": {q}, "limit": {"2"}, "page": {first["next_page"].(string)}})
	if status != 200 || len(second["data"].([]any)) != 1 || second["has_more"] != false || second["next_page"] != nil {
		t.Errorf("second page: %d %v", status, second)
	}
	for _, bad := range []string{"status:'succeeded' OR status:'canceled'", "created:'x'", "description~'mug'"} {
		if status, v := search(url.Values{"query": {bad}}); status != 400 || v["error"].(map[string]any)["param"] != "query" {
			t.Errorf("%s: %d %v", bad, status, v)
		}
	}
}
