package ucp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"shop"
	"shop/orders"
	"shop/webfetch"
)

// Bounds of a webhook delivery: the platform must answer quickly (order
// capability, Events guidelines).
const (
	webhookTimeout  = 10 * time.Second
	maxWebhookReply = 64 << 10
)

// newWebhookFetcher posts webhooks under the checks of profile fetches.
func newWebhookFetcher(loopback bool) *webfetch.Fetcher {
	return webfetch.New(webfetch.Options{AllowLoopback: loopback, Timeout: webhookTimeout,
		MaxBytes: maxWebhookReply, MaxURLLen: maxProfileURLLen})
}

// subscribe records, before session id is completed, that its order's
// events go to the webhook_url the agent's profile names (its order
// capability's config), when it names one. A URL the shop may not post to
// refuses the completion before anything is charged.
func (u *UCP) subscribe(ctx context.Context, c *call, sessionID string) error {
	if c.webhookURL == "" || u.signingKey == nil {
		return nil
	}
	if _, err := u.hooks.CheckURL(c.webhookURL); err != nil {
		return shop.Errorf(shop.Invalid, `$.meta["ucp-agent"].profile`,
			"the agent profile's dev.ucp.shopping.order config.webhook_url is not one the shop may post to (%v); name an absolute https URL on a public address, or none", err)
	}
	return u.orders.Subscribe(ctx, sessionID, c.webhookURL)
}

// WebhookSender is what delivers orders' webhooks (orders.WebhookWorker's
// sender): each event is the order as it stands, UCP's order entity,
// signed with the shop's key and posted to the platform's URL.
func (u *UCP) WebhookSender() orders.WebhookSender { return webhookSender{u} }

type webhookSender struct{ u *UCP }

// SendWebhook posts w's order to w.URL.
func (s webhookSender) SendWebhook(ctx context.Context, w orders.Webhook) error {
	u := s.u
	o, err := u.orders.ByID(ctx, w.OrderID)
	if err != nil {
		return fmt.Errorf("webhook %s: read order: %w", w.ID, err)
	}
	c := &call{active: map[string]bool{CapOrder: true}, version: Version}
	body, err := json.Marshal(u.toOrder(c, o))
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.ID, err)
	}
	u2, err := u.hooks.CheckURL(w.URL)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.ID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u2.String(), nil)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.ID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("UCP-Agent", `profile="`+u.publicURL+`/.well-known/ucp"`)
	req.Header.Set("Webhook-Id", w.ID)
	req.Header.Set("Webhook-Timestamp", unixTime(w.CreatedAt))
	if err := signRequest(req, body, u.signingKey, []string{"ucp-agent", "webhook-id", "webhook-timestamp"}, time.Now()); err != nil {
		return fmt.Errorf("webhook %s: %w", w.ID, err)
	}
	if err := u.hooks.Post(ctx, req.URL.String(), req.Header, body); err != nil {
		return fmt.Errorf("webhook %s (%s): %w", w.ID, w.Event, err)
	}
	return nil
}
