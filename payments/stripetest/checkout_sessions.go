package stripetest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

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
	SavedOptions       *savedOptions     `json:"saved_payment_method_options"`
	ShippingCost       *shippingCost     `json:"shipping_cost"`
	Status             string            `json:"status"`
	SuccessURL         *string           `json:"success_url"`
	TotalDetails       totalDetails      `json:"total_details"`
	UIMode             string            `json:"ui_mode"`
	URL                *string           `json:"url"`

	piMetadata map[string]string
	coupon     string
}

// savedOptions is a session's saved_payment_method_options: with
// payment_method_save "enabled", the page shows its customer a checkbox to
// save the card.
type savedOptions struct {
	AllowRedisplayFilters []string `json:"allow_redisplay_filters"`
	PaymentMethodRemove   *string  `json:"payment_method_remove"`
	PaymentMethodSave     *string  `json:"payment_method_save"`
}

// offersSave reports whether the page shows the "save my card" checkbox.
func (cs *session) offersSave() bool {
	return cs.Customer != nil && cs.SavedOptions != nil && cs.SavedOptions.PaymentMethodSave != nil &&
		*cs.SavedOptions.PaymentMethodSave == "enabled"
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

// testSession is Checkout Session id, for the test-facing method op; the test
// fails when there is none.
func (s *Server) testSession(op, id string) *session {
	s.t.Helper()
	cs := s.sessions[id]
	if cs == nil {
		s.t.Fatalf("stripetest: %s: no checkout session %q", op, id)
	}
	return cs
}

// Pay is the buyer paying Checkout Session id with a card, leaving the
// "save my card" checkbox unticked if the page shows one: the session
// becomes complete and paid, and a succeeded PaymentIntent of its
// amount_total and currency, with its payment_intent_data.metadata and the
// session's customer, is created. It returns the PaymentIntent's id. The
// session must be open.
func (s *Server) Pay(id string) (paymentIntent string) {
	s.t.Helper()
	return s.pay("Pay", id, false)
}

// PaySaving is Pay with the buyer ticking the page's "save my card"
// checkbox, which the page shows only when it was created with a customer
// and saved_payment_method_options[payment_method_save]=enabled (the test
// fails otherwise): as at Stripe, the PaymentIntent has
// setup_future_usage=off_session and its payment method is attached to the
// customer, listed by GET /v1/customers/{id}/payment_methods and chargeable
// off-session.
func (s *Server) PaySaving(id string) (paymentIntent string) {
	s.t.Helper()
	return s.pay("PaySaving", id, true)
}

func (s *Server) pay(op, id string, save bool) string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.testSession(op, id)
	if cs == nil {
		return ""
	}
	s.refresh(cs)
	if cs.Status != "open" {
		s.t.Fatalf("stripetest: %s: checkout session %s is %s, not open", op, id, cs.Status)
		return ""
	}
	if save && !cs.offersSave() {
		s.t.Fatalf("stripetest: %s: checkout session %s shows no save checkbox (it needs a customer and saved_payment_method_options[payment_method_save]=enabled)", op, id)
		return ""
	}
	pi := s.newIntent(cs.AmountTotal, cs.Currency, cloneMap(cs.piMetadata))
	pi.Customer = cs.Customer
	pi.method = s.newMethod("pm_card_visa") // the buyer types 4242 4242 4242 4242
	if save {
		pi.SetupFutureUsage = stringPtr("off_session")
		pi.method = &s.attachNew("pm_card_visa", *cs.Customer).paymentMethod
		pi.method.AllowRedisplay = "always"
	}
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
	cs := s.testSession("Expire", id)
	if cs == nil {
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
	cs := s.testSession("SuccessURL", id)
	if cs == nil {
		return ""
	}
	if cs.SuccessURL == nil {
		return ""
	}
	return strings.ReplaceAll(*cs.SuccessURL, "{CHECKOUT_SESSION_ID}", cs.ID)
}

func (s *Server) createSession(form url.Values) answer {
	now := s.now()
	if form.Get("mode") == "" {
		return missing("mode")
	}
	if m := form.Get("mode"); m != "payment" {
		return invalid("", "mode", "stripetest emulates only mode payment, not %q.", m)
	}
	subtotal, currency, bad := lineItems(form)
	if bad != nil {
		return *bad
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
	if bad := s.sessionCustomer(form, cs); bad != nil {
		return *bad
	}
	if form.Has("expires_at") {
		if cs.ExpiresAt, bad = expiresAt(form, now); bad != nil {
			return *bad
		}
	}
	off, bad := s.discount(form, cs)
	if bad != nil {
		return *bad
	}
	shipping, bad := s.shipping(form, cs)
	if bad != nil {
		return *bad
	}
	cs.AmountTotal = subtotal - off + shipping
	cs.TotalDetails = totalDetails{AmountDiscount: off, AmountShipping: shipping}
	u := "https://checkout.stripe.com/c/pay/" + cs.ID + "#" + s.randID("fid", 40)
	cs.URL = &u
	s.sessions[cs.ID] = cs
	return jsonAnswer(http.StatusOK, cs)
}

// sessionCustomer applies a new session's customer and
// saved_payment_method_options to cs, refusing what Stripe refuses: a
// customer it does not know, customer with customer_email, and a save
// option without a customer to save to.
func (s *Server) sessionCustomer(form url.Values, cs *session) *answer {
	var a answer
	cust, save := form.Get("customer"), form.Get("saved_payment_method_options[payment_method_save]")
	switch {
	case cust != "" && s.customers[cust] == nil:
		a = noSuch(http.StatusBadRequest, "customer", cust, "customer")
	case cust != "" && form.Get("customer_email") != "":
		a = invalid("", "customer", "You may only specify one of these parameters: customer, customer_email.")
	case save != "" && save != "enabled" && save != "disabled":
		a = invalid("", "saved_payment_method_options[payment_method_save]", "Invalid saved_payment_method_options[payment_method_save]: must be one of enabled or disabled")
	case save == "enabled" && cust == "" && form.Get("customer_creation") != "always":
		// Checkout saves a payment method to a Customer: one given, or one
		// it creates (customer_creation=always).
		a = invalid("", "saved_payment_method_options[payment_method_save]",
			"`saved_payment_method_options[payment_method_save]` requires a Customer: pass `customer`, or set `customer_creation` to `always`.")
	}
	if a.status != 0 {
		return &a
	}
	cs.Customer = optional(form, "customer")
	if save != "" {
		cs.SavedOptions = &savedOptions{AllowRedisplayFilters: []string{"always"}, PaymentMethodSave: &save}
	}
	return nil
}

// lineItems are the subtotal and currency of a new session's line_items
// (each with price_data, in one currency), or a 400 answer as Stripe's.
func lineItems(form url.Values) (subtotal int64, currency string, bad *answer) {
	currency = form.Get("currency")
	for i := 0; hasPrefix(form, fmt.Sprintf("line_items[%d]", i)); i++ {
		p := fmt.Sprintf("line_items[%d]", i)
		if form.Has(p+"[price]") || !hasPrefix(form, p+"[price_data]") {
			a := invalid("", p+"[price_data]", "stripetest emulates only line items with price_data.")
			return 0, "", &a
		}
		q, bad := positive(form, p+"[quantity]")
		if bad != nil {
			return 0, "", bad
		}
		amount, bad := integer(form, p+"[price_data][unit_amount]")
		if bad != nil {
			return 0, "", bad
		}
		var a answer
		c := form.Get(p + "[price_data][currency]")
		switch {
		case amount < 0:
			a = invalid("parameter_invalid_integer", p+"[price_data][unit_amount]", "This value must be greater than or equal to 0.")
		case form.Get(p+"[price_data][product_data][name]") == "" && form.Get(p+"[price_data][product]") == "":
			a = missing(p + "[price_data][product_data][name]")
		case c == "":
			a = missing(p + "[price_data][currency]")
		case currency == "":
			currency = c
		case c != currency:
			a = invalid("", p+"[price_data][currency]", "All line items must be in the same currency as the Checkout Session (%s), not %s.", currency, c)
		}
		if a.status != 0 {
			return 0, "", &a
		}
		subtotal += q * amount
	}
	if !hasPrefix(form, "line_items[0]") {
		a := invalid("parameter_missing", "line_items", "You must provide at least one of `line_items` in `payment` mode.")
		return 0, "", &a
	}
	return subtotal, currency, nil
}

// expiresAt is a new session's expires_at, which Stripe takes from 30
// minutes to 24 hours after now.
func expiresAt(form url.Values, now time.Time) (int64, *answer) {
	at, bad := integer(form, "expires_at")
	if bad != nil {
		return 0, bad
	}
	var a answer
	switch {
	case at < now.Add(30*time.Minute).Unix():
		a = invalid("", "expires_at", "The `expires_at` timestamp must be at least 30 minutes from Checkout Session creation.")
	case at > now.Add(24*time.Hour).Unix():
		a = invalid("", "expires_at", "The `expires_at` timestamp must be less than 24 hours from Checkout Session creation.")
	default:
		return at, nil
	}
	return 0, &a
}

// discount applies a new session's discounts[0][coupon] to cs, returning
// the amount off its subtotal.
func (s *Server) discount(form url.Values, cs *session) (int64, *answer) {
	id := form.Get("discounts[0][coupon]")
	if id == "" {
		return 0, nil
	}
	var off int64
	var a answer
	switch c := s.coupons[id]; {
	case c == nil:
		a = noSuch(http.StatusBadRequest, "coupon", id, "discounts[0][coupon]")
	case !c.Valid:
		a = invalid("coupon_expired", "discounts[0][coupon]", "This coupon has expired or reached its maximum number of redemptions: `%s`.", id)
	case c.AmountOff != nil && *c.Currency != cs.Currency:
		a = invalid("", "discounts[0][coupon]", "The coupon `%s` is in %s but the Checkout Session is in %s.", id, *c.Currency, cs.Currency)
	case c.AmountOff != nil:
		off = min(*c.AmountOff, cs.AmountSubtotal)
	default:
		off = int64(float64(cs.AmountSubtotal) * *c.PercentOff / 100)
	}
	if a.status != 0 {
		return 0, &a
	}
	cs.coupon = id
	cs.Discounts = []discount{{Coupon: id}}
	return off, nil
}

// shipping applies a new session's shipping_options[0][shipping_rate_data]
// to cs, returning its amount.
func (s *Server) shipping(form url.Values, cs *session) (int64, *answer) {
	p := "shipping_options[0][shipping_rate_data]"
	if !hasPrefix(form, p) {
		return 0, nil
	}
	n, bad := integer(form, p+"[fixed_amount][amount]")
	if bad != nil {
		return 0, bad
	}
	if form.Get(p+"[display_name]") == "" {
		a := missing(p + "[display_name]")
		return 0, &a
	}
	if c := form.Get(p + "[fixed_amount][currency]"); c != cs.Currency {
		a := invalid("", p+"[fixed_amount][currency]", "The shipping rate's currency (%s) must be the Checkout Session's (%s).", c, cs.Currency)
		return 0, &a
	}
	cs.ShippingCost = &shippingCost{AmountSubtotal: n, AmountTotal: n, ShippingRate: s.randID("shr_1", 24)}
	return n, nil
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

// refresh expires an open session whose expires_at has passed.
func (s *Server) refresh(cs *session) {
	if cs.Status == "open" && s.now().Unix() >= cs.ExpiresAt {
		cs.expire()
	}
}
