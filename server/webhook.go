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

// StripeWebhook answers POST /webhooks/stripe. An event whose Stripe-Signature
// verifies with secret and that names a checkout session settles that
// session's open payment attempts through reconcile, which asks the provider
// itself: so replayed and out-of-order events change nothing. A bad
// signature is answered 400 and logged.
func StripeWebhook(secret string, reconcile func(ctx context.Context, sessionID string) error, logger *slog.Logger) http.Handler {
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
		if !strings.HasPrefix(ev.Type, "payment_intent.") || session == "" {
			w.WriteHeader(http.StatusOK) // not ours to act on
			return
		}
		if err := reconcile(r.Context(), session); err != nil {
			// Stripe retries a failed delivery; the reconciler also runs every minute.
			logger.Error("stripe webhook: settle session", "event", ev.ID, "session", session, "err", err)
			http.Error(w, "could not settle the payment yet", http.StatusInternalServerError)
			return
		}
		logger.Info("stripe webhook", "event", ev.ID, "type", ev.Type, "session", session)
		w.WriteHeader(http.StatusOK)
	})
}
