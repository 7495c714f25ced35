// Package stripetest is a small stateful emulator of the parts of Stripe's
// API the shop uses, for tests: an HTTP server on 127.0.0.1 that answers in
// Stripe's JSON shapes, so that a real [payments.Stripe] (stripe-go) can be
// driven through a whole hosted checkout, a charge, a lookup and refunds.
//
// It emulates, with form-encoded bodies and Idempotency-Key replay as Stripe
// does them:
//
//   - POST /v1/coupons
//   - POST /v1/checkout/sessions, GET /v1/checkout/sessions/{id},
//     POST /v1/checkout/sessions/{id}/expire
//   - POST /v1/payment_intents (create and confirm with Stripe's test
//     payment methods: pm_card_visa, pm_card_visa_chargeDeclined,
//     pm_card_chargeDeclinedInsufficientFunds, pm_card_authenticationRequired,
//     …), GET /v1/payment_intents/{id}, GET /v1/payment_intents (list,
//     newest first), GET /v1/payment_intents/search (only queries of the
//     form metadata['key']:'value')
//   - POST /v1/refunds
//
// A PaymentIntent's latest_charge and payment_method are ids, or objects
// where the request asks with expand[] (latest_charge, payment_method;
// data.… in lists and searches; payment_intent, payment_intent.… on a
// Checkout Session): the charge's payment_method_details.card and the
// payment method's card have the brand and last four digits of the test
// card behind each test payment method (pm_card_visa: visa 4242,
// pm_card_mastercard: mastercard 4444, pm_card_amex: amex 8431,
// pm_card_visa_chargeDeclined: visa 0002, …; see cards.go). A decline's
// card error and last_payment_error carry the payment method too, as
// Stripe's do. Fields it cannot expand are refused with a 400.
//
// The test plays the buyer and Stripe's clock with [Server.Pay] and
// [Server.Expire], makes webhook events with [Server.Event], injects
// failures with [Server.FailNext] and reads what happened with
// [Server.Requests], [Server.PaymentIntents] and [Server.Refunds].
//
// Only tests import it. It does not import stripe-go: it writes Stripe's
// JSON itself.
package stripetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shop/payments"
)

// SecretKey is a test-mode key the emulator accepts; it accepts any key
// that starts with sk_test_ or rk_test_.
const SecretKey = "sk_test_51StripetestEmulatorNotARealKey0123456789"

// WebhookSecret is a signing secret for [Server.Event]; any string works.
const WebhookSecret = "whsec_stripetest_emulator_secret"

// APIVersion is the api_version of the events [Server.Event] makes:
// stripe-go v82's.
const APIVersion = "2025-08-27.basil"

// Request is one request the emulator received, in order of arrival.
type Request struct {
	Method string
	Path   string
	// Form holds the form body and the query string; keys are Stripe's
	// flat ones, such as "metadata[idempotency_key]" or
	// "line_items[0][price_data][unit_amount]".
	Form url.Values
	// IdempotencyKey is the Idempotency-Key header ("" without one).
	IdempotencyKey string
	// Status is the HTTP status the emulator answered.
	Status int
	// Replayed is true when the answer was a stored one, replayed for an
	// Idempotency-Key seen before with the same request.
	Replayed bool
}

// PaymentIntent is a PaymentIntent the emulator holds.
type PaymentIntent struct {
	ID string
	// Status is Stripe's: "succeeded", "requires_payment_method" (declined),
	// "requires_action", "requires_confirmation"…
	Status   string
	Amount   int64
	Currency string
	Metadata map[string]string
	// AmountRefunded is the sum of its refunds.
	AmountRefunded int64
	// CheckoutSession is the cs_… id when a Checkout Session's payment
	// made it ([Server.Pay]), "" when it was created through the API.
	CheckoutSession string
}

// Refund is a refund the emulator made.
type Refund struct {
	ID            string
	PaymentIntent string
	Amount        int64
	// Reason is Stripe's reason ("requested_by_customer", …) or "".
	Reason   string
	Metadata map[string]string
}

// Server is the emulator. Its methods may be called from any goroutine;
// those that take a test's failures (Pay, Expire, Event with an unknown id)
// call t.Fatalf, so call them from the test's goroutine.
type Server struct {
	// URL is the base to give payments.StripeOptions.APIBase, such as
	// http://127.0.0.1:41234.
	URL string

	t   testing.TB
	srv *httptest.Server

	mu        sync.Mutex
	seq       int64 // creation order, for newest-first lists
	coupons   map[string]*coupon
	sessions  map[string]*session
	intents   map[string]*intent
	refunds   []*refund
	requests  []Request
	idem      map[string]stored
	failLeft  int
	failWith  int
	nowOffset time.Duration
}

// New starts an emulator on 127.0.0.1, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("stripetest: listen on 127.0.0.1: %v", err)
	}
	s := &Server{
		t:        t,
		coupons:  map[string]*coupon{},
		sessions: map[string]*session{},
		intents:  map[string]*intent{},
		idem:     map[string]stored{},
	}
	s.srv = httptest.NewUnstartedServer(s)
	_ = s.srv.Listener.Close()
	s.srv.Listener = ln
	s.srv.Start()
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Client returns an HTTP client for the emulator, whose idle connections
// are closed with it.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Stripe returns a payments.Stripe pointed at the emulator: opts as given,
// with APIBase the emulator's URL and, where they are zero, SecretKey
// [SecretKey], HTTPClient [Server.Client] and RetryWait 1ms (Retries 0
// means payments' default of 3; -1 means none).
func (s *Server) Stripe(opts payments.StripeOptions) *payments.Stripe {
	s.t.Helper()
	opts.APIBase = s.URL
	if opts.SecretKey == "" {
		opts.SecretKey = SecretKey
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = s.Client()
	}
	if opts.RetryWait == 0 {
		opts.RetryWait = time.Millisecond
	}
	p, err := payments.NewStripe(opts)
	if err != nil {
		s.t.Fatalf("stripetest: NewStripe: %v", err)
	}
	return p
}

// FailNext answers the next n requests, whatever they are, with status (500
// when 0) and Stripe's error for it: api_error for a 5xx, rate_limit for a
// 429, idempotency_key_in_use for a 409. They change nothing and store no
// idempotent answer, as when Stripe fails before it starts a request; they
// do show in [Server.Requests].
func (s *Server) FailNext(n int, status int) {
	if status == 0 {
		status = http.StatusInternalServerError
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failLeft, s.failWith = n, status
}

// Advance moves the emulator's clock by d: Checkout Sessions whose
// expires_at has passed are expired, as Stripe would do, and bounds on a
// new session's expires_at count from the moved clock.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nowOffset += d
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Form = cloneValues(r.Form)
		out[i] = r
	}
	return out
}

// PaymentIntents returns the PaymentIntents, oldest first.
func (s *Server) PaymentIntents() []PaymentIntent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []*intent
	for _, pi := range s.intents {
		all = append(all, pi)
	}
	slices.SortFunc(all, func(a, b *intent) int { return int(a.seq - b.seq) })
	out := make([]PaymentIntent, len(all))
	for i, pi := range all {
		out[i] = PaymentIntent{
			ID: pi.ID, Status: pi.Status, Amount: pi.Amount, Currency: pi.Currency,
			Metadata: cloneMap(pi.Metadata), AmountRefunded: pi.refunded, CheckoutSession: pi.session,
		}
	}
	return out
}

// Refunds returns the refunds, oldest first.
func (s *Server) Refunds() []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Refund, len(s.refunds))
	for i, re := range s.refunds {
		out[i] = Refund{ID: re.ID, PaymentIntent: re.PaymentIntent, Amount: re.Amount, Metadata: cloneMap(re.Metadata)}
		if re.Reason != nil {
			out[i].Reason = *re.Reason
		}
	}
	return out
}

// Pay is the buyer paying Checkout Session id with a card: the session
// becomes complete and paid, and a succeeded PaymentIntent of its
// amount_total and currency, with its payment_intent_data.metadata, is
// created. It returns the PaymentIntent's id. The session must be open.
func (s *Server) Pay(id string) (paymentIntent string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.sessions[id]
	if cs == nil {
		s.t.Fatalf("stripetest: Pay: no checkout session %q", id)
		return ""
	}
	s.refresh(cs)
	if cs.Status != "open" {
		s.t.Fatalf("stripetest: Pay: checkout session %s is %s, not open", id, cs.Status)
		return ""
	}
	pi := s.newIntent(cs.AmountTotal, cs.Currency, cloneMap(cs.piMetadata))
	pi.method = s.newMethod("pm_card_visa") // the buyer types 4242 4242 4242 4242
	s.succeed(pi)
	pi.PaymentMethodTypes = []string{"card"}
	pi.session = cs.ID
	cs.Status, cs.PaymentStatus, cs.URL = "complete", "paid", nil
	cs.PaymentIntent = &pi.ID
	email := "buyer@example.com"
	if cs.CustomerEmail != nil {
		email = *cs.CustomerEmail
	}
	cs.CustomerDetails = &customerDetails{Email: email}
	if c := s.coupons[cs.coupon]; c != nil {
		c.TimesRedeemed++
		if c.MaxRedemptions != nil && c.TimesRedeemed >= *c.MaxRedemptions {
			c.Valid = false
		}
	}
	return pi.ID
}

// Expire is Stripe expiring Checkout Session id (its expires_at passing):
// an open session becomes expired; a complete or expired one stays as it
// is.
func (s *Server) Expire(id string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.sessions[id]
	if cs == nil {
		s.t.Fatalf("stripetest: Expire: no checkout session %q", id)
		return
	}
	if cs.Status == "open" {
		cs.expire()
	}
}

// SuccessURL returns the success_url of Checkout Session id with Stripe's
// {CHECKOUT_SESSION_ID} replaced, where Stripe sends the buyer after Pay.
func (s *Server) SuccessURL(id string) string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.sessions[id]
	if cs == nil {
		s.t.Fatalf("stripetest: SuccessURL: no checkout session %q", id)
		return ""
	}
	if cs.SuccessURL == nil {
		return ""
	}
	return strings.ReplaceAll(*cs.SuccessURL, "{CHECKOUT_SESSION_ID}", cs.ID)
}

// Event returns a webhook event of type typ (such as
// "checkout.session.completed" or "payment_intent.succeeded") about the
// object objectID (a cs_…, pi_… or re_… id) as it is now, and its
// Stripe-Signature header, signed with secret now as Stripe signs:
// "t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<payload>">".
func (s *Server) Event(typ, secret string, objectID string) (payload []byte, signature string) {
	s.t.Helper()
	s.mu.Lock()
	var obj any
	switch {
	case s.sessions[objectID] != nil:
		cs := s.sessions[objectID]
		s.refresh(cs)
		obj = cs
	case s.intents[objectID] != nil:
		obj = s.intents[objectID]
	default:
		for _, re := range s.refunds {
			if re.ID == objectID {
				obj = re
			}
		}
	}
	if obj == nil {
		s.mu.Unlock()
		s.t.Fatalf("stripetest: Event: no object %q", objectID)
		return nil, ""
	}
	now := s.now()
	ev := map[string]any{
		"id": s.randID("evt_1", 24), "object": "event", "api_version": APIVersion,
		"created": now.Unix(), "data": map[string]any{"object": obj},
		"livemode": false, "pending_webhooks": 1,
		"request": map[string]any{"id": nil, "idempotency_key": nil}, "type": typ,
	}
	payload, err := json.MarshalIndent(ev, "", "  ")
	s.mu.Unlock()
	if err != nil {
		s.t.Fatalf("stripetest: Event: %v", err)
	}
	return payload, Sign(payload, secret, time.Now())
}

// Sign returns the Stripe-Signature header of payload signed with secret at
// t, as Stripe signs webhooks.
func Sign(payload []byte, secret string, t time.Time) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", t.Unix())
	mac.Write(payload)
	return fmt.Sprintf("t=%d,v1=%s", t.Unix(), hex.EncodeToString(mac.Sum(nil)))
}

// Stripe's objects, with the fields its API reference names. Fields that
// are json:"-" are the emulator's own.

type coupon struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	AmountOff        *int64            `json:"amount_off"`
	Created          int64             `json:"created"`
	Currency         *string           `json:"currency"`
	Duration         string            `json:"duration"`
	DurationInMonths *int64            `json:"duration_in_months"`
	Livemode         bool              `json:"livemode"`
	MaxRedemptions   *int64            `json:"max_redemptions"`
	Metadata         map[string]string `json:"metadata"`
	Name             *string           `json:"name"`
	PercentOff       *float64          `json:"percent_off"`
	RedeemBy         *int64            `json:"redeem_by"`
	TimesRedeemed    int64             `json:"times_redeemed"`
	Valid            bool              `json:"valid"`
}

type session struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	AdaptivePricing    *adaptivePricing  `json:"adaptive_pricing"`
	AmountSubtotal     int64             `json:"amount_subtotal"`
	AmountTotal        int64             `json:"amount_total"`
	CancelURL          *string           `json:"cancel_url"`
	ClientReferenceID  *string           `json:"client_reference_id"`
	Created            int64             `json:"created"`
	Currency           string            `json:"currency"`
	Customer           *string           `json:"customer"`
	CustomerDetails    *customerDetails  `json:"customer_details"`
	CustomerEmail      *string           `json:"customer_email"`
	Discounts          []discount        `json:"discounts"`
	ExpiresAt          int64             `json:"expires_at"`
	Livemode           bool              `json:"livemode"`
	Metadata           map[string]string `json:"metadata"`
	Mode               string            `json:"mode"`
	PaymentIntent      *string           `json:"payment_intent"`
	PaymentMethodTypes []string          `json:"payment_method_types"`
	PaymentStatus      string            `json:"payment_status"`
	ShippingCost       *shippingCost     `json:"shipping_cost"`
	Status             string            `json:"status"`
	SuccessURL         *string           `json:"success_url"`
	TotalDetails       totalDetails      `json:"total_details"`
	UIMode             string            `json:"ui_mode"`
	URL                *string           `json:"url"`

	piMetadata map[string]string
	coupon     string
}

type adaptivePricing struct {
	Enabled bool `json:"enabled"`
}

type customerDetails struct {
	Email string `json:"email"`
}

type discount struct {
	Coupon        string  `json:"coupon"`
	PromotionCode *string `json:"promotion_code"`
}

type shippingCost struct {
	AmountSubtotal int64 `json:"amount_subtotal"`
	AmountTax      int64 `json:"amount_tax"`
	AmountTotal    int64 `json:"amount_total"`
	// ShippingRate is an shr_… id: Stripe makes a rate of shipping_rate_data.
	ShippingRate string `json:"shipping_rate"`
}

type totalDetails struct {
	AmountDiscount int64 `json:"amount_discount"`
	AmountShipping int64 `json:"amount_shipping"`
	AmountTax      int64 `json:"amount_tax"`
}

func (cs *session) expire() {
	cs.Status, cs.URL = "expired", nil
}

type intent struct {
	ID                      string            `json:"id"`
	Object                  string            `json:"object"`
	Amount                  int64             `json:"amount"`
	AmountCapturable        int64             `json:"amount_capturable"`
	AmountReceived          int64             `json:"amount_received"`
	AutomaticPaymentMethods *autoMethods      `json:"automatic_payment_methods"`
	CanceledAt              *int64            `json:"canceled_at"`
	CaptureMethod           string            `json:"capture_method"`
	ClientSecret            string            `json:"client_secret"`
	ConfirmationMethod      string            `json:"confirmation_method"`
	Created                 int64             `json:"created"`
	Currency                string            `json:"currency"`
	Description             *string           `json:"description"`
	LastPaymentError        *apiError         `json:"last_payment_error"`
	LatestCharge            *string           `json:"latest_charge"`
	Livemode                bool              `json:"livemode"`
	Metadata                map[string]string `json:"metadata"`
	NextAction              any               `json:"next_action"`
	PaymentMethod           *string           `json:"payment_method"`
	PaymentMethodTypes      []string          `json:"payment_method_types"`
	Status                  string            `json:"status"`

	seq      int64
	refunded int64
	session  string
	// method and charge are the PaymentMethod confirmed and the latest
	// charge, shown expanded where a request asks (see intent.view).
	method *paymentMethod
	charge *charge
}

type autoMethods struct {
	AllowRedirects string `json:"allow_redirects,omitempty"`
	Enabled        bool   `json:"enabled"`
}

// succeed is pi paid with its payment method (set before).
func (s *Server) succeed(pi *intent) {
	pi.Status, pi.AmountReceived = "succeeded", pi.Amount
	pi.PaymentMethod = &pi.method.ID
	s.charge(pi, "", "")
}

type refund struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Amount             int64             `json:"amount"`
	BalanceTransaction string            `json:"balance_transaction"`
	Charge             string            `json:"charge"`
	Created            int64             `json:"created"`
	Currency           string            `json:"currency"`
	Metadata           map[string]string `json:"metadata"`
	PaymentIntent      string            `json:"payment_intent"`
	Reason             *string           `json:"reason"`
	ReceiptNumber      *string           `json:"receipt_number"`
	Status             string            `json:"status"`
}

// apiError is the "error" of Stripe's error answers, and a PaymentIntent's
// last_payment_error.
type apiError struct {
	Type          string         `json:"type"`
	Code          string         `json:"code,omitempty"`
	DeclineCode   string         `json:"decline_code,omitempty"`
	Message       string         `json:"message"`
	Param         string         `json:"param,omitempty"`
	DocURL        string         `json:"doc_url,omitempty"`
	Charge        string         `json:"charge,omitempty"`
	PaymentIntent *intent        `json:"payment_intent,omitempty"`
	PaymentMethod *paymentMethod `json:"payment_method,omitempty"`
}

// answer is an HTTP status and a JSON body.
type answer struct {
	status int
	body   []byte
}

// stored is the first answer to an Idempotency-Key, with what it answered.
type stored struct {
	method, path, form string
	answer
}

func jsonAnswer(status int, v any) answer {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // only the emulator's own types are marshalled
	}
	return answer{status, append(body, '\n')}
}

func errAnswer(status int, e apiError) answer {
	if e.Code != "" && e.DocURL == "" {
		e.DocURL = "https://stripe.com/docs/error-codes/" + strings.ReplaceAll(e.Code, "_", "-")
	}
	return jsonAnswer(status, map[string]any{"error": e})
}

func invalid(code, param, format string, args ...any) answer {
	return errAnswer(http.StatusBadRequest, apiError{Type: "invalid_request_error", Code: code, Param: param, Message: fmt.Sprintf(format, args...)})
}

func missing(param string) answer {
	return invalid("parameter_missing", param, "Missing required param: %s.", param)
}

func noSuch(status int, object, id, param string) answer {
	return errAnswer(status, apiError{Type: "invalid_request_error", Code: "resource_missing", Param: param,
		Message: fmt.Sprintf("No such %s: '%s'", object, id)})
}

// ServeHTTP answers one request to Stripe's API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(body))
	if form == nil {
		form = url.Values{}
	}
	for k, v := range r.URL.Query() {
		form[k] = append(form[k], v...)
	}
	key := r.Header.Get("Idempotency-Key")

	s.mu.Lock()
	var a answer
	replayed := false
	switch {
	case s.failLeft > 0:
		s.failLeft--
		a = failure(s.failWith, key)
	case err != nil:
		a = invalid("", "", "Invalid request: the body is not form-encoded (%v).", err)
	default:
		a, replayed = s.serve(r, form, key)
	}
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path, Form: form, IdempotencyKey: key, Status: a.status, Replayed: replayed,
	})
	reqID := s.randID("req_", 14)
	s.mu.Unlock()

	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Request-Id", reqID)
	h.Set("Stripe-Version", APIVersion)
	if key != "" && r.Method == http.MethodPost {
		h.Set("Idempotency-Key", key)
		if replayed {
			h.Set("Idempotent-Replayed", "true")
		}
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// failure is FailNext's answer.
func failure(status int, key string) answer {
	switch status {
	case http.StatusTooManyRequests:
		return errAnswer(status, apiError{Type: "invalid_request_error", Code: "rate_limit",
			Message: "Too many requests hit the API too quickly. We recommend an exponential backoff of your requests."})
	case http.StatusConflict:
		return errAnswer(status, apiError{Type: "invalid_request_error", Code: "idempotency_key_in_use",
			Message: fmt.Sprintf("There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): %s. Please try again later.", key)})
	}
	return errAnswer(status, apiError{Type: "api_error", Message: "An unknown error occurred"})
}

// serve checks the key, replays or refuses a reused Idempotency-Key, and
// otherwise routes the request, storing its answer for the key. Stripe
// stores the answer of a request it started to run (a success, a decline,
// a refusal by the endpoint) and none for one refused before (parameters
// that fail validation): here, every answer but a 400 or 404.
func (s *Server) serve(r *http.Request, form url.Values, key string) (answer, bool) {
	if a, ok := checkAuth(r.Header.Get("Authorization")); !ok {
		return a, false
	}
	if r.Method != http.MethodPost || key == "" {
		return s.route(r.Method, r.URL.Path, form), false
	}
	encoded := form.Encode()
	if prev, ok := s.idem[key]; ok {
		switch {
		case prev.method != r.Method || prev.path != r.URL.Path:
			return errAnswer(http.StatusBadRequest, apiError{Type: "idempotency_error", Message: fmt.Sprintf(
				"Keys for idempotent requests can only be used for the same endpoint they were first used for ('%s %s' vs '%s %s'). Try using a key other than '%s' if you meant to execute a different request.",
				prev.method, prev.path, r.Method, r.URL.Path, key)}), false
		case prev.form != encoded:
			return errAnswer(http.StatusBadRequest, apiError{Type: "idempotency_error", Message: fmt.Sprintf(
				"Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '%s' if you meant to execute a different request.", key)}), false
		}
		return prev.answer, true
	}
	a := s.route(r.Method, r.URL.Path, form)
	if a.status != http.StatusBadRequest && a.status != http.StatusNotFound {
		s.idem[key] = stored{method: r.Method, path: r.URL.Path, form: encoded, answer: a}
	}
	return a, false
}

func checkAuth(h string) (answer, bool) {
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || key == "" {
		return errAnswer(http.StatusUnauthorized, apiError{Type: "invalid_request_error",
			Message: "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/."}), false
	}
	if !strings.HasPrefix(key, "sk_test_") && !strings.HasPrefix(key, "rk_test_") {
		shown := key
		if len(shown) > 12 {
			shown = shown[:8] + strings.Repeat("*", len(shown)-12) + shown[len(shown)-4:]
		}
		return errAnswer(http.StatusUnauthorized, apiError{Type: "invalid_request_error",
			Message: "Invalid API Key provided: " + shown}), false
	}
	return answer{}, true
}

func (s *Server) route(method, path string, form url.Values) answer {
	parts := strings.Split(strings.TrimPrefix(path, "/v1/"), "/")
	switch {
	case method == http.MethodPost && path == "/v1/coupons":
		return s.createCoupon(form)
	case method == http.MethodPost && path == "/v1/checkout/sessions":
		return s.createSession(form)
	case len(parts) == 3 && parts[0] == "checkout" && parts[1] == "sessions" && method == http.MethodGet:
		expand, bad := expansions(form, "payment_intent", "payment_intent.latest_charge", "payment_intent.payment_method")
		if bad != nil {
			return *bad
		}
		cs := s.sessions[parts[2]]
		if cs == nil {
			return noSuch(http.StatusNotFound, "checkout.session", parts[2], "session")
		}
		s.refresh(cs)
		return jsonAnswer(http.StatusOK, s.sessionView(cs, expand))
	case len(parts) == 4 && parts[0] == "checkout" && parts[1] == "sessions" && parts[3] == "expire" && method == http.MethodPost:
		return s.expireSession(parts[2])
	case method == http.MethodPost && path == "/v1/payment_intents":
		return s.createIntent(form)
	case method == http.MethodGet && path == "/v1/payment_intents":
		return s.listIntents(form)
	case method == http.MethodGet && path == "/v1/payment_intents/search":
		return s.searchIntents(form)
	case len(parts) == 2 && parts[0] == "payment_intents" && method == http.MethodGet:
		expand, bad := expansions(form, "latest_charge", "payment_method")
		if bad != nil {
			return *bad
		}
		pi := s.intents[parts[1]]
		if pi == nil {
			return noSuch(http.StatusNotFound, "payment_intent", parts[1], "intent")
		}
		return jsonAnswer(http.StatusOK, pi.view(expand, ""))
	case method == http.MethodPost && path == "/v1/refunds":
		return s.createRefund(form)
	}
	return errAnswer(http.StatusNotFound, apiError{Type: "invalid_request_error", Message: fmt.Sprintf(
		"Unrecognized request URL (%s: %s). Please see https://stripe.com/docs or we can help at https://support.stripe.com/. (stripetest emulates only some of Stripe's API.)", method, path)})
}

func (s *Server) createCoupon(form url.Values) answer {
	c := &coupon{Object: "coupon", Created: s.now().Unix(), Duration: "once", Metadata: params(form, "metadata"), Valid: true}
	if id := form.Get("id"); id != "" {
		if s.coupons[id] != nil {
			return invalid("resource_already_exists", "id", "Coupon already exists.")
		}
		c.ID = id
	} else {
		c.ID = s.randID("", 8)
	}
	if v := form.Get("amount_off"); v != "" {
		n, bad := positive(form, "amount_off")
		if bad != nil {
			return *bad
		}
		c.AmountOff = &n
		cur := form.Get("currency")
		if cur == "" {
			return invalid("parameter_missing", "currency", "You must pass currency when passing amount_off.")
		}
		c.Currency = &cur
	}
	if v := form.Get("percent_off"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 100 {
			return invalid("parameter_invalid_float", "percent_off", "Invalid percent_off: must be more than 0 and at most 100.")
		}
		c.PercentOff = &f
	}
	if (c.AmountOff == nil) == (c.PercentOff == nil) {
		return invalid("", "", "You must pass exactly one of amount_off or percent_off.")
	}
	switch d := form.Get("duration"); d {
	case "", "once", "forever", "repeating":
		if d != "" {
			c.Duration = d
		}
	default:
		return invalid("", "duration", "Invalid duration: must be one of once, repeating, or forever.")
	}
	if form.Has("max_redemptions") {
		n, bad := positive(form, "max_redemptions")
		if bad != nil {
			return *bad
		}
		c.MaxRedemptions = &n
	}
	if name := form.Get("name"); name != "" {
		c.Name = &name
	}
	s.coupons[c.ID] = c
	return jsonAnswer(http.StatusOK, c)
}

func (s *Server) createSession(form url.Values) answer {
	now := s.now()
	if form.Get("mode") == "" {
		return missing("mode")
	}
	if m := form.Get("mode"); m != "payment" {
		return invalid("", "mode", "stripetest emulates only mode payment, not %q.", m)
	}
	currency := form.Get("currency")
	var subtotal int64
	for i := 0; hasPrefix(form, fmt.Sprintf("line_items[%d]", i)); i++ {
		p := fmt.Sprintf("line_items[%d]", i)
		if form.Has(p+"[price]") || !hasPrefix(form, p+"[price_data]") {
			return invalid("", p+"[price_data]", "stripetest emulates only line items with price_data.")
		}
		q, bad := positive(form, p+"[quantity]")
		if bad != nil {
			return *bad
		}
		amount, bad := integer(form, p+"[price_data][unit_amount]")
		if bad != nil {
			return *bad
		}
		if amount < 0 {
			return invalid("parameter_invalid_integer", p+"[price_data][unit_amount]", "This value must be greater than or equal to 0.")
		}
		if form.Get(p+"[price_data][product_data][name]") == "" && form.Get(p+"[price_data][product]") == "" {
			return missing(p + "[price_data][product_data][name]")
		}
		c := form.Get(p + "[price_data][currency]")
		switch {
		case c == "":
			return missing(p + "[price_data][currency]")
		case currency == "":
			currency = c
		case c != currency:
			return invalid("", p+"[price_data][currency]", "All line items must be in the same currency as the Checkout Session (%s), not %s.", currency, c)
		}
		subtotal += q * amount
	}
	if !hasPrefix(form, "line_items[0]") {
		return invalid("parameter_missing", "line_items", "You must provide at least one of `line_items` in `payment` mode.")
	}
	cs := &session{
		ID: s.randID("cs_test_a1", 56), Object: "checkout.session",
		AmountSubtotal: subtotal, Created: now.Unix(), Currency: currency,
		Discounts: []discount{}, ExpiresAt: now.Add(24 * time.Hour).Unix(),
		Metadata: params(form, "metadata"), Mode: "payment", PaymentMethodTypes: []string{"card"},
		PaymentStatus: "unpaid", Status: "open", UIMode: "hosted",
		piMetadata: params(form, "payment_intent_data[metadata]"),
	}
	if form.Has("adaptive_pricing[enabled]") {
		cs.AdaptivePricing = &adaptivePricing{Enabled: form.Get("adaptive_pricing[enabled]") == "true"}
	}
	cs.CancelURL = optional(form, "cancel_url")
	cs.SuccessURL = optional(form, "success_url")
	cs.ClientReferenceID = optional(form, "client_reference_id")
	cs.CustomerEmail = optional(form, "customer_email")
	if form.Has("expires_at") {
		at, bad := integer(form, "expires_at")
		if bad != nil {
			return *bad
		}
		switch {
		case at < now.Add(30*time.Minute).Unix():
			return invalid("", "expires_at", "The `expires_at` timestamp must be at least 30 minutes from Checkout Session creation.")
		case at > now.Add(24*time.Hour).Unix():
			return invalid("", "expires_at", "The `expires_at` timestamp must be less than 24 hours from Checkout Session creation.")
		}
		cs.ExpiresAt = at
	}
	var off int64
	if id := form.Get("discounts[0][coupon]"); id != "" {
		c := s.coupons[id]
		switch {
		case c == nil:
			return noSuch(http.StatusBadRequest, "coupon", id, "discounts[0][coupon]")
		case !c.Valid:
			return invalid("coupon_expired", "discounts[0][coupon]", "This coupon has expired or reached its maximum number of redemptions: `%s`.", id)
		case c.AmountOff != nil && *c.Currency != currency:
			return invalid("", "discounts[0][coupon]", "The coupon `%s` is in %s but the Checkout Session is in %s.", id, *c.Currency, currency)
		case c.AmountOff != nil:
			off = min(*c.AmountOff, subtotal)
		default:
			off = int64(float64(subtotal) * *c.PercentOff / 100)
		}
		cs.coupon = id
		cs.Discounts = []discount{{Coupon: id}}
	}
	var shipping int64
	if p := "shipping_options[0][shipping_rate_data]"; hasPrefix(form, p) {
		n, bad := integer(form, p+"[fixed_amount][amount]")
		if bad != nil {
			return *bad
		}
		if form.Get(p+"[display_name]") == "" {
			return missing(p + "[display_name]")
		}
		if c := form.Get(p + "[fixed_amount][currency]"); c != currency {
			return invalid("", p+"[fixed_amount][currency]", "The shipping rate's currency (%s) must be the Checkout Session's (%s).", c, currency)
		}
		shipping = n
		cs.ShippingCost = &shippingCost{AmountSubtotal: n, AmountTotal: n, ShippingRate: s.randID("shr_1", 24)}
	}
	cs.AmountTotal = subtotal - off + shipping
	cs.TotalDetails = totalDetails{AmountDiscount: off, AmountShipping: shipping}
	u := "https://checkout.stripe.com/c/pay/" + cs.ID + "#" + s.randID("fid", 40)
	cs.URL = &u
	s.sessions[cs.ID] = cs
	return jsonAnswer(http.StatusOK, cs)
}

func (s *Server) expireSession(id string) answer {
	cs := s.sessions[id]
	if cs == nil {
		return noSuch(http.StatusNotFound, "checkout.session", id, "session")
	}
	s.refresh(cs)
	if cs.Status != "open" {
		return errAnswer(http.StatusBadRequest, apiError{Type: "invalid_request_error", Message: fmt.Sprintf(
			"Only Checkout Sessions with a status in [\"open\"] can be expired. This Checkout Session has a status of `%s`.", cs.Status)})
	}
	cs.expire()
	return jsonAnswer(http.StatusOK, cs)
}

// Stripe's test payment methods and the outcome of a payment with them.
var declines = map[string]struct{ code, decline, param, message string }{
	"pm_card_visa_chargeDeclined":                  {"card_declined", "generic_decline", "", "Your card was declined."},
	"pm_card_chargeDeclined":                       {"card_declined", "generic_decline", "", "Your card was declined."},
	"pm_card_visa_chargeDeclinedInsufficientFunds": {"card_declined", "insufficient_funds", "", "Your card has insufficient funds."},
	"pm_card_chargeDeclinedInsufficientFunds":      {"card_declined", "insufficient_funds", "", "Your card has insufficient funds."},
	"pm_card_visa_chargeDeclinedLostCard":          {"card_declined", "lost_card", "", "Your card was declined."},
	"pm_card_chargeDeclinedLostCard":               {"card_declined", "lost_card", "", "Your card was declined."},
	"pm_card_visa_chargeDeclinedStolenCard":        {"card_declined", "stolen_card", "", "Your card was declined."},
	"pm_card_chargeDeclinedStolenCard":             {"card_declined", "stolen_card", "", "Your card was declined."},
	"pm_card_chargeDeclinedFraudulent":             {"card_declined", "fraudulent", "", "Your card was declined."},
	"pm_card_chargeDeclinedExpiredCard":            {"expired_card", "", "exp_month", "Your card has expired."},
	"pm_card_chargeDeclinedIncorrectCvc":           {"incorrect_cvc", "", "cvc", "Your card's security code is incorrect."},
	"pm_card_chargeDeclinedProcessingError":        {"processing_error", "", "", "An error occurred while processing your card. Try again in a little bit."},
}

func (s *Server) createIntent(form url.Values) answer {
	expand, bad := expansions(form, "latest_charge", "payment_method")
	if bad != nil {
		return *bad
	}
	amount, bad := positive(form, "amount")
	if bad != nil {
		return *bad
	}
	currency := form.Get("currency")
	if currency == "" {
		return missing("currency")
	}
	method := form.Get("payment_method")
	var spt string
	for k, v := range form {
		if strings.HasPrefix(k, "payment_method_data[") && strings.HasPrefix(v[0], "spt_") {
			spt = v[0]
		}
	}
	if method != "" && !strings.HasPrefix(method, "pm_card_") {
		return noSuch(http.StatusBadRequest, "PaymentMethod", method, "payment_method")
	}
	pi := s.newIntent(amount, currency, params(form, "metadata"))
	pi.Description = optional(form, "description")
	if form.Has("automatic_payment_methods[enabled]") {
		pi.AutomaticPaymentMethods = &autoMethods{
			Enabled:        form.Get("automatic_payment_methods[enabled]") == "true",
			AllowRedirects: form.Get("automatic_payment_methods[allow_redirects]"),
		}
	}
	if method == "" && spt == "" {
		pi.Status = "requires_payment_method"
		return jsonAnswer(http.StatusOK, pi.view(expand, ""))
	}
	pi.method = s.newMethod(method)
	pi.PaymentMethod = &pi.method.ID
	if form.Get("confirm") != "true" {
		pi.Status = "requires_confirmation"
		return jsonAnswer(http.StatusOK, pi.view(expand, ""))
	}
	switch d, declined := declines[method]; {
	case declined:
		// Stripe's card error carries the failed charge's id, the
		// PaymentIntent and the payment method, as does its
		// last_payment_error.
		s.charge(pi, d.code, d.message)
		pi.Status = "requires_payment_method"
		e := apiError{Type: "card_error", Code: d.code, DeclineCode: d.decline, Param: d.param, Message: d.message,
			Charge: pi.charge.ID, PaymentMethod: pi.method}
		e.DocURL = "https://stripe.com/docs/error-codes/" + strings.ReplaceAll(d.code, "_", "-")
		last := e
		pi.LastPaymentError = &last
		e.PaymentIntent = pi
		return errAnswer(http.StatusPaymentRequired, e)
	case method == "pm_card_authenticationRequired" || method == "pm_card_threeDSecure2Required":
		pi.Status = "requires_action"
		pi.NextAction = map[string]any{"type": "use_stripe_sdk", "use_stripe_sdk": map[string]any{"type": "three_d_secure_redirect"}}
		return jsonAnswer(http.StatusOK, pi.view(expand, ""))
	}
	s.succeed(pi)
	return jsonAnswer(http.StatusOK, pi.view(expand, ""))
}

func (s *Server) newIntent(amount int64, currency string, metadata map[string]string) *intent {
	s.seq++
	pi := &intent{
		ID: s.randID("pi_3", 24), Object: "payment_intent", Amount: amount,
		CaptureMethod: "automatic_async", ConfirmationMethod: "automatic",
		Created: s.now().Unix(), Currency: currency, Metadata: metadata,
		PaymentMethodTypes: []string{"card"}, seq: s.seq,
	}
	pi.ClientSecret = pi.ID + "_secret_" + s.randID("", 25)
	s.intents[pi.ID] = pi
	return pi
}

// newest returns the PaymentIntents, newest first.
func (s *Server) newest() []*intent {
	var all []*intent
	for _, pi := range s.intents {
		all = append(all, pi)
	}
	slices.SortFunc(all, func(a, b *intent) int { return int(b.seq - a.seq) })
	return all
}

func (s *Server) listIntents(form url.Values) answer {
	expand, bad := expansions(form, "data.latest_charge", "data.payment_method")
	if bad != nil {
		return *bad
	}
	limit, bad := pageLimit(form)
	if bad != nil {
		return *bad
	}
	all := s.newest()
	if after := form.Get("starting_after"); after != "" {
		i := slices.IndexFunc(all, func(pi *intent) bool { return pi.ID == after })
		if i < 0 {
			return noSuch(http.StatusBadRequest, "payment_intent", after, "starting_after")
		}
		all = all[i+1:]
	}
	page := all[:min(limit, len(all))]
	return jsonAnswer(http.StatusOK, map[string]any{
		"object": "list", "data": views(page, expand), "has_more": len(all) > len(page), "url": "/v1/payment_intents",
	})
}

var metadataQuery = regexp.MustCompile(`^metadata\['((?:[^'\\]|\\.)*)'\]:'((?:[^'\\]|\\.)*)'$`)

func (s *Server) searchIntents(form url.Values) answer {
	expand, bad := expansions(form, "data.latest_charge", "data.payment_method")
	if bad != nil {
		return *bad
	}
	limit, bad := pageLimit(form)
	if bad != nil {
		return *bad
	}
	q := form.Get("query")
	if q == "" {
		return missing("query")
	}
	m := metadataQuery.FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return invalid("", "query", "stripetest supports only search queries of the form metadata['key']:'value', not %q.", q)
	}
	unquote := strings.NewReplacer(`\'`, `'`, `\\`, `\`)
	key, value := unquote.Replace(m[1]), unquote.Replace(m[2])
	var found []*intent
	for _, pi := range s.newest() {
		if v, ok := pi.Metadata[key]; ok && v == value {
			found = append(found, pi)
		}
	}
	page := found[:min(limit, len(found))]
	return jsonAnswer(http.StatusOK, map[string]any{
		"object": "search_result", "data": views(page, expand), "has_more": len(found) > len(page),
		"next_page": nil, "url": "/v1/payment_intents/search",
	})
}

func (s *Server) createRefund(form url.Values) answer {
	var pi *intent
	switch id, charge := form.Get("payment_intent"), form.Get("charge"); {
	case id != "":
		if pi = s.intents[id]; pi == nil {
			return noSuch(http.StatusBadRequest, "payment_intent", id, "payment_intent")
		}
	case charge != "":
		for _, p := range s.intents {
			if p.LatestCharge != nil && *p.LatestCharge == charge {
				pi = p
			}
		}
		if pi == nil {
			return noSuch(http.StatusBadRequest, "charge", charge, "charge")
		}
	default:
		return invalid("parameter_missing", "", "One of the following params should be provided for this request: payment_intent or charge.")
	}
	if pi.Status != "succeeded" {
		return invalid("", "payment_intent", "This PaymentIntent (%s) does not have a successful charge to refund.", pi.ID)
	}
	left := pi.Amount - pi.refunded
	if left == 0 {
		return invalid("charge_already_refunded", "", "Charge %s has already been refunded.", *pi.LatestCharge)
	}
	amount := left
	if form.Has("amount") {
		n, bad := positive(form, "amount")
		if bad != nil {
			return *bad
		}
		if n > left {
			return invalid("amount_too_large", "amount", "Refund amount (%s) is greater than unrefunded amount on charge (%s)",
				money(n, pi.Currency), money(left, pi.Currency))
		}
		amount = n
	}
	re := &refund{
		ID: s.randID("re_3", 24), Object: "refund", Amount: amount,
		BalanceTransaction: s.randID("txn_3", 24), Charge: *pi.LatestCharge, Created: s.now().Unix(),
		Currency: pi.Currency, Metadata: params(form, "metadata"), PaymentIntent: pi.ID, Status: "succeeded",
	}
	if reason := form.Get("reason"); reason != "" {
		switch reason {
		case "duplicate", "fraudulent", "requested_by_customer":
			re.Reason = &reason
		default:
			return invalid("", "reason", "Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer")
		}
	}
	pi.refunded += amount
	s.refunds = append(s.refunds, re)
	return jsonAnswer(http.StatusOK, re)
}

// refresh expires an open session whose expires_at has passed.
func (s *Server) refresh(cs *session) {
	if cs.Status == "open" && s.now().Unix() >= cs.ExpiresAt {
		cs.expire()
	}
}

func (s *Server) now() time.Time { return time.Now().Add(s.nowOffset) }

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randID is prefix and n random letters and digits, as Stripe's ids are.
func (s *Server) randID(prefix string, n int) string {
	b := []byte(prefix)
	for range n {
		b = append(b, base62[rand.IntN(len(base62))])
	}
	return string(b)
}

// params returns the values of form under prefix: "metadata[k]" → k for
// prefix "metadata". Empty values are left out, as Stripe does on create.
func params(form url.Values, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range form {
		rest, ok := strings.CutPrefix(k, prefix+"[")
		if !ok || !strings.HasSuffix(rest, "]") || strings.ContainsAny(rest[:len(rest)-1], "[]") {
			continue
		}
		if v[0] != "" {
			out[rest[:len(rest)-1]] = v[0]
		}
	}
	return out
}

// hasPrefix reports whether a key of form is prefix or starts with prefix+"[".
func hasPrefix(form url.Values, prefix string) bool {
	for k := range form {
		if k == prefix || strings.HasPrefix(k, prefix+"[") {
			return true
		}
	}
	return false
}

func optional(form url.Values, key string) *string {
	if v := form.Get(key); v != "" {
		return &v
	}
	return nil
}

func integer(form url.Values, key string) (int64, *answer) {
	v := form.Get(key)
	if v == "" {
		a := missing(key)
		return 0, &a
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		a := invalid("parameter_invalid_integer", key, "Invalid integer: %s", v)
		return 0, &a
	}
	return n, nil
}

func positive(form url.Values, key string) (int64, *answer) {
	n, bad := integer(form, key)
	if bad == nil && n < 1 {
		a := invalid("parameter_invalid_integer", key, "This value must be greater than or equal to 1.")
		return 0, &a
	}
	return n, bad
}

func pageLimit(form url.Values) (int, *answer) {
	if !form.Has("limit") {
		return 10, nil
	}
	n, bad := integer(form, "limit")
	if bad == nil && (n < 1 || n > 100) {
		a := invalid("parameter_invalid_integer", "limit", "This value must be between 1 and 100.")
		return 0, &a
	}
	return int(n), bad
}

// money writes an amount as Stripe's refund errors do: $25.99, or 25.99 EUR.
func money(minor int64, currency string) string {
	s := fmt.Sprintf("%d.%02d", minor/100, minor%100)
	if currency == "usd" {
		return "$" + s
	}
	return s + " " + strings.ToUpper(currency)
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}
