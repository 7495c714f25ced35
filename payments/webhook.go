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
// metadata are read, which every version has.
//
// An event about anything but a PaymentIntent comes back with an empty
// PaymentIntent, for the caller to acknowledge and ignore.
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
	if !strings.HasPrefix(out.Type, "payment_intent.") || ev.Data == nil {
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
