package ucp

import (
	"context"
	"encoding/json"
	"errors"
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

// webhookPath is where a refusal of the agent's webhook_url points: the
// agent's profile, whose order capability's config names it.
const webhookPath = `$.meta["ucp-agent"].profile`

// checkWebhook checks, before a checkout is created, the webhook_url the
// creating agent's profile names (its order capability's config) as every
// fetch is checked: https, and the address its host resolves to public. A
// URL the shop may not post to refuses the creation, naming the field.
func (u *UCP) checkWebhook(ctx context.Context, c *call) error {
	if c.webhookURL == "" || u.signingKey == nil {
		return nil
	}
	if _, err := u.hooks.CheckTarget(ctx, c.webhookURL); err != nil {
		why := "it must be an absolute https URL on a public address"
		var ue *webfetch.URLError
		switch {
		case errors.As(err, &ue):
			why = "it " + ue.Reason
		case errors.Is(err, webfetch.ErrPrivateAddress):
			why = "its host is not a public address"
		}
		return shop.Errorf(shop.Invalid, webhookPath,
			`the agent profile's ucp.capabilities["dev.ucp.shopping.order"][0].config.webhook_url is not one the shop may post to (%s); name an absolute https URL on a public address, or none`, why)
	}
	return nil
}

// subscribe records that the order of session id, which the agent of c
// has just created, sends its events to the webhook_url of that agent's
// profile (checked by checkWebhook). Only the creating agent does so: no
// later call, whoever makes it, changes where a checkout's order events go.
func (u *UCP) subscribe(ctx context.Context, c *call, id string) error {
	if c.webhookURL == "" || u.signingKey == nil {
		return nil
	}
	return u.orders.Subscribe(ctx, id, c.webhookURL)
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
