package payments

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

// ParseStripeEvent verifies a webhook's Stripe-Signature header with the
// endpoint's signing secret (STRIPE_WEBHOOK_SECRET) and returns the event.
// It refuses a missing or bad signature, a tampered body and a timestamp
// older than stripe-go's tolerance (5 minutes). The event's API version is
// not checked against stripe-go's: only a PaymentIntent's id, status and
// metadata, and a Checkout Session's id, client_reference_id,
// payment_status and metadata are read, which every version has.
//
// An event about a Checkout Session (checkout.session.completed,
// .async_payment_succeeded, .async_payment_failed, .expired) comes back with
// HostedCheckout, ClientReference and the session's Metadata, and a Status
// when it reports an outcome: Succeeded when completed and paid, or when a
// delayed payment succeeded; Declined when a delayed payment failed; none
// when completed but not yet paid (a delayed payment method), or expired
// (nothing was paid). Its PaymentIntent stays empty: [Stripe.HostedCheckout]
// tells the PaymentIntent of a paid session.
//
// An event about anything else comes back with an empty PaymentIntent and
// HostedCheckout, for the caller to acknowledge and ignore.
func ParseStripeEvent(payload []byte, signature, secret string) (*Event, error) {
	if secret == "" {
		return nil, errors.New("stripe webhook: no signing secret: set STRIPE_WEBHOOK_SECRET to the endpoint's secret (whsec_…)")
	}
	ev, err := webhook.ConstructEventWithOptions(payload, signature, secret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return nil, fmt.Errorf("stripe webhook: %w", err)
	}
	out := &Event{ID: ev.ID, Type: string(ev.Type), Created: time.Unix(ev.Created, 0).UTC()}
	if ev.Data == nil {
		return out, nil
	}
	switch ev.Type {
	case stripe.EventTypeCheckoutSessionCompleted, stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded,
		stripe.EventTypeCheckoutSessionAsyncPaymentFailed, stripe.EventTypeCheckoutSessionExpired:
		return hostedEvent(out, ev)
	}
	if !strings.HasPrefix(out.Type, "payment_intent.") {
		return out, nil
	}
	var pi stripe.PaymentIntent
	if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil {
		return nil, fmt.Errorf("stripe webhook %s: payment intent: %w", ev.ID, err)
	}
	out.PaymentIntent, out.Metadata = pi.ID, pi.Metadata
	switch ev.Type {
	case stripe.EventTypePaymentIntentSucceeded:
		out.Status = Succeeded
	case stripe.EventTypePaymentIntentPaymentFailed, stripe.EventTypePaymentIntentCanceled:
		out.Status = Declined
	case stripe.EventTypePaymentIntentRequiresAction:
		out.Status = RequiresAction
	}
	return out, nil
}

// hostedEvent reads a checkout.session.* event's Checkout Session.
func hostedEvent(out *Event, ev stripe.Event) (*Event, error) {
	// Only the fields read, so that no other field of another API version
	// can fail the decoding.
	var cs struct {
		ID                string                              `json:"id"`
		ClientReferenceID string                              `json:"client_reference_id"`
		PaymentStatus     stripe.CheckoutSessionPaymentStatus `json:"payment_status"`
		Metadata          map[string]string                   `json:"metadata"`
	}
	if err := json.Unmarshal(ev.Data.Raw, &cs); err != nil {
		return nil, fmt.Errorf("stripe webhook %s: checkout session: %w", ev.ID, err)
	}
	out.HostedCheckout, out.ClientReference, out.Metadata = cs.ID, cs.ClientReferenceID, cs.Metadata
	switch ev.Type {
	case stripe.EventTypeCheckoutSessionCompleted:
		if cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusPaid {
			out.Status = Succeeded
		}
	case stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded:
		out.Status = Succeeded
	case stripe.EventTypeCheckoutSessionAsyncPaymentFailed:
		out.Status = Declined
	}
	return out, nil
}
