package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"shop/payments"
)

// maxWebhookBytes bounds a webhook's body; Stripe's events are far smaller.
const maxWebhookBytes = 256 << 10

// Settler is what the webhook asks of checkout: checkout.Checkout
// satisfies it.
type Settler interface {
	// ReconcileSession settles a session's open payment attempts as the
	// provider reports them.
	ReconcileSession(ctx context.Context, sessionID string) error
	// SettleHosted settles a hosted payment page (a Stripe Checkout
	// Session) as the provider reports it.
	SettleHosted(ctx context.Context, id string) error
	// SettlePayment settles the charge made under an idempotency key as
	// the provider reports it, the shop's records of its attempt lost or
	// not.
	SettlePayment(ctx context.Context, key string) error
}

// StripeWebhook answers POST /webhooks/stripe. An event whose Stripe-Signature
// verifies with secret settles what it is about, asking the provider itself
// rather than trusting the event's copy: a payment_intent.* event naming a
// checkout session settles that session's open payment attempts, and a
// success of a charge the shop made (metadata charged_by) settles it even
// when the shop has no attempt for it (SettlePayment); a
// checkout.session.* event settles that hosted payment page (an order, or a
// refund of a payment no order takes). So replayed and out-of-order events
// change nothing. A bad signature is answered 400 and logged.
func StripeWebhook(secret string, s Settler, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if secret == "" {
			logger.Warn("stripe webhook received but STRIPE_WEBHOOK_SECRET is unset")
			http.Error(w, "webhooks are not configured", http.StatusServiceUnavailable)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBytes))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		ev, err := payments.ParseStripeEvent(body, r.Header.Get("Stripe-Signature"), secret)
		if err != nil {
			logger.Warn("stripe webhook refused", "err", err, "remote", r.RemoteAddr)
			http.Error(w, "invalid signature", http.StatusBadRequest)
			return
		}
		session := ev.Metadata["checkout_session_id"]
		switch {
		case strings.HasPrefix(ev.Type, "checkout.session.") && ev.HostedCheckout != "":
			err = s.SettleHosted(r.Context(), ev.HostedCheckout)
		case strings.HasPrefix(ev.Type, "payment_intent.") && session != "":
			err = s.ReconcileSession(r.Context(), session)
			// A success of a charge the shop made settles even when no
			// attempt has it (a database restored from before it).
			if key := ev.Metadata["idempotency_key"]; err == nil && ev.Status == payments.Succeeded &&
				ev.Metadata[payments.ChargedBy] == payments.ChargedByShop && key != "" {
				err = s.SettlePayment(r.Context(), key)
			}
		default:
			w.WriteHeader(http.StatusOK) // not ours to act on
			return
		}
		if err != nil {
			// Stripe retries a failed delivery; the reconciler also runs every minute.
			logger.Error("stripe webhook: settle", "event", ev.ID, "type", ev.Type, "session", session, "err", err)
			http.Error(w, "could not settle the payment yet", http.StatusInternalServerError)
			return
		}
		logger.Info("stripe webhook", "event", ev.ID, "type", ev.Type, "session", session)
		w.WriteHeader(http.StatusOK)
	})
}
