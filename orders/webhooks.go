package orders

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop/database"
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

// The statuses of a webhook event, as notify's of an email.
const (
	hookPending = "pending"
	hookSending = "sending"
	hookSent    = "sent"
	hookFailed  = "failed"
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

// eventRow is a row of webhook_events.
type eventRow struct {
	ID           string `gorm:"primaryKey"`
	DedupeKey    string
	OrderID      string
	Event        string
	URL          string
	Status       string
	Attempts     int
	NextAt       time.Time
	Claim        string
	ClaimedUntil *time.Time
	LastError    string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	SentAt       *time.Time
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
		newHookID(), key, event, hookPending, now, now, now, orderID).Error
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
// the platform did not take it, and it is tried again later.
type WebhookSender interface {
	SendWebhook(ctx context.Context, w Webhook) error
}

// WebhookWorker delivers the outbox of order webhooks: as notify's Worker
// does emails, it claims each due row with a conditional update and a
// lease, so that of several replicas one sends, and backs off after a
// failure, doubling up to an hour, for a bounded number of tries.
type WebhookWorker struct {
	db     *gorm.DB
	sender WebhookSender
	opts   WebhookOptions
}

// WebhookOptions configure a WebhookWorker; zero fields take the defaults.
type WebhookOptions struct {
	Interval    time.Duration // between passes [1s]
	Lease       time.Duration // of a claim [2m]
	Backoff     time.Duration // after the first failure, doubling [30s]
	MaxBackoff  time.Duration // [1h]
	MaxAttempts int           // tries before giving up [12]
	Batch       int           // rows claimed per pass [20]
	Now         func() time.Time
	Logger      *slog.Logger
}

// NewWebhookWorker returns a worker that sends db's webhook outbox through sender.
func NewWebhookWorker(db *gorm.DB, sender WebhookSender, opts *WebhookOptions) *WebhookWorker {
	w := &WebhookWorker{db: db, sender: sender}
	if opts != nil {
		w.opts = *opts
	}
	o := &w.opts
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Interval, time.Second)
	def(&o.Lease, 2*time.Minute)
	def(&o.Backoff, 30*time.Second)
	def(&o.MaxBackoff, time.Hour)
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 12
	}
	if o.Batch <= 0 {
		o.Batch = 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return w
}

// Run delivers due events every Interval until ctx ends.
func (w *WebhookWorker) Run(ctx context.Context) {
	t := time.NewTicker(w.opts.Interval)
	defer t.Stop()
	for {
		if _, err := w.Deliver(ctx); err != nil && ctx.Err() == nil {
			w.opts.Logger.WarnContext(ctx, "deliver order webhooks", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

const dueHook = "(status = ? AND next_at <= ?) OR (status = ? AND claimed_until <= ?)"

// Deliver makes one pass over the due events and returns how many the
// platforms took.
func (w *WebhookWorker) Deliver(ctx context.Context) (int, error) {
	now := w.opts.Now().UTC()
	var ids []string
	err := w.db.WithContext(ctx).Model(&eventRow{}).Where(dueHook, hookPending, now, hookSending, now).
		Order("next_at").Limit(w.opts.Batch).Pluck("id", &ids).Error
	if err != nil {
		return 0, fmt.Errorf("find due webhooks: %w", err)
	}
	sent := 0
	for _, id := range ids {
		r, err := w.claim(ctx, id)
		if err != nil {
			return sent, err
		}
		if r == nil {
			continue // another worker took it
		}
		ok, err := w.send(ctx, r)
		if err != nil {
			return sent, err
		}
		if ok {
			sent++
		}
	}
	return sent, nil
}

// claim moves a due event to sending under a new claim; nil when another
// worker claimed it first.
func (w *WebhookWorker) claim(ctx context.Context, id string) (*eventRow, error) {
	now := w.opts.Now().UTC()
	claim := newHookID()
	res := w.db.WithContext(ctx).Model(&eventRow{}).Where("id = ? AND ("+dueHook+")", id, hookPending, now, hookSending, now).
		Updates(map[string]any{"status": hookSending, "claim": claim, "claimed_until": now.Add(w.opts.Lease),
			"attempts": gorm.Expr("attempts + 1"), "updated_at": now})
	if res.Error != nil {
		return nil, fmt.Errorf("claim webhook %s: %w", id, res.Error)
	}
	if res.RowsAffected != 1 {
		return nil, nil
	}
	var r eventRow
	if err := w.db.WithContext(ctx).Where("id = ? AND claim = ?", id, claim).Take(&r).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("read claimed webhook %s: %w", id, err)
	}
	return &r, nil
}

// send sends a claimed event and records the outcome.
func (w *WebhookWorker) send(ctx context.Context, r *eventRow) (bool, error) {
	serr := w.sender.SendWebhook(ctx, Webhook{ID: r.ID, OrderID: r.OrderID, Event: r.Event, URL: r.URL, CreatedAt: r.CreatedAt.UTC()})
	now := w.opts.Now().UTC()
	set := map[string]any{"claim": "", "claimed_until": nil, "updated_at": now}
	switch {
	case serr == nil:
		set["status"], set["sent_at"], set["last_error"] = hookSent, now, ""
	case r.Attempts >= w.opts.MaxAttempts:
		set["status"], set["last_error"] = hookFailed, clipError(fmt.Sprintf("gave up after %d tries: %v", r.Attempts, serr))
		w.opts.Logger.ErrorContext(ctx, "order webhook given up on", "webhook", r.ID, "order", r.OrderID, "event", r.Event, "err", serr)
	default:
		set["status"], set["last_error"] = hookPending, clipError(serr.Error())
		set["next_at"] = now.Add(w.backoff(r.Attempts))
		w.opts.Logger.WarnContext(ctx, "order webhook not taken; trying again later", "webhook", r.ID, "order", r.OrderID, "attempts", r.Attempts, "err", serr)
	}
	res := w.db.WithContext(context.WithoutCancel(ctx)).Model(&eventRow{}).
		Where("id = ? AND status = ? AND claim = ?", r.ID, hookSending, r.Claim).Updates(set)
	if res.Error != nil {
		return false, fmt.Errorf("record webhook %s: %w", r.ID, res.Error)
	}
	return serr == nil, nil
}

// backoff is Backoff × 2^(n−1), at most MaxBackoff.
func (w *WebhookWorker) backoff(n int) time.Duration {
	d := w.opts.Backoff
	for i := 1; i < n && d < w.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, w.opts.MaxBackoff)
}

func clipError(s string) string {
	if len(s) > 1000 {
		return s[:1000]
	}
	return s
}

// newHookID is "evt_" and 128 random bits in hex.
func newHookID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "evt_" + hex.EncodeToString(b)
}
