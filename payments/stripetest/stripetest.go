// Package stripetest is a small stateful emulator of the parts of Stripe's
// API the shop uses, for tests: an HTTP server on 127.0.0.1 that answers in
// Stripe's JSON shapes, so that a real [payments.Stripe] (stripe-go) can be
// driven through a whole hosted checkout, a charge, a lookup and refunds.
//
// It emulates, with form-encoded bodies and Idempotency-Key replay as Stripe
// does them:
//
//   - POST /v1/coupons
//   - POST /v1/checkout/sessions (with customer and
//     saved_payment_method_options[payment_method_save], refusing customer
//     with customer_email, and the save option without a customer, as
//     Stripe does), GET /v1/checkout/sessions/{id},
//     POST /v1/checkout/sessions/{id}/expire
//   - POST /v1/payment_intents (create and confirm with Stripe's test
//     payment methods: pm_card_visa, pm_card_visa_chargeDeclined,
//     pm_card_chargeDeclinedInsufficientFunds, pm_card_authenticationRequired,
//     …), GET /v1/payment_intents/{id}, GET /v1/payment_intents (list,
//     newest first), GET /v1/payment_intents/search (queries of clauses
//     joined by AND: metadata['key']:'value', status:'value',
//     currency:'value', amount:N, created>N with >, >=, < or <=; paged by
//     next_page and page as Stripe's search is)
//   - POST /v1/refunds
//
// A PaymentIntent's latest_charge and payment_method are ids, or objects
// where the request asks with expand[] (latest_charge, payment_method;
// data.… in lists and searches; payment_intent, payment_intent.… on a
// Checkout Session): the charge's payment_method_details.card and the
// payment method's card have the brand and last four digits of the test
// card behind each test payment method (pm_card_visa: visa 4242,
// pm_card_mastercard: mastercard 4444, pm_card_amex: amex 8431,
// pm_card_visa_chargeDeclined: visa 0002, …; see [payments.TestCards]).
// A decline's card error and last_payment_error carry the payment method
// too, as Stripe's do. Fields it cannot expand are refused with a 400.
//
// The test plays the buyer and Stripe's clock with [Server.Pay],
// [Server.PaySaving] (ticking Checkout's "save my card" checkbox) and
// [Server.Expire], makes webhook events with [Server.Event], injects
// failures with [Server.FailNext] and reads what happened with
// [Server.Requests], [Server.PaymentIntents] and [Server.Refunds].
//
// Stripe's objects are declared, one file a resource, with the fields its
// API reference names; their unexported fields are the emulator's own.
//
// Only tests import it. It does not import stripe-go: it writes Stripe's
// JSON itself.
package stripetest

import (
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
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
	customers map[string]*customerObject
	methods   map[string]*savedMethod
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
	all := s.newest()
	slices.Reverse(all)
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
