package payments

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"

	"shop"
)

// Stripe's bounds on a Checkout Session's expires_at, after its creation.
const (
	hostedMinExpiry = 30 * time.Minute
	hostedMaxExpiry = 24 * time.Hour
)

// HostedLine is one line of a hosted checkout page.
type HostedLine struct {
	Name     string
	Quantity int64
	// UnitAmount is in minor units, 0 or more.
	UnitAmount int64
	// ImageURL is optional; it is sent only when it is an absolute https://
	// URL, and left out otherwise.
	ImageURL string
}

// HostedShipping is the one shipping choice of a hosted checkout page.
type HostedShipping struct {
	Name string
	// Amount is in minor units, 0 or more.
	Amount int64
	// MinDays and MaxDays are business days; when either is 0 (unknown),
	// the page shows no delivery estimate.
	MinDays, MaxDays int
}

// HostedCheckoutRequest is a hosted checkout page for an amount the shop
// computed: Stripe shows the shop's figures and recomputes nothing (no
// automatic tax, no tax rates, no promotion codes, no Adaptive Pricing).
type HostedCheckoutRequest struct {
	// Currency is the lower-case ISO 4217 code.
	Currency string
	// Lines are the goods, at least one.
	Lines []HostedLine
	// Discount is the sum of every discount, 0 or more and at most the sum
	// of the lines and Tax (Stripe's cap); it goes to Stripe as a coupon
	// for this page only, which Stripe spreads over the lines.
	Discount int64
	// Shipping is nil for no shipping.
	Shipping *HostedShipping
	// Tax is 0 or more; when more than 0 it is a line "Tax" of quantity 1.
	Tax int64
	// Total must equal sum(lines) - Discount + shipping + Tax, and be more
	// than 0; otherwise the request is the caller's bug and is refused.
	Total int64
	// ClientReference is the shop's checkout session id (cs_…), sent as
	// client_reference_id.
	ClientReference string
	// Metadata goes on the Checkout Session and on its PaymentIntent
	// (payment_intent_data.metadata), where "idempotency_key" is added, by
	// which [Stripe.Lookup] finds the PaymentIntent.
	Metadata map[string]string
	// Email is the buyer's, sent as customer_email when set and there is
	// no Customer (Stripe takes one of the two).
	Email string
	// Customer is the linked buyer's Stripe Customer (cus_…), "" for a
	// guest. With one, the page is that customer's and offers to save the
	// card (saved_payment_method_options[payment_method_save]=enabled):
	// Stripe Checkout shows its own "save" checkbox, and a card saved
	// there is attached to the customer for off-session payments.
	Customer string
	// SuccessURL and CancelURL are absolute http(s) URLs. SuccessURL may
	// hold Stripe's literal {CHECKOUT_SESSION_ID}, which Stripe replaces.
	SuccessURL string
	CancelURL  string
	// ExpiresAt is when the page stops taking payments, 30 minutes to 24
	// hours from now (Stripe's bounds, counted from the moment it receives
	// the request: leave a minute's margin). It is sent in whole seconds,
	// rounded down.
	ExpiresAt time.Time
	// IdempotencyKey is the same for every try of one page, and so is the
	// rest of the request (ExpiresAt included): Stripe refuses a key sent
	// again with other parameters. The coupon is created with the key
	// IdempotencyKey+"_coupon".
	IdempotencyKey string
}

// CheckoutOrigin is the origin of Stripe Checkout's pages, where
// HostedCheckout.URL sends the buyer.
const CheckoutOrigin = "https://checkout.stripe.com"

// HostedCheckout is a created page.
type HostedCheckout struct {
	// ID is Stripe's Checkout Session id, cs_test_… or cs_live_…
	ID string
	// URL is the page to send the buyer to.
	URL       string
	ExpiresAt time.Time
}

// HostedPayment is what Stripe says of a page now.
type HostedPayment struct {
	ID string
	// Status is "open", "complete" or "expired".
	Status string
	// Paid is true when the payment_status is "paid" (or
	// "no_payment_required"). A page can be complete but not yet paid, when
	// the buyer chose a delayed payment method.
	Paid bool
	// PaymentIntent is the PaymentIntent's id, pi_…, once there is one.
	PaymentIntent string
	// CardBrand and CardLast4 are the card the page was paid with, as in
	// [Result]; empty until it is paid, or when paid by other means.
	CardBrand string
	CardLast4 string
	// SavedCard is the card the buyer chose to save on the page, nil when
	// they did not: its PaymentIntent was made for future off-session use
	// (setup_future_usage=off_session, which Stripe Checkout sets when the
	// buyer ticks its save box) through a customer, to whom Stripe attaches
	// the payment method once paid. Its Customer is that PaymentIntent's,
	// for the caller to check against the page's buyer.
	SavedCard *SavedCard
	// Amount is the amount_total, in minor units.
	Amount          int64
	Currency        string
	ClientReference string
	Metadata        map[string]string
}

// couponKeySuffix makes the coupon's idempotency key from the page's.
const couponKeySuffix = "_coupon"

// check refuses a request the shop should never make: these are bugs of the
// caller, not the buyer's doing.
func (r *HostedCheckoutRequest) check(now time.Time) error {
	if !isCurrency(r.Currency) {
		return fmt.Errorf("payments: hosted checkout currency %q: must be a lower-case ISO 4217 code", r.Currency)
	}
	if len(r.Lines) == 0 {
		return errors.New("payments: hosted checkout: no lines")
	}
	var goods int64
	for i, l := range r.Lines {
		switch {
		case strings.TrimSpace(l.Name) == "":
			return fmt.Errorf("payments: hosted checkout line %d: no name", i)
		case l.Quantity < 1:
			return fmt.Errorf("payments: hosted checkout line %d (%s): quantity %d: must be 1 or more", i, l.Name, l.Quantity)
		case l.UnitAmount < 0:
			return fmt.Errorf("payments: hosted checkout line %d (%s): unit amount %d: must be 0 or more", i, l.Name, l.UnitAmount)
		case l.UnitAmount > 0 && l.Quantity > (math.MaxInt64-goods)/l.UnitAmount:
			return fmt.Errorf("payments: hosted checkout line %d (%s): amounts too large", i, l.Name)
		}
		goods += l.Quantity * l.UnitAmount
	}
	switch {
	case r.Tax < 0:
		return fmt.Errorf("payments: hosted checkout tax %d: must be 0 or more", r.Tax)
	case r.Tax > math.MaxInt64-goods:
		return errors.New("payments: hosted checkout tax: amounts too large")
	case r.Discount < 0:
		return fmt.Errorf("payments: hosted checkout discount %d: must be 0 or more", r.Discount)
	case r.Discount > goods+r.Tax:
		// Stripe applies a coupon to the line items, the tax line
		// included, and caps it at their sum.
		return fmt.Errorf("payments: hosted checkout discount %d: more than the lines and tax, %d", r.Discount, goods+r.Tax)
	}
	total := goods + r.Tax - r.Discount
	if s := r.Shipping; s != nil {
		switch {
		case strings.TrimSpace(s.Name) == "":
			return errors.New("payments: hosted checkout shipping: no name")
		case s.Amount < 0:
			return fmt.Errorf("payments: hosted checkout shipping %d: must be 0 or more", s.Amount)
		case s.MinDays < 0 || s.MaxDays < 0 || s.MinDays > 0 && s.MaxDays > 0 && s.MinDays > s.MaxDays:
			return fmt.Errorf("payments: hosted checkout shipping: delivery in %d to %d business days", s.MinDays, s.MaxDays)
		case s.Amount > math.MaxInt64-total:
			return errors.New("payments: hosted checkout shipping: amounts too large")
		}
		total += s.Amount
	}
	if total != r.Total {
		return fmt.Errorf("payments: hosted checkout total %d: the lines, discount, shipping and tax make %d", r.Total, total)
	}
	if r.Total <= 0 {
		return fmt.Errorf("payments: hosted checkout total %d: must be more than 0", r.Total)
	}
	for _, u := range []struct{ name, url string }{{"success", r.SuccessURL}, {"cancel", r.CancelURL}} {
		if !isWebURL(u.url, "http", "https") {
			return fmt.Errorf("payments: hosted checkout %s URL %q: must be an absolute http(s) URL", u.name, u.url)
		}
	}
	exp := time.Unix(r.ExpiresAt.Unix(), 0)
	if exp.Before(now.Add(hostedMinExpiry)) || exp.After(now.Add(hostedMaxExpiry)) {
		return fmt.Errorf("payments: hosted checkout expiry %s: Stripe takes 30 minutes to 24 hours from now (%s)",
			r.ExpiresAt.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if r.Customer != "" && (!strings.HasPrefix(r.Customer, "cus_") || len(r.Customer) > 255 || strings.ContainsAny(r.Customer, "/?# ")) {
		return fmt.Errorf("payments: hosted checkout customer %q: not a Stripe Customer id (cus_…)", r.Customer)
	}
	if err := checkKey(r.IdempotencyKey); err != nil {
		return err
	}
	if r.Discount > 0 {
		return checkKey(r.IdempotencyKey + couponKeySuffix)
	}
	return nil
}

// isWebURL reports whether s is an absolute URL with one of the schemes
// and a host.
func isWebURL(s string, schemes ...string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return false
	}
	for _, scheme := range schemes {
		if u.Scheme == scheme {
			return true
		}
	}
	return false
}

// CreateHostedCheckout creates a Stripe Checkout Session (mode payment) with
// the request's lines, discount, shipping and tax as they are, and returns
// its page. With a discount, a one-time coupon is created first.
//
// It answers an error wrapping ErrUnknownOutcome when Stripe could not be
// reached (try again later with the same key and request: Stripe answers
// the page it created, if it did); ErrKeyReused when Stripe already saw the
// key with other parameters; any other error for a request the caller
// should not have made or Stripe refused.
func (s *Stripe) CreateHostedCheckout(ctx context.Context, r HostedCheckoutRequest) (*HostedCheckout, error) {
	if err := r.check(time.Now()); err != nil {
		return nil, err
	}
	p := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		Currency:          stripe.String(r.Currency),
		ClientReferenceID: optional(r.ClientReference),
		SuccessURL:        stripe.String(r.SuccessURL),
		CancelURL:         stripe.String(r.CancelURL),
		ExpiresAt:         stripe.Int64(r.ExpiresAt.Unix()),
		// The buyer pays the shop's figures in the shop's currency: no
		// conversion to the buyer's currency at Stripe's rate.
		AdaptivePricing:   &stripe.CheckoutSessionCreateAdaptivePricingParams{Enabled: stripe.Bool(false)},
		Metadata:          map[string]string{},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Metadata: map[string]string{}},
	}
	for k, v := range r.Metadata {
		p.Metadata[k] = v
		p.PaymentIntentData.Metadata[k] = v
	}
	p.PaymentIntentData.Metadata["idempotency_key"] = r.IdempotencyKey
	if r.Customer != "" {
		p.Customer = stripe.String(r.Customer)
		p.SavedPaymentMethodOptions = &stripe.CheckoutSessionCreateSavedPaymentMethodOptionsParams{
			PaymentMethodSave: stripe.String(string(stripe.CheckoutSessionSavedPaymentMethodOptionsPaymentMethodSaveEnabled)),
		}
	} else {
		p.CustomerEmail = optional(r.Email)
	}
	for _, l := range r.Lines {
		p.LineItems = append(p.LineItems, hostedLine(r.Currency, l.Name, l.Quantity, l.UnitAmount, l.ImageURL))
	}
	if r.Tax > 0 {
		p.LineItems = append(p.LineItems, hostedLine(r.Currency, "Tax", 1, r.Tax, ""))
	}
	if sh := r.Shipping; sh != nil {
		rate := &stripe.CheckoutSessionCreateShippingOptionShippingRateDataParams{
			Type:        stripe.String("fixed_amount"),
			DisplayName: stripe.String(sh.Name),
			FixedAmount: &stripe.CheckoutSessionCreateShippingOptionShippingRateDataFixedAmountParams{
				Amount: stripe.Int64(sh.Amount), Currency: stripe.String(r.Currency),
			},
		}
		if sh.MinDays > 0 && sh.MaxDays > 0 {
			rate.DeliveryEstimate = &stripe.CheckoutSessionCreateShippingOptionShippingRateDataDeliveryEstimateParams{
				Minimum: &stripe.CheckoutSessionCreateShippingOptionShippingRateDataDeliveryEstimateMinimumParams{
					Unit: stripe.String("business_day"), Value: stripe.Int64(int64(sh.MinDays)),
				},
				Maximum: &stripe.CheckoutSessionCreateShippingOptionShippingRateDataDeliveryEstimateMaximumParams{
					Unit: stripe.String("business_day"), Value: stripe.Int64(int64(sh.MaxDays)),
				},
			}
		}
		p.ShippingOptions = []*stripe.CheckoutSessionCreateShippingOptionParams{{ShippingRateData: rate}}
	}
	if r.Discount > 0 {
		coupon, err := s.createCoupon(ctx, r.Currency, r.Discount, r.IdempotencyKey+couponKeySuffix)
		if err != nil {
			return nil, err
		}
		p.Discounts = []*stripe.CheckoutSessionCreateDiscountParams{{Coupon: stripe.String(coupon)}}
	}
	p.SetIdempotencyKey(r.IdempotencyKey)

	var cs *stripe.CheckoutSession
	err := s.do(ctx, "create checkout session", r.IdempotencyKey, func() error {
		var err error
		cs, err = s.client.V1CheckoutSessions.Create(ctx, p)
		return err
	})
	if err != nil {
		return nil, s.keyedError("create checkout session", r.IdempotencyKey, err)
	}
	return &HostedCheckout{ID: cs.ID, URL: cs.URL, ExpiresAt: time.Unix(cs.ExpiresAt, 0).UTC()}, nil
}

// hostedLine is one line item with its price given inline.
func hostedLine(currency, name string, quantity, unitAmount int64, image string) *stripe.CheckoutSessionCreateLineItemParams {
	product := &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(name)}
	if isWebURL(image, "https") {
		product.Images = []*string{stripe.String(image)}
	}
	return &stripe.CheckoutSessionCreateLineItemParams{
		Quantity: stripe.Int64(quantity),
		PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
			Currency: stripe.String(currency), UnitAmount: stripe.Int64(unitAmount), ProductData: product,
		},
	}
}

// createCoupon creates a coupon of amount off, for one use, and returns its
// id.
func (s *Stripe) createCoupon(ctx context.Context, currency string, amount int64, key string) (string, error) {
	p := &stripe.CouponCreateParams{
		AmountOff:      stripe.Int64(amount),
		Currency:       stripe.String(currency),
		Duration:       stripe.String(string(stripe.CouponDurationOnce)),
		MaxRedemptions: stripe.Int64(1),
		Name:           stripe.String("Discount"),
	}
	p.SetIdempotencyKey(key)
	var c *stripe.Coupon
	err := s.do(ctx, "create coupon", key, func() error {
		var err error
		c, err = s.client.V1Coupons.Create(ctx, p)
		return err
	})
	if err != nil {
		return "", s.keyedError("create coupon", key, err)
	}
	return c.ID, nil
}

// keyedError maps the error of a create call made with an idempotency key.
func (s *Stripe) keyedError(op, key string, err error) error {
	var se *stripe.Error
	switch {
	case !errors.As(err, &se):
		return err // ErrUnknownOutcome
	case se.Type == stripe.ErrorTypeIdempotency:
		return fmt.Errorf("%w: Stripe saw idempotency key %s with other parameters: %s", ErrKeyReused, key, s.describe(se))
	}
	return fmt.Errorf("stripe: %s (idempotency key %s): %s", op, key, s.describe(se))
}

// HostedCheckout retrieves a Checkout Session, with its PaymentIntent and
// that one's latest charge expanded in the same request (for the card). One
// Stripe does not know is a *shop.Error with code not_found; an error
// wrapping ErrUnknownOutcome means Stripe could not be asked.
func (s *Stripe) HostedCheckout(ctx context.Context, id string) (*HostedPayment, error) {
	if err := checkHostedID(id); err != nil {
		return nil, err
	}
	p := &stripe.CheckoutSessionRetrieveParams{}
	p.AddExpand("payment_intent.latest_charge")
	var cs *stripe.CheckoutSession
	err := s.do(ctx, "retrieve checkout session", id, func() error {
		var err error
		cs, err = s.client.V1CheckoutSessions.Retrieve(ctx, id, p)
		return err
	})
	var se *stripe.Error
	switch {
	case err == nil:
		return hostedPayment(cs), nil
	case !errors.As(err, &se):
		return nil, err // ErrUnknownOutcome
	case se.Code == stripe.ErrorCodeResourceMissing:
		return nil, shop.Errorf(shop.NotFound, "", "Stripe has no checkout session %s", id)
	}
	return nil, fmt.Errorf("stripe: retrieve checkout session %s: %s", id, s.describe(se))
}

func hostedPayment(cs *stripe.CheckoutSession) *HostedPayment {
	p := &HostedPayment{
		ID:     cs.ID,
		Status: string(cs.Status),
		Paid: cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusPaid ||
			cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusNoPaymentRequired,
		Amount:          cs.AmountTotal,
		Currency:        string(cs.Currency),
		ClientReference: cs.ClientReferenceID,
		Metadata:        cs.Metadata,
	}
	if cs.PaymentIntent != nil {
		p.PaymentIntent = cs.PaymentIntent.ID
		p.CardBrand, p.CardLast4 = intentCard(cs.PaymentIntent)
		p.SavedCard = savedOnPage(cs.PaymentIntent)
	}
	return p
}

// savedOnPage is the card a paid page's PaymentIntent saved for later
// off-session payments, as its latest charge shows it: nil unless the
// PaymentIntent has setup_future_usage=off_session (the buyer's consent)
// and a customer, and was paid with a card.
func savedOnPage(pi *stripe.PaymentIntent) *SavedCard {
	if pi.SetupFutureUsage != stripe.PaymentIntentSetupFutureUsageOffSession || pi.Customer == nil || pi.Customer.ID == "" ||
		pi.Status != stripe.PaymentIntentStatusSucceeded {
		return nil
	}
	ch := pi.LatestCharge
	if ch == nil || ch.PaymentMethod == "" || ch.PaymentMethodDetails == nil || ch.PaymentMethodDetails.Card == nil {
		return nil
	}
	c := ch.PaymentMethodDetails.Card
	return &SavedCard{ID: ch.PaymentMethod, Customer: pi.Customer.ID, Brand: string(c.Brand), Last4: c.Last4,
		ExpMonth: int(c.ExpMonth), ExpYear: int(c.ExpYear)}
}

// ExpireHostedCheckout expires an open Checkout Session, so that its page
// takes no payment any more. A session that is already complete or expired
// is not an error: Stripe refuses to expire it, and a retrieve confirms its
// status. A session Stripe does not know is a *shop.Error with code
// not_found.
func (s *Stripe) ExpireHostedCheckout(ctx context.Context, id string) error {
	if err := checkHostedID(id); err != nil {
		return err
	}
	p := &stripe.CheckoutSessionExpireParams{}
	key := "expire_" + id
	p.SetIdempotencyKey(key)
	err := s.do(ctx, "expire checkout session", key, func() error {
		_, err := s.client.V1CheckoutSessions.Expire(ctx, id, p)
		return err
	})
	var se *stripe.Error
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &se):
		return err // ErrUnknownOutcome
	case se.Code == stripe.ErrorCodeResourceMissing:
		return shop.Errorf(shop.NotFound, "", "Stripe has no checkout session %s", id)
	case se.Type == stripe.ErrorTypeInvalidRequest:
		// Stripe refuses a session that is not open ("Only Checkout
		// Sessions with a status in ["open"] can be expired"), with no
		// code to tell it by: ask for the status instead of reading the
		// message.
		now, rerr := s.HostedCheckout(ctx, id)
		if rerr != nil {
			return fmt.Errorf("stripe: expire checkout session %s: %s; then: %w", id, s.describe(se), rerr)
		}
		if now.Status == string(stripe.CheckoutSessionStatusComplete) || now.Status == string(stripe.CheckoutSessionStatusExpired) {
			return nil
		}
	}
	return fmt.Errorf("stripe: expire checkout session %s: %s", id, s.describe(se))
}

// checkHostedID refuses an id that is not a Checkout Session's.
func checkHostedID(id string) error {
	if !strings.HasPrefix(id, "cs_") || len(id) == len("cs_") || len(id) > 255 || strings.ContainsAny(id, "/?# ") {
		return fmt.Errorf("payments: %q is not a Stripe Checkout Session id (cs_…)", id)
	}
	return nil
}

// optional is nil for "", so that an empty field is not sent.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return stripe.String(s)
}
