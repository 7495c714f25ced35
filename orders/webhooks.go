package orders

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop/database"
	"shop/notify"
)

// The events an order's webhook carries (UCP's Order Event Webhook): each
// delivery carries the order as it stands when sent, the event says why.
const (
	WebhookCreated   = "created"
	WebhookUpdated   = "updated"
	WebhookFulfilled = "fulfilled"
	WebhookCanceled  = "canceled"
	WebhookRefunded  = "refunded"
)

const maxWebhookURL = 2048

// hookRow is a row of order_webhooks.
type hookRow struct {
	SessionID string `gorm:"primaryKey"`
	OrderID   string
	URL       string
	CreatedAt time.Time
}

func (hookRow) TableName() string { return "order_webhooks" }

// eventRow is a row of webhook_events, an outbox of notify's: notify
// keeps its delivery columns (notify.Delivery).
type eventRow struct {
	notify.Delivery
	DedupeKey string
	OrderID   string
	Event     string
	URL       string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (eventRow) TableName() string { return "webhook_events" }

// Subscribe records that the order of checkout session sessionID sends its
// events to url (a platform's webhook_url, checked by the caller): called
// before the session is completed, it takes effect in the order's
// transaction. A second call for the session keeps the first URL.
func (o *Orders) Subscribe(ctx context.Context, sessionID, url string) error {
	if sessionID == "" || url == "" || len(url) > maxWebhookURL {
		return fmt.Errorf("subscribe session %q to webhooks: the session id and a URL of at most %d bytes are required", sessionID, maxWebhookURL)
	}
	now := o.now().UTC().Truncate(time.Microsecond)
	err := o.db.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "session_id"}}, DoNothing: true}).
		Create(&hookRow{SessionID: sessionID, URL: url, CreatedAt: now}).Error
	if err != nil {
		return fmt.Errorf("subscribe session %s to webhooks: %w", sessionID, err)
	}
	return nil
}

// linkWebhook gives the session's webhook, if any, its order and queues
// the order's created event, in tx, the order's transaction.
func linkWebhook(tx *gorm.DB, sessionID, orderID string) error {
	res := tx.Model(&hookRow{}).Where("session_id = ? AND order_id = ''", sessionID).Update("order_id", orderID)
	if res.Error != nil {
		return fmt.Errorf("link the webhook of order %s: %w", orderID, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil
	}
	return queueWebhook(tx, orderID, WebhookCreated, orderID+"/created")
}

// queueWebhook writes the order's event to the outbox in tx, the
// transaction of the change that causes it, when the order has a webhook;
// key makes it unique (a second write with the same key writes nothing).
func queueWebhook(tx *gorm.DB, orderID, event, key string) error {
	now := database.Now(tx).UTC().Truncate(time.Microsecond)
	err := tx.Exec(`INSERT INTO webhook_events (id, dedupe_key, order_id, event, url, status, attempts, next_at, claim, last_error, created_at, updated_at)
		SELECT ?, ?, order_id, ?, url, ?, 0, ?, '', '', ?, ? FROM order_webhooks WHERE order_id = ?
		ON CONFLICT (dedupe_key) DO NOTHING`,
		newHookID(), key, event, notify.Pending, now, now, now, orderID).Error
	if err != nil {
		return fmt.Errorf("queue the %s webhook of order %s: %w", event, orderID, err)
	}
	return nil
}

// Webhook is one event as a WebhookSender sends it.
type Webhook struct {
	// ID is the event's id, the same on every try (Webhook-Id).
	ID string
	// OrderID is the order it is about; Event why it is sent.
	OrderID, Event string
	// URL is the platform's webhook URL.
	URL string
	// CreatedAt is when the event happened (Webhook-Timestamp).
	CreatedAt time.Time
}

// WebhookSender delivers an event (ucp signs and posts it); an error means
// the platform did not take it, and it is tried again later (one wrapping
// a *notify.PermanentError: never, and the event is failed at once).
type WebhookSender interface {
	SendWebhook(ctx context.Context, w Webhook) error
}

// WebhookWorker delivers the outbox of order webhooks (webhook_events)
// as notify's Worker does emails: it claims each due row with a
// conditional update and a lease, so that of several replicas one sends,
// and backs off after a failure, doubling up to an hour, for a bounded
// number of tries.
type WebhookWorker = notify.Courier[eventRow, *eventRow]

// WebhookOptions configure a WebhookWorker; zero fields take the defaults
// (an interval of 1s, a lease of 2m, a back-off of 30s doubling up to 1h,
// 12 tries, 20 rows a pass).
type WebhookOptions = notify.WorkerOptions

// NewWebhookWorker returns a worker that sends db's webhook outbox through sender.
func NewWebhookWorker(db *gorm.DB, sender WebhookSender, opts *WebhookOptions) *WebhookWorker {
	send := func(ctx context.Context, r *eventRow) error {
		return sender.SendWebhook(ctx, Webhook{ID: r.ID, OrderID: r.OrderID, Event: r.Event, URL: r.URL, CreatedAt: r.CreatedAt.UTC()})
	}
	about := func(r *eventRow) []any { return []any{"webhook", r.ID, "order", r.OrderID, "event", r.Event} }
	return webhookOutbox(db).Courier(send, about, opts)
}

// webhookOutbox is the outbox of webhook_events.
func webhookOutbox(db *gorm.DB) *notify.Outbox[eventRow, *eventRow] {
	return notify.NewOutbox[eventRow](db, "order webhook")
}

// newHookID is "evt_" and 128 random bits in hex.
func newHookID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "evt_" + hex.EncodeToString(b)
}

// WebhookRetention is how long an event that ended (sent, or given up on)
// is kept: nothing reads it again, but an operator may look into what a
// platform says it did not get.
const WebhookRetention = 30 * 24 * time.Hour

// SweepWebhooks deletes the events that ended more than WebhookRetention
// ago and returns how many; events still to deliver stay, however old.
// Replicas may sweep at once. A deleted event's dedupe key is free again,
// which writes nothing twice: each key is of a change an order makes once
// (created, canceled, delivered, a parcel, a refund).
//
// It also deletes the subscriptions (order_webhooks) of sessions that never
// became an order within UnlinkedHookRetention: ucp subscribes every
// checkout an agent with a webhook_url creates, most are never paid.
func (o *Orders) SweepWebhooks(ctx context.Context) (int64, error) {
	n, err := webhookOutbox(o.db).Sweep(ctx, o.now().Add(-WebhookRetention))
	if err != nil {
		return n, err
	}
	res := o.db.WithContext(ctx).Where("order_id = '' AND created_at < ?", o.now().UTC().Add(-UnlinkedHookRetention)).Delete(&hookRow{})
	if res.Error != nil {
		return n, fmt.Errorf("sweep unlinked webhook subscriptions: %w", res.Error)
	}
	return n + res.RowsAffected, nil
}

// UnlinkedHookRetention is how long a subscription whose session made no
// order is kept: longer than a session can live (at most 7 days, the
// policy's bound on lifetime_hours), so that a session still open keeps it.
const UnlinkedHookRetention = 8 * 24 * time.Hour

// WebhookBacklog is how the outbox of order webhooks stands, for the
// operator's metrics.
func (o *Orders) WebhookBacklog(ctx context.Context) (notify.Backlog, error) {
	return webhookOutbox(o.db).Stand(ctx)
}
