package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"

	"shop"
)

// Defaults of StripeOptions.
const (
	DefaultSPTParam   = "payment_method_data[shared_payment_granted_token]"
	DefaultSPTVersion = "2026-04-22.preview"
	DefaultAPIBase    = "https://api.stripe.com"
	DefaultRetries    = 3
	DefaultRetryWait  = 500 * time.Millisecond
	maxRetryWait      = 10 * time.Second
)

// StripeOptions configure a Stripe provider; zero fields take defaults.
type StripeOptions struct {
	// SecretKey is STRIPE_SECRET_KEY. It goes in no error and no log line.
	SecretKey string
	// Mode must agree with the key: sk_live_/rk_live_ only in live mode,
	// sk_test_/rk_test_ only in test mode (default test).
	Mode Mode
	// SPTParam is the form parameter that carries a shared payment token
	// (default DefaultSPTParam). It is configuration because Stripe's
	// preview API moves.
	SPTParam string
	// SPTVersion is the Stripe-Version sent with shared payment tokens
	// (default DefaultSPTVersion); other requests use stripe-go's version.
	SPTVersion string
	// APIBase is Stripe's address (default https://api.stripe.com); tests
	// point it at stripe-mock or an httptest server.
	APIBase string
	// HTTPClient makes the requests (default: one with a 30s timeout).
	HTTPClient *http.Client
	// Retries is how many tries follow the first after a network error, a
	// 5xx, a 429 or a 409 (idempotency_key_in_use), always with the same
	// idempotency key (default 3; negative for none).
	Retries int
	// RetryWait is the first wait between tries, doubling each time
	// (default 500ms).
	RetryWait time.Duration
	// Logger receives a line per retry (default: discard).
	Logger *slog.Logger
}

// Stripe charges through Stripe's API: a PaymentIntent created and confirmed
// in one request. It keeps no state; Stripe keeps the idempotency keys.
type Stripe struct {
	client     *stripe.Client
	key        string
	mode       Mode
	sptParam   string
	sptVersion string
	retries    int
	wait       time.Duration
	logger     *slog.Logger
}

// NewStripe returns a Stripe provider. It refuses a key that is not a Stripe
// secret key or does not agree with the mode, with an error naming
// STRIPE_SECRET_KEY and saying what to do (never showing the key).
func NewStripe(opts StripeOptions) (*Stripe, error) {
	mode := opts.Mode
	if mode == "" {
		mode = ModeTest
	}
	if err := checkSecretKey(opts.SecretKey, mode); err != nil {
		return nil, err
	}
	s := &Stripe{
		key: opts.SecretKey, mode: mode,
		sptParam: opts.SPTParam, sptVersion: opts.SPTVersion,
		retries: opts.Retries, wait: opts.RetryWait, logger: opts.Logger,
	}
	if s.sptParam == "" {
		s.sptParam = DefaultSPTParam
	}
	if s.sptVersion == "" {
		s.sptVersion = DefaultSPTVersion
	}
	switch {
	case s.retries == 0:
		s.retries = DefaultRetries
	case s.retries < 0:
		s.retries = 0
	}
	if s.wait <= 0 {
		s.wait = DefaultRetryWait
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	base := opts.APIBase
	if base == "" {
		base = DefaultAPIBase
	}
	backends := stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		HTTPClient: hc,
		URL:        stripe.String(strings.TrimRight(base, "/")),
		// stripe-go would retry network errors on its own; our loop (do)
		// retries instead, so that the number of tries is exactly
		// Retries+1, each with the same idempotency key, and each is logged.
		MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	s.client = stripe.NewClient(opts.SecretKey, stripe.WithBackends(backends))
	return s, nil
}

// checkSecretKey refuses a key that is not a Stripe secret key, or whose
// mode is not the shop's.
func checkSecretKey(key string, mode Mode) error {
	if mode != ModeTest && mode != ModeLive {
		return fmt.Errorf("payment mode %q: must be test or live", mode)
	}
	var keyMode Mode
	switch {
	case strings.HasPrefix(key, "sk_test_"), strings.HasPrefix(key, "rk_test_"):
		keyMode = ModeTest
	case strings.HasPrefix(key, "sk_live_"), strings.HasPrefix(key, "rk_live_"):
		keyMode = ModeLive
	case strings.HasPrefix(key, "pk_"):
		return errors.New("STRIPE_SECRET_KEY holds a publishable key (pk_…): set it to the secret key (sk_test_… or sk_live_…) from the Stripe dashboard, Developers → API keys")
	case key == "":
		return errors.New("STRIPE_SECRET_KEY is empty: set it to a secret key from the Stripe dashboard (sk_test_… for test mode), or unset it to use the sandbox")
	default:
		return errors.New("STRIPE_SECRET_KEY is not a Stripe secret key: it must start with sk_test_ or rk_test_ (test mode) or sk_live_ or rk_live_ (live mode); copy it again from the Stripe dashboard, Developers → API keys")
	}
	rest := key[len("sk_test_"):]
	if len(rest) < 8 || strings.IndexFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	}) >= 0 {
		return errors.New("STRIPE_SECRET_KEY is not a whole Stripe secret key (too short, or with spaces, quotes or other characters a key does not have): copy it again from the Stripe dashboard, Developers → API keys")
	}
	switch {
	case keyMode == ModeLive && mode == ModeTest:
		return errors.New("STRIPE_SECRET_KEY is a live key (sk_live_…/rk_live_…) but the shop runs in test mode: use a test key (sk_test_…), or set payment_mode: live in the merchant policy to take real payments")
	case keyMode == ModeTest && mode == ModeLive:
		return errors.New("STRIPE_SECRET_KEY is a test key (sk_test_…/rk_test_…) but the shop runs in live mode: use a live key (sk_live_…), or set payment_mode: test in the merchant policy")
	}
	return nil
}

// Name returns "stripe".
func (s *Stripe) Name() string { return "stripe" }

// Mode returns the mode the key and the shop agree on.
func (s *Stripe) Mode() Mode { return s.mode }

// String describes the provider for the operator's start-up line:
// "stripe (test mode)" or "stripe (live mode)".
func (s *Stripe) String() string { return fmt.Sprintf("%s (%s mode)", s.Name(), s.mode) }

// Charge creates and confirms a PaymentIntent. A pm_… token goes as
// payment_method, an spt_… token as SPTParam with Stripe-Version SPTVersion;
// any other token is a *shop.Error for $.payment_data.token.
//
// It answers a Result for a known outcome (a decline is a Result, not an
// error); an error wrapping ErrUnknownOutcome when the charge may or may not
// have happened; ErrKeyReused when Stripe already saw the key with other
// parameters; any other error when Stripe refused the request (nothing was
// charged).
func (s *Stripe) Charge(ctx context.Context, r Request) (*Result, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if s.mode == ModeLive && strings.HasPrefix(r.Token, "pm_card_") {
		return nil, shop.Errorf(shop.Invalid, "$.payment_data.token", "%s is a Stripe test payment method; this shop takes live payments", r.Token)
	}
	p := &stripe.PaymentIntentCreateParams{
		Amount:   stripe.Int64(r.Amount),
		Currency: stripe.String(r.Currency),
		Confirm:  stripe.Bool(true),
		// No redirect-based methods, so that no return_url is needed.
		AutomaticPaymentMethods: &stripe.PaymentIntentCreateAutomaticPaymentMethodsParams{
			Enabled: stripe.Bool(true), AllowRedirects: stripe.String("never"),
		},
		Metadata: map[string]string{},
	}
	for k, v := range r.Metadata {
		p.Metadata[k] = v
	}
	p.Metadata["idempotency_key"] = r.IdempotencyKey
	p.Metadata[ChargedBy] = ChargedByShop
	if r.Description != "" {
		p.Description = stripe.String(r.Description)
	}
	if kind, _ := tokenKind(r.Token); kind == kindSPT {
		// stripe-go v82 has no field for shared payment tokens: the
		// parameter goes in as an extra, and the preview API version it
		// needs as a header of this request only. NewRequest sets
		// params.Headers after its own Stripe-Version, with Set, so ours
		// replaces stripe-go's (asserted by the tests).
		p.AddExtra(s.sptParam, r.Token)
		p.Headers = http.Header{"Stripe-Version": {s.sptVersion}}
	} else {
		p.PaymentMethod = stripe.String(r.Token)
	}
	if r.Customer != "" {
		// A saved card, charged with the buyer away: a bank that wants
		// them to authenticate answers authentication_required.
		p.Customer, p.OffSession = stripe.String(r.Customer), stripe.Bool(true)
	}
	// The charge and the payment method come back expanded, with the
	// card's brand and last four (a payment waiting for 3D Secure has no
	// charge yet; its payment method has the card).
	p.AddExpand("latest_charge")
	p.AddExpand("payment_method")
	p.SetIdempotencyKey(r.IdempotencyKey)

	var pi *stripe.PaymentIntent
	err := s.do(ctx, "create payment intent", r.IdempotencyKey, func() error {
		var err error
		pi, err = s.client.V1PaymentIntents.Create(ctx, p)
		return err
	})
	var se *stripe.Error
	switch {
	case err == nil:
		return intentResult(pi)
	case !errors.As(err, &se):
		return nil, err // ErrUnknownOutcome
	case se.Type == stripe.ErrorTypeCard:
		return cardDeclined(se), nil
	case se.Type == stripe.ErrorTypeIdempotency:
		return nil, fmt.Errorf("%w: Stripe saw idempotency key %s with other parameters: %s", ErrKeyReused, r.IdempotencyKey, s.describe(se))
	case se.Type == stripe.ErrorTypeInvalidRequest && (se.Param == "payment_method" || strings.HasPrefix(se.Param, "payment_method_data") ||
		se.Param == "customer"): // a saved card's customer deleted since
		s.logger.WarnContext(ctx, "stripe refused the payment token", "idempotency_key", r.IdempotencyKey, "err", s.describe(se))
		return nil, shop.Errorf(shop.Invalid, "$.payment_data.token", "the payment provider did not accept this payment token (it may be unknown, used or expired); ask the buyer to pay again for a new one")
	}
	return nil, fmt.Errorf("stripe: create payment intent (idempotency key %s): %s", r.IdempotencyKey, s.describe(se))
}

// cardDeclined is the Result of a card error: the decline, its message for the
// buyer, and the card and PaymentIntent Stripe names in it.
func cardDeclined(se *stripe.Error) *Result {
	code := string(se.DeclineCode)
	if code == "" {
		code = string(se.Code)
	}
	res := &Result{Status: declinedStatus(code), DeclineCode: code, Message: buyerMessage(code, se.Msg)}
	res.CardBrand, res.CardLast4 = methodCard(se.PaymentMethod)
	if pi := se.PaymentIntent; pi != nil {
		res.Reference, res.Amount, res.Currency, res.Metadata = pi.ID, pi.Amount, string(pi.Currency), pi.Metadata
		if res.CardLast4 == "" {
			res.CardBrand, res.CardLast4 = intentCard(se.PaymentIntent)
		}
	}
	return res
}

// Lookup finds the charge made with an idempotency key, by the metadata
// Charge sets: first among the 100 most recent PaymentIntents (Stripe's list
// is up to date), then by Stripe's search, which reaches further back but
// lags writes by up to about a minute. found is false when neither has a
// PaymentIntent with the key; for a charge made in the last minute by a
// shop with more than 100 since, that is not yet proof that none exists.
func (s *Stripe) Lookup(ctx context.Context, key string) (*Result, bool, error) {
	if err := checkKey(key); err != nil {
		return nil, false, err
	}
	list := &stripe.PaymentIntentListParams{}
	list.Limit, list.Single = stripe.Int64(100), true
	list.AddExpand("data.latest_charge")
	list.AddExpand("data.payment_method")
	found, err := s.find(ctx, "list payment intents", key, func() stripe.Seq2[*stripe.PaymentIntent, error] {
		return s.client.V1PaymentIntents.List(ctx, list)
	})
	if err == nil && found == nil {
		search := &stripe.PaymentIntentSearchParams{}
		quoted := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(key)
		search.Query = "metadata['idempotency_key']:'" + quoted + "'"
		search.Limit, search.Single = stripe.Int64(10), true
		search.AddExpand("data.latest_charge")
		search.AddExpand("data.payment_method")
		found, err = s.find(ctx, "search payment intents", key, func() stripe.Seq2[*stripe.PaymentIntent, error] {
			return s.client.V1PaymentIntents.Search(ctx, search)
		})
	}
	if err != nil || found == nil {
		return nil, false, err
	}
	res, err := intentResult(found)
	return res, true, err
}

// Payments returns the succeeded PaymentIntents that Charge made (metadata
// [ChargedBy]) created at or after since, newest first, at most
// maxPayments, by Stripe's search (whose index lags writes by up to about a
// minute). Each has its amount, metadata and what was refunded of it.
func (s *Stripe) Payments(ctx context.Context, since time.Time) ([]Result, error) {
	search := &stripe.PaymentIntentSearchParams{}
	search.Query = fmt.Sprintf("metadata['%s']:'%s' AND status:'succeeded' AND created>=%d", ChargedBy, ChargedByShop, since.Unix())
	search.Limit = stripe.Int64(100)
	search.AddExpand("data.latest_charge")
	var out []Result
	err := s.do(ctx, "search payment intents", "", func() error {
		out = out[:0]
		for pi, err := range s.client.V1PaymentIntents.Search(ctx, search) {
			if err != nil {
				return err
			}
			res, err := intentResult(pi)
			if err != nil || res.Status != Succeeded {
				continue // still processing, or not what was asked for
			}
			if out = append(out, *res); len(out) >= maxPayments {
				break
			}
		}
		return nil
	})
	var se *stripe.Error
	if errors.As(err, &se) {
		return nil, fmt.Errorf("stripe: search payment intents: %s", s.describe(se))
	}
	return out, err
}

// find returns the PaymentIntent of a page whose metadata holds key,
// preferring one that succeeded, or nil.
func (s *Stripe) find(ctx context.Context, op, key string, page func() stripe.Seq2[*stripe.PaymentIntent, error]) (*stripe.PaymentIntent, error) {
	var found *stripe.PaymentIntent
	err := s.do(ctx, op, key, func() error {
		found = nil
		for pi, err := range page() {
			if err != nil {
				return err
			}
			if pi.Metadata["idempotency_key"] == key && (found == nil || pi.Status == stripe.PaymentIntentStatusSucceeded) {
				found = pi
			}
		}
		return nil
	})
	var se *stripe.Error
	if errors.As(err, &se) {
		return nil, fmt.Errorf("stripe: %s: %s", op, s.describe(se))
	}
	return found, err
}

// Refund refunds part or all of a PaymentIntent. An amount Stripe finds too
// large is a *shop.Error for $.amount.
func (s *Stripe) Refund(ctx context.Context, r RefundRequest) (*Refund, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	p := &stripe.RefundCreateParams{PaymentIntent: stripe.String(r.Reference), Amount: stripe.Int64(r.Amount)}
	if reason, note := refundReason(r.Reason); reason != "" {
		p.Reason = stripe.String(reason)
		if note != "" {
			p.AddMetadata("reason", note)
		}
	}
	p.SetIdempotencyKey(r.IdempotencyKey)
	var re *stripe.Refund
	err := s.do(ctx, "create refund", r.IdempotencyKey, func() error {
		var err error
		re, err = s.client.V1Refunds.Create(ctx, p)
		return err
	})
	var se *stripe.Error
	switch {
	case err == nil:
		return &Refund{Reference: re.ID, Amount: re.Amount, Status: string(re.Status)}, nil
	case !errors.As(err, &se):
		return nil, err
	case se.Type == stripe.ErrorTypeIdempotency:
		return nil, fmt.Errorf("%w: Stripe saw idempotency key %s with other parameters: %s", ErrKeyReused, r.IdempotencyKey, s.describe(se))
	case se.Code == stripe.ErrorCodeChargeAlreadyRefunded:
		return nil, shop.Errorf(shop.Invalid, "$.amount", "this payment is already fully refunded")
	case se.Param == "amount" || se.Code == stripe.ErrorCodeAmountTooLarge:
		return nil, shop.Errorf(shop.Invalid, "$.amount", "the refund is more than what is left to refund of this payment")
	case se.Code == stripe.ErrorCodeResourceMissing:
		return nil, shop.Errorf(shop.NotFound, "", "Stripe has no payment %s to refund", r.Reference)
	}
	return nil, fmt.Errorf("stripe: create refund (idempotency key %s): %s", r.IdempotencyKey, s.describe(se))
}

// refundReason maps a reason to Stripe's, with the free text to keep beside.
func refundReason(reason string) (stripeReason, note string) {
	switch r := strings.ToLower(strings.TrimSpace(reason)); r {
	case "":
		return "", ""
	case string(stripe.RefundReasonDuplicate), string(stripe.RefundReasonFraudulent), string(stripe.RefundReasonRequestedByCustomer):
		return r, ""
	case "fraud":
		return string(stripe.RefundReasonFraudulent), ""
	}
	if len(reason) > 500 { // Stripe's limit for a metadata value
		reason = reason[:500]
	}
	return string(stripe.RefundReasonRequestedByCustomer), reason
}

// do calls f until it succeeds, fails for good, or the tries run out. Every
// try sends the same parameters, so the same idempotency key. Network
// errors, unreadable answers, 5xx, 429 and 409 are tried again; after the
// last try, or when ctx ends, the error wraps ErrUnknownOutcome (and ctx's
// error). Other errors are returned as they are, for the caller to map.
func (s *Stripe) do(ctx context.Context, op, key string, f func() error) error {
	wait := s.wait
	for try := 1; ; try++ {
		err := f()
		if err == nil || !retryable(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: stripe %s (idempotency key %s) after %d tries: %w", ErrUnknownOutcome, op, key, try, ctx.Err())
		}
		if try > s.retries {
			return fmt.Errorf("%w: stripe %s (idempotency key %s) failed %d times: %s", ErrUnknownOutcome, op, key, try, s.describe(err))
		}
		s.logger.WarnContext(ctx, "stripe request failed; trying again with the same idempotency key",
			"op", op, "idempotency_key", key, "try", try, "wait", wait, "err", s.describe(err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: stripe %s (idempotency key %s) after %d tries: %w", ErrUnknownOutcome, op, key, try, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, maxRetryWait)
	}
}

// retryable reports whether a request may have failed for a passing reason,
// so that trying it again with the same key is both safe and useful.
func retryable(err error) bool {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return true // no answer, or one that could not be read
	}
	return se.HTTPStatusCode >= 500 || se.HTTPStatusCode == http.StatusTooManyRequests || se.HTTPStatusCode == http.StatusConflict
}

// describe is an error for the logs, without the secret key, without the
// payment tokens Stripe's message may quote, and without Stripe's JSON.
func (s *Stripe) describe(err error) string {
	var msg string
	var se *stripe.Error
	if errors.As(err, &se) {
		msg = fmt.Sprintf("HTTP %d %s", se.HTTPStatusCode, se.Type)
		if se.Code != "" {
			msg += " " + string(se.Code)
		}
		if se.DeclineCode != "" {
			msg += " " + string(se.DeclineCode)
		}
		if se.Param != "" {
			msg += " param " + se.Param
		}
		if se.Msg != "" {
			msg += ": " + se.Msg
		}
		if se.RequestID != "" {
			msg += " (request " + se.RequestID + ")"
		}
	} else {
		msg = err.Error()
	}
	return Redact(strings.ReplaceAll(msg, s.key, "[secret key]"))
}
