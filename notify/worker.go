package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"
)

// Message is one email as a Sender sends it.
type Message struct {
	// ID is the outbox row's id, the same on every try: the Message-ID is made from it.
	ID string
	// From, To and ReplyTo (may be empty) are addresses.
	From, To, ReplyTo string
	// Subject, Text and HTML are what the caller rendered.
	Subject, Text, HTML string
	// Date is when the email was written.
	Date time.Time
}

// Sender delivers a message. An error wrapping a *PermanentError says the
// server refused it for good (SMTP 5xx); any other error is temporary.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// PermanentError is a refusal that trying again will not change.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

func (e *PermanentError) Unwrap() error { return e.Err }

// Worker delivers the outbox's pending emails.
type Worker struct {
	db     *gorm.DB
	sender Sender
	from   string
	opts   WorkerOptions
}

// WorkerOptions configure a Worker; zero fields take the defaults.
type WorkerOptions struct {
	// Interval is how often Run looks for emails to send (default 1s).
	Interval time.Duration
	// Lease is how long a claim lasts before another worker may take the
	// email again (default 2m; longer than a send may take).
	Lease time.Duration
	// Backoff is the wait after the first temporary failure; it doubles with
	// each one, up to MaxBackoff (defaults 30s and 1h).
	Backoff, MaxBackoff time.Duration
	// MaxAttempts is how many tries an email gets before it is given up on
	// (default 12: with the default back-off, about six hours).
	MaxAttempts int
	// Batch bounds the emails one pass claims (default 20).
	Batch int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger takes the worker's log lines (default slog.Default()).
	Logger *slog.Logger
}

// NewWorker returns a worker that sends db's outbox through sender, from
// the address from.
func NewWorker(db *gorm.DB, sender Sender, from string, opts *WorkerOptions) *Worker {
	w := &Worker{db: db, sender: sender, from: from}
	if opts != nil {
		w.opts = *opts
	}
	o := &w.opts
	o.Interval = orDefault(o.Interval, time.Second)
	o.Lease = orDefault(o.Lease, 2*time.Minute)
	o.Backoff = orDefault(o.Backoff, 30*time.Second)
	o.MaxBackoff = orDefault(o.MaxBackoff, time.Hour)
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

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Run delivers pending emails every Interval until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	t := time.NewTicker(w.opts.Interval)
	defer t.Stop()
	for {
		if _, err := w.Deliver(ctx); err != nil && ctx.Err() == nil {
			w.opts.Logger.WarnContext(ctx, "deliver emails", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Deliver makes one pass: it claims the emails that are due (pending and
// past their back-off, or claimed by a worker whose lease ran out) and sends
// each. It returns how many the server accepted.
func (w *Worker) Deliver(ctx context.Context) (int, error) {
	now := w.opts.Now().UTC()
	var ids []string
	err := w.db.WithContext(ctx).Model(&row{}).
		Where("(status = ? AND next_at <= ?) OR (status = ? AND claimed_until <= ?)", Pending, now, Sending, now).
		Order("next_at").Limit(w.opts.Batch).Pluck("id", &ids).Error
	if err != nil {
		return 0, fmt.Errorf("find due emails: %w", err)
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

// claim moves a due email to sending under a new claim and returns it; nil
// when another worker claimed it first.
func (w *Worker) claim(ctx context.Context, id string) (*row, error) {
	now := w.opts.Now().UTC()
	claim, until := newID(), now.Add(w.opts.Lease)
	res := w.db.WithContext(ctx).Model(&row{}).
		Where("id = ? AND ((status = ? AND next_at <= ?) OR (status = ? AND claimed_until <= ?))", id, Pending, now, Sending, now).
		Updates(map[string]any{"status": Sending, "claim": claim, "claimed_until": until,
			"attempts": gorm.Expr("attempts + 1"), "updated_at": now})
	if res.Error != nil {
		return nil, fmt.Errorf("claim email %s: %w", id, res.Error)
	}
	if res.RowsAffected != 1 {
		return nil, nil
	}
	var r row
	if err := w.db.WithContext(ctx).Where("id = ? AND claim = ?", id, claim).Take(&r).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("read claimed email %s: %w", id, err)
	}
	return &r, nil
}

// send sends a claimed email and records the outcome; it reports whether
// the server accepted it.
func (w *Worker) send(ctx context.Context, r *row) (bool, error) {
	serr := w.sender.Send(ctx, Message{ID: r.ID, From: w.from, To: r.Recipient, ReplyTo: r.ReplyTo,
		Subject: r.Subject, Text: r.BodyText, HTML: r.BodyHTML, Date: r.CreatedAt})
	now := w.opts.Now().UTC()
	set := map[string]any{"claim": "", "claimed_until": nil, "updated_at": now}
	var perm *PermanentError
	switch {
	case serr == nil:
		set["status"], set["sent_at"], set["last_error"] = Sent, now, ""
	case errors.As(serr, &perm):
		set["status"], set["last_error"] = Failed, clip(serr.Error())
		w.opts.Logger.ErrorContext(ctx, "email refused for good", "email", r.ID, "kind", r.Kind, "ref", r.Ref, "err", serr)
	case r.Attempts >= w.opts.MaxAttempts:
		set["status"] = Failed
		set["last_error"] = clip(fmt.Sprintf("gave up after %d temporary failures: %v", r.Attempts, serr))
		w.opts.Logger.ErrorContext(ctx, "email given up on", "email", r.ID, "kind", r.Kind, "ref", r.Ref, "attempts", r.Attempts, "err", serr)
	default:
		set["status"], set["last_error"] = Pending, clip(serr.Error())
		set["next_at"] = now.Add(w.backoff(r.Attempts))
		w.opts.Logger.WarnContext(ctx, "email refused for now; trying again later", "email", r.ID, "kind", r.Kind, "attempts", r.Attempts, "err", serr)
	}
	// Only the claim that sent it records the outcome: a worker whose lease
	// ran out meanwhile changes nothing.
	res := w.db.WithContext(context.WithoutCancel(ctx)).Model(&row{}).
		Where("id = ? AND status = ? AND claim = ?", r.ID, Sending, r.Claim).Updates(set)
	if res.Error != nil {
		return false, fmt.Errorf("record email %s: %w", r.ID, res.Error)
	}
	return serr == nil, nil
}

// backoff is the wait after the n-th try failed for now: Backoff × 2^(n−1),
// at most MaxBackoff.
func (w *Worker) backoff(n int) time.Duration {
	d := w.opts.Backoff
	for i := 1; i < n && d < w.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, w.opts.MaxBackoff)
}

// clip bounds an error kept in last_error.
func clip(s string) string {
	const maxErr = 1000
	if len(s) > maxErr {
		return s[:maxErr]
	}
	return s
}
