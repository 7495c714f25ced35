package payments_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stripe/stripe-go/v82"

	"shop"
	"shop/payments"
)

// testKey is a made-up key; tests assert it never shows in an error.
const testKey = "sk_test_51PayTestsOnlyNotARealKey0123456789abcdefABCDEF"

// recorded is a request as the fake Stripe received it.
type recorded struct {
	Method, Path string
	Header       http.Header
	Form         url.Values
}

// reply is one scripted answer: a status and a JSON body, or a connection
// dropped without an answer.
type reply struct {
	status int
	body   string
	drop   bool
}

// fakeStripe replays scripted answers in order (the last one repeats) and
// records every request.
type fakeStripe struct {
	t      *testing.T
	script []reply
	mu     sync.Mutex
	got    []recorded
}

func (f *fakeStripe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(body))
	if err != nil {
		f.t.Errorf("form body %q: %v", body, err)
	}
	for k, v := range r.URL.Query() {
		form[k] = v
	}
	f.mu.Lock()
	f.got = append(f.got, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Form: form})
	rep := f.script[min(len(f.got), len(f.script))-1]
	f.mu.Unlock()
	if rep.drop {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			f.t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_test")
	w.WriteHeader(rep.status)
	_, _ = io.WriteString(w, rep.body)
}

func (f *fakeStripe) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.got...)
}

// serve starts a fake Stripe on 127.0.0.1 and a provider pointed at it.
func serve(t *testing.T, script ...reply) (*payments.Stripe, *fakeStripe) {
	t.Helper()
	f := &fakeStripe{t: t, script: script}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	s, err := payments.NewStripe(payments.StripeOptions{
		SecretKey: testKey, APIBase: srv.URL, HTTPClient: srv.Client(), Retries: 3, RetryWait: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

// Stripe's answers, as its API reference and error docs show them.
const (
	piSucceeded      = `{"id":"pi_3PsSucceeded","object":"payment_intent","amount":2599,"currency":"usd","status":"succeeded","livemode":false,"metadata":{"checkout_session_id":"cs_test"}}`
	piRequiresAction = `{"id":"pi_3PsAction","object":"payment_intent","amount":2599,"currency":"usd","status":"requires_action","next_action":{"type":"use_stripe_sdk","use_stripe_sdk":{"type":"three_d_secure_redirect"}}}`
	// As Stripe answers with expand[]=latest_charge&expand[]=payment_method.
	piSucceededCard = `{"id":"pi_3PsCard","object":"payment_intent","amount":2599,"currency":"usd","status":"succeeded","latest_charge":{"id":"ch_3PsCard","object":"charge","amount":2599,"paid":true,"payment_intent":"pi_3PsCard","payment_method":"pm_1PsCard","payment_method_details":{"card":{"brand":"mastercard","country":"US","exp_month":12,"exp_year":2034,"funding":"credit","last4":"4444"},"type":"card"},"status":"succeeded"},"payment_method":{"id":"pm_1PsCard","object":"payment_method","card":{"brand":"mastercard","last4":"4444"},"type":"card"}}`
	piActionCard    = `{"id":"pi_3PsAction","object":"payment_intent","amount":2599,"currency":"usd","status":"requires_action","latest_charge":null,"payment_method":{"id":"pm_1PsAction","object":"payment_method","card":{"brand":"visa","last4":"3184"},"type":"card"},"next_action":{"type":"use_stripe_sdk"}}`
	errDeclinedCard = `{"error":{"charge":"ch_3PsDeclined","code":"card_declined","decline_code":"generic_decline","message":"Your card was declined.","payment_intent":{"id":"pi_3PsDeclined","object":"payment_intent","status":"requires_payment_method","latest_charge":"ch_3PsDeclined"},"payment_method":{"id":"pm_1PsDeclined","object":"payment_method","card":{"brand":"visa","exp_month":12,"exp_year":2034,"funding":"credit","last4":"0002"},"type":"card"},"type":"card_error"}}`
	piProcessing    = `{"id":"pi_3PsProcessing","object":"payment_intent","amount":2599,"currency":"usd","status":"processing"}`
	errCardDeclined = `{"error":{"charge":"ch_3PsDeclined","code":"card_declined","decline_code":"generic_decline","doc_url":"https://stripe.com/docs/error-codes/card-declined","message":"Your card was declined.","payment_intent":{"id":"pi_3PsDeclined","object":"payment_intent","status":"requires_payment_method"},"request_log_url":"https://dashboard.stripe.com/test/logs/req_test?t=1714567890","type":"card_error"}}`
	errInsufficient = `{"error":{"charge":"ch_3PsFunds","code":"card_declined","decline_code":"insufficient_funds","doc_url":"https://stripe.com/docs/error-codes/card-declined","message":"Your card has insufficient funds.","payment_intent":{"id":"pi_3PsFunds","object":"payment_intent","status":"requires_payment_method"},"type":"card_error"}}`
	errAuthRequired = `{"error":{"charge":"ch_3PsAuth","code":"authentication_required","decline_code":"authentication_required","doc_url":"https://stripe.com/docs/error-codes/authentication-required","message":"Your card was declined. This transaction requires authentication.","payment_intent":{"id":"pi_3PsAuth","object":"payment_intent","status":"requires_payment_method"},"type":"card_error"}}`
	errKeyInUse     = `{"error":{"code":"idempotency_key_in_use","doc_url":"https://stripe.com/docs/error-codes/idempotency-key-in-use","message":"There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): shop_cs_test_attempt_1. Please try again later.","type":"invalid_request_error"}}`
	errIdempotency  = `{"error":{"message":"Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than 'shop_cs_test_attempt_1' if you meant to execute a different request.","type":"idempotency_error"}}`
	errAPI          = `{"error":{"message":"An unknown error occurred","type":"api_error"}}`
	errRateLimit    = `{"error":{"code":"rate_limit","message":"Too many requests hit the API too quickly. We recommend an exponential backoff of your requests.","type":"invalid_request_error"}}`
	errNoSuchMethod = `{"error":{"code":"resource_missing","doc_url":"https://stripe.com/docs/error-codes/resource-missing","message":"No such PaymentMethod: 'pm_1Nope'","param":"payment_method","type":"invalid_request_error"}}`
	errBadKey       = `{"error":{"message":"Invalid API Key provided: ` + testKey + `","type":"invalid_request_error"}}`
)

func stripeCharge(token string) payments.Request {
	return payments.Request{
		Amount: 2599, Currency: "usd", Token: token, IdempotencyKey: "shop_cs_test_attempt_1",
		Description: "Checkout cs_test", Metadata: map[string]string{"checkout_session_id": "cs_test", "order_id": "ord_testtesttesttesttesttest"},
	}
}

func TestStripeCharge(t *testing.T) {
	is := func(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }
	tests := []struct {
		name    string
		token   string
		script  []reply
		want    *payments.Result
		wantErr func(error) bool // when no Result is wanted
		tries   int
	}{
		{name: "succeeded", token: "pm_card_visa", script: []reply{{status: 200, body: piSucceeded}},
			want: &payments.Result{Status: payments.Succeeded, Reference: "pi_3PsSucceeded"}, tries: 1},
		{name: "shared payment token", token: "spt_1RgaZcB7WZ01zgkWN1pyM2rT", script: []reply{{status: 200, body: piSucceeded}},
			want: &payments.Result{Status: payments.Succeeded, Reference: "pi_3PsSucceeded"}, tries: 1},
		{name: "requires action", token: "pm_card_authenticationRequired", script: []reply{{status: 200, body: piRequiresAction}},
			want: &payments.Result{Status: payments.RequiresAction, Reference: "pi_3PsAction", DeclineCode: "authentication_required",
				Message: "Your bank needs you to confirm this payment."}, tries: 1},
		{name: "card declined", token: "pm_card_visa_chargeDeclined", script: []reply{{status: 402, body: errCardDeclined}},
			want: &payments.Result{Status: payments.Declined, Reference: "pi_3PsDeclined", DeclineCode: "generic_decline",
				Message: "Your card was declined."}, tries: 1},
		{name: "insufficient funds", token: "pm_card_chargeDeclinedInsufficientFunds", script: []reply{{status: 402, body: errInsufficient}},
			want: &payments.Result{Status: payments.Declined, Reference: "pi_3PsFunds", DeclineCode: "insufficient_funds",
				Message: "Your card has insufficient funds."}, tries: 1},
		{name: "402 authentication required", token: "pm_card_authenticationRequired", script: []reply{{status: 402, body: errAuthRequired}},
			want: &payments.Result{Status: payments.RequiresAction, Reference: "pi_3PsAuth", DeclineCode: "authentication_required",
				Message: "Your bank needs you to confirm this payment."}, tries: 1},
		{name: "succeeded, with the card", token: "pm_card_mastercard", script: []reply{{status: 200, body: piSucceededCard}},
			want: &payments.Result{Status: payments.Succeeded, Reference: "pi_3PsCard", CardBrand: "mastercard", CardLast4: "4444"}, tries: 1},
		{name: "requires action, with the card", token: "pm_card_authenticationRequired", script: []reply{{status: 200, body: piActionCard}},
			want: &payments.Result{Status: payments.RequiresAction, Reference: "pi_3PsAction", DeclineCode: "authentication_required",
				Message: "Your bank needs you to confirm this payment.", CardBrand: "visa", CardLast4: "3184"}, tries: 1},
		{name: "card declined, with the card", token: "pm_card_visa_chargeDeclined", script: []reply{{status: 402, body: errDeclinedCard}},
			want: &payments.Result{Status: payments.Declined, Reference: "pi_3PsDeclined", DeclineCode: "generic_decline",
				Message: "Your card was declined.", CardBrand: "visa", CardLast4: "0002"}, tries: 1},
		{name: "409 key in use, then 200", token: "pm_card_visa", script: []reply{{status: 409, body: errKeyInUse}, {status: 200, body: piSucceeded}},
			want: &payments.Result{Status: payments.Succeeded, Reference: "pi_3PsSucceeded"}, tries: 2},
		{name: "500 twice, then 200", token: "pm_card_visa", script: []reply{{status: 500, body: errAPI}, {status: 500, body: errAPI}, {status: 200, body: piSucceeded}},
			want: &payments.Result{Status: payments.Succeeded, Reference: "pi_3PsSucceeded"}, tries: 3},
		{name: "429, then 200", token: "pm_card_visa", script: []reply{{status: 429, body: errRateLimit}, {status: 200, body: piSucceeded}},
			want: &payments.Result{Status: payments.Succeeded, Reference: "pi_3PsSucceeded"}, tries: 2},
		{name: "dropped connection, then 200", token: "pm_card_visa", script: []reply{{drop: true}, {status: 200, body: piSucceeded}},
			want: &payments.Result{Status: payments.Succeeded, Reference: "pi_3PsSucceeded"}, tries: 2},
		{name: "500 forever", token: "pm_card_visa", script: []reply{{status: 500, body: errAPI}},
			wantErr: is(payments.ErrUnknownOutcome), tries: 4},
		{name: "502 without JSON forever", token: "pm_card_visa", script: []reply{{status: 502, body: "<html>Bad Gateway</html>"}},
			wantErr: is(payments.ErrUnknownOutcome), tries: 4},
		{name: "dropped forever", token: "pm_card_visa", script: []reply{{drop: true}},
			wantErr: is(payments.ErrUnknownOutcome), tries: 4},
		{name: "409 forever", token: "pm_card_visa", script: []reply{{status: 409, body: errKeyInUse}},
			wantErr: is(payments.ErrUnknownOutcome), tries: 4},
		{name: "processing", token: "pm_card_visa", script: []reply{{status: 200, body: piProcessing}},
			wantErr: is(payments.ErrUnknownOutcome), tries: 1},
		{name: "idempotency error", token: "pm_card_visa", script: []reply{{status: 400, body: errIdempotency}},
			wantErr: func(err error) bool {
				return errors.Is(err, payments.ErrKeyReused) && !errors.Is(err, payments.ErrUnknownOutcome)
			}, tries: 1},
		{name: "unknown payment method", token: "pm_1Nope", script: []reply{{status: 400, body: errNoSuchMethod}},
			wantErr: func(err error) bool {
				var e *shop.Error
				return errors.As(err, &e) && e.Param == "$.payment_data.token"
			}, tries: 1},
		{name: "bad key echoed by the answer", token: "pm_card_visa", script: []reply{{status: 401, body: errBadKey}},
			wantErr: func(err error) bool {
				return err != nil && !errors.Is(err, payments.ErrUnknownOutcome) && shop.ErrorCode(err) == ""
			}, tries: 1},
		{name: "token not accepted", token: "tok_visa", script: []reply{{status: 200, body: piSucceeded}},
			wantErr: func(err error) bool {
				var e *shop.Error
				return errors.As(err, &e) && e.Code == shop.Invalid && e.Param == "$.payment_data.token"
			}, tries: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := serve(t, tt.script...)
			req := stripeCharge(tt.token)
			got, err := s.Charge(context.Background(), req)
			if tt.want != nil {
				if err != nil {
					t.Fatalf("Charge: %v", err)
				}
				if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(payments.Result{}, "Amount", "Currency", "Refunded", "Metadata")); diff != "" {
					t.Errorf("Charge (-want +got):\n%s", diff)
				}
			} else if !tt.wantErr(err) {
				t.Errorf("Charge = %+v, %v: not the error wanted", got, err)
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Errorf("the error shows the secret key: %v", err)
			}
			reqs := f.requests()
			if len(reqs) != tt.tries {
				t.Errorf("%d requests, want %d", len(reqs), tt.tries)
			}
			for i, r := range reqs {
				checkChargeRequest(t, i, r, req)
			}
		})
	}
}

// checkChargeRequest asserts that one try of a charge is what Stripe expects,
// with the charge's own idempotency key.
func checkChargeRequest(t *testing.T, i int, r recorded, req payments.Request) {
	t.Helper()
	if r.Method != http.MethodPost || r.Path != "/v1/payment_intents" {
		t.Errorf("request %d: %s %s, want POST /v1/payment_intents", i, r.Method, r.Path)
	}
	if got := r.Header.Get("Idempotency-Key"); got != req.IdempotencyKey {
		t.Errorf("request %d: Idempotency-Key %q, want %q on every try", i, got, req.IdempotencyKey)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("request %d: Authorization is not the key", i)
	}
	want := url.Values{
		"amount": {"2599"}, "currency": {"usd"}, "confirm": {"true"}, "description": {req.Description},
		"automatic_payment_methods[enabled]":         {"true"},
		"automatic_payment_methods[allow_redirects]": {"never"},
		"metadata[checkout_session_id]":              {"cs_test"},
		"metadata[order_id]":                         {"ord_testtesttesttesttesttest"},
		"metadata[idempotency_key]":                  {req.IdempotencyKey},
		"metadata[charged_by]":                       {"shop"},
		// For the card's brand and last four (Result.CardBrand, CardLast4).
		"expand[0]": {"latest_charge"},
		"expand[1]": {"payment_method"},
	}
	wantVersion := stripe.APIVersion
	if strings.HasPrefix(req.Token, "spt_") {
		want["payment_method_data[shared_payment_granted_token]"] = []string{req.Token}
		wantVersion = payments.DefaultSPTVersion
	} else {
		want["payment_method"] = []string{req.Token}
	}
	if diff := cmp.Diff(want, r.Form); diff != "" {
		t.Errorf("request %d form (-want +got):\n%s", i, diff)
	}
	if got := r.Header.Values("Stripe-Version"); len(got) != 1 || got[0] != wantVersion {
		t.Errorf("request %d: Stripe-Version %q, want %q", i, got, wantVersion)
	}
}

// TestStripeChargeContext: a caller's deadline ends the retries, and the
// outcome is unknown.
func TestStripeChargeContext(t *testing.T) {
	f := &fakeStripe{t: t, script: []reply{{status: 500, body: errAPI}}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s, err := payments.NewStripe(payments.StripeOptions{SecretKey: testKey, APIBase: srv.URL, Retries: 100, RetryWait: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = s.Charge(ctx, stripeCharge("pm_card_visa"))
	if !errors.Is(err, payments.ErrUnknownOutcome) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Charge = %v, want ErrUnknownOutcome and DeadlineExceeded", err)
	}
	if n := len(f.requests()); n < 1 || n > 4 {
		t.Errorf("%d requests in 50ms with 20ms doubling waits", n)
	}
}

func TestStripeRefund(t *testing.T) {
	const refunded = `{"id":"re_3PsRefund","object":"refund","amount":1000,"currency":"usd","payment_intent":"pi_3PsSucceeded","status":"succeeded"}`
	const tooLarge = `{"error":{"code":"amount_too_large","doc_url":"https://stripe.com/docs/error-codes/amount-too-large","message":"Refund amount ($30.00) is greater than unrefunded amount on charge ($25.99)","param":"amount","type":"invalid_request_error"}}`
	const already = `{"error":{"code":"charge_already_refunded","doc_url":"https://stripe.com/docs/error-codes/charge-already-refunded","message":"Charge ch_3PsSucceeded has already been refunded.","type":"invalid_request_error"}}`
	tests := []struct {
		name     string
		reason   string
		script   []reply
		want     *payments.Refund
		wantCode shop.Code
		form     url.Values
	}{
		{name: "customer", reason: "requested_by_customer", script: []reply{{status: 500, body: errAPI}, {status: 200, body: refunded}},
			want: &payments.Refund{Reference: "re_3PsRefund", Amount: 1000, Status: "succeeded"},
			form: url.Values{"reason": {"requested_by_customer"}}},
		{name: "free text", reason: "Arrived broken", script: []reply{{status: 200, body: refunded}},
			want: &payments.Refund{Reference: "re_3PsRefund", Amount: 1000, Status: "succeeded"},
			form: url.Values{"reason": {"requested_by_customer"}, "metadata[reason]": {"Arrived broken"}}},
		{name: "fraud", reason: "fraud", script: []reply{{status: 200, body: refunded}},
			want: &payments.Refund{Reference: "re_3PsRefund", Amount: 1000, Status: "succeeded"},
			form: url.Values{"reason": {"fraudulent"}}},
		{name: "no reason", script: []reply{{status: 200, body: refunded}},
			want: &payments.Refund{Reference: "re_3PsRefund", Amount: 1000, Status: "succeeded"}, form: url.Values{}},
		{name: "too large", script: []reply{{status: 400, body: tooLarge}}, wantCode: shop.Invalid, form: url.Values{}},
		{name: "already refunded", script: []reply{{status: 400, body: already}}, wantCode: shop.Invalid, form: url.Values{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := serve(t, tt.script...)
			got, err := s.Refund(context.Background(), payments.RefundRequest{
				Reference: "pi_3PsSucceeded", Amount: 1000, IdempotencyKey: "refund_1", Reason: tt.reason,
			})
			if tt.wantCode != "" {
				if code := shop.ErrorCode(err); code != tt.wantCode {
					t.Errorf("Refund = %v, want a shop.Error %q", err, tt.wantCode)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Refund (-want +got):\n%s", diff)
			}
			for i, r := range f.requests() {
				want := url.Values{"payment_intent": {"pi_3PsSucceeded"}, "amount": {"1000"}}
				for k, v := range tt.form {
					want[k] = v
				}
				if diff := cmp.Diff(want, r.Form); diff != "" || r.Path != "/v1/refunds" {
					t.Errorf("request %d to %s (-want +got):\n%s", i, r.Path, diff)
				}
				if k := r.Header.Get("Idempotency-Key"); k != "refund_1" {
					t.Errorf("request %d: Idempotency-Key %q", i, k)
				}
			}
		})
	}
}

func TestStripeLookup(t *testing.T) {
	const ours = `{"id":"pi_3PsOurs","object":"payment_intent","amount":2599,"currency":"usd","status":"succeeded","metadata":{"idempotency_key":"shop_cs_test_attempt_1"}}`
	const other = `{"id":"pi_3PsOther","object":"payment_intent","amount":100,"currency":"usd","status":"succeeded","metadata":{"idempotency_key":"shop_cs_other_attempt_1"}}`
	page := func(object, url string, data ...string) reply {
		return reply{status: 200, body: `{"object":"` + object + `","data":[` + strings.Join(data, ",") + `],"has_more":false,"url":"` + url + `"}`}
	}
	list := func(data ...string) reply { return page("list", "/v1/payment_intents", data...) }
	search := func(data ...string) reply { return page("search_result", "/v1/payment_intents/search", data...) }
	found := &payments.Result{Status: payments.Succeeded, Reference: "pi_3PsOurs", Amount: 2599, Currency: "usd",
		Metadata: map[string]string{"idempotency_key": "shop_cs_test_attempt_1"}}
	tests := []struct {
		name      string
		script    []reply
		want      *payments.Result
		wantFound bool
		paths     []string
	}{
		{"among the recent", []reply{list(other, ours)}, found, true, []string{"/v1/payment_intents"}},
		{"by search", []reply{list(other), search(ours)}, found, true, []string{"/v1/payment_intents", "/v1/payment_intents/search"}},
		{"nowhere", []reply{list(other), search()}, nil, false, []string{"/v1/payment_intents", "/v1/payment_intents/search"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, f := serve(t, tt.script...)
			got, ok, err := s.Lookup(context.Background(), "shop_cs_test_attempt_1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || ok != tt.wantFound {
				t.Errorf("Lookup found %v (-want +got):\n%s", ok, diff)
			}
			var paths []string
			for _, r := range f.requests() {
				paths = append(paths, r.Path)
				if r.Method != http.MethodGet {
					t.Errorf("%s %s, want GET", r.Method, r.Path)
				}
				if q := r.Form.Get("query"); r.Path == "/v1/payment_intents/search" && q != "metadata['idempotency_key']:'shop_cs_test_attempt_1'" {
					t.Errorf("search query %q", q)
				}
			}
			if diff := cmp.Diff(tt.paths, paths); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("Stripe down", func(t *testing.T) {
		s, f := serve(t, reply{status: 503, body: errAPI})
		if _, _, err := s.Lookup(context.Background(), "shop_cs_test_attempt_1"); !errors.Is(err, payments.ErrUnknownOutcome) {
			t.Errorf("Lookup = %v, want ErrUnknownOutcome", err)
		}
		if n := len(f.requests()); n != 4 {
			t.Errorf("%d requests, want 4", n)
		}
	})
}

func TestNewStripe(t *testing.T) {
	tests := []struct {
		key  string
		mode payments.Mode
		ok   bool
	}{
		{"sk_test_51AbcdefGhijklmnop", payments.ModeTest, true},
		{"rk_test_51AbcdefGhijklmnop", payments.ModeTest, true},
		{"sk_test_51AbcdefGhijklmnop", "", true},
		{"sk_live_51AbcdefGhijklmnop", payments.ModeLive, true},
		{"rk_live_51AbcdefGhijklmnop", payments.ModeLive, true},
		{"sk_live_51AbcdefGhijklmnop", payments.ModeTest, false},
		{"sk_live_51AbcdefGhijklmnop", "", false},
		{"rk_live_51AbcdefGhijklmnop", payments.ModeTest, false},
		{"sk_test_51AbcdefGhijklmnop", payments.ModeLive, false},
		{"pk_test_51AbcdefGhijklmnop", payments.ModeTest, false},
		{"", payments.ModeTest, false},
		{"garbage", payments.ModeTest, false},
		{"sk_test_", payments.ModeTest, false},
		{"sk_test_51Abcdef Ghijklmnop", payments.ModeTest, false},
		{`"sk_test_51AbcdefGhijklmnop"`, payments.ModeTest, false},
		{"sk_test_51AbcdefGhijklmnop", "sandbox", false},
	}
	for _, tt := range tests {
		s, err := payments.NewStripe(payments.StripeOptions{SecretKey: tt.key, Mode: tt.mode})
		if tt.ok {
			if err != nil {
				t.Errorf("NewStripe(%q, %q): %v", tt.key, tt.mode, err)
			} else if s.Name() != "stripe" || (tt.mode != "" && s.Mode() != tt.mode) {
				t.Errorf("NewStripe(%q, %q): Name %q, Mode %q", tt.key, tt.mode, s.Name(), s.Mode())
			}
			continue
		}
		switch {
		case err == nil:
			t.Errorf("NewStripe(%q, %q) accepted the key", tt.key, tt.mode)
		case tt.key != "" && strings.Contains(err.Error(), tt.key):
			t.Errorf("NewStripe(%q, %q) = %v: shows the key", tt.key, tt.mode, err)
		case tt.mode != "sandbox" && !strings.Contains(err.Error(), "STRIPE_SECRET_KEY"):
			t.Errorf("NewStripe(%q, %q) = %v: does not name STRIPE_SECRET_KEY", tt.key, tt.mode, err)
		}
	}
}
