package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"
)

// Courier delivers the rows of an [Outbox], in passes: it claims each due
// row (pending and past its back-off, or sending under a lease that ran
// out) with one conditional UPDATE, hands it to its deliver function, and
// records the outcome under the claim it took: sent; failed at once for an
// error wrapping a *[PermanentError]; failed after MaxAttempts tries; else
// pending again after a back-off that doubles with each failure. The
// database does the concurrency, so that of several replicas' couriers
// exactly one delivers a row (life cycle: the package doc).
type Courier[R any, P Row[R]] struct {
	box     *Outbox[R, P]
	deliver func(context.Context, P) error
	about   func(P) []any
	opts    WorkerOptions
}

// WorkerOptions configure a Courier (the email Worker and every other
// outbox's); zero fields take the defaults.
type WorkerOptions struct {
	// Interval is how often Run looks for rows to deliver (default 1s).
	Interval time.Duration
	// Lease is how long a claim lasts before another worker may take the
	// row again (default 2m; longer than a delivery may take).
	Lease time.Duration
	// Backoff is the wait after the first temporary failure; it doubles with
	// each one, up to MaxBackoff (defaults 30s and 1h).
	Backoff, MaxBackoff time.Duration
	// MaxAttempts is how many tries a row gets before it is given up on
	// (default 12: with the default back-off, about six hours).
	MaxAttempts int
	// Batch bounds the rows one pass claims (default 20).
	Batch int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger takes the worker's log lines (default slog.Default()).
	Logger *slog.Logger
}

// withDefaults is o, nil for none, with its zero fields set to the defaults.
func (o *WorkerOptions) withDefaults() WorkerOptions {
	var w WorkerOptions
	if o != nil {
		w = *o
	}
	w.Interval = orDefault(w.Interval, time.Second)
	w.Lease = orDefault(w.Lease, 2*time.Minute)
	w.Backoff = orDefault(w.Backoff, 30*time.Second)
	w.MaxBackoff = orDefault(w.MaxBackoff, time.Hour)
	if w.MaxAttempts <= 0 {
		w.MaxAttempts = 12
	}
	if w.Batch <= 0 {
		w.Batch = 20
	}
	if w.Now == nil {
		w.Now = time.Now
	}
	if w.Logger == nil {
		w.Logger = slog.Default()
	}
	return w
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Courier returns the courier of o's rows: deliver sends one (an error
// wrapping a *PermanentError is final, any other is tried again later),
// about gives the log attributes that name it (its id, what it is about).
func (o *Outbox[R, P]) Courier(deliver func(context.Context, P) error, about func(P) []any, opts *WorkerOptions) *Courier[R, P] {
	return &Courier[R, P]{box: o, deliver: deliver, about: about, opts: opts.withDefaults()}
}

// Run delivers due rows every Interval until ctx ends.
func (c *Courier[R, P]) Run(ctx context.Context) {
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		if _, err := c.Deliver(ctx); err != nil && ctx.Err() == nil {
			c.opts.Logger.WarnContext(ctx, "deliver "+c.box.noun+"s", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// due is the condition of a row a courier may claim at a time (its
// arguments: Pending, the time, Sending, the time).
const due = "(status = ? AND next_at <= ?) OR (status = ? AND claimed_until <= ?)"

// Deliver makes one pass: it claims the rows that are due and delivers
// each. It returns how many were delivered.
func (c *Courier[R, P]) Deliver(ctx context.Context) (int, error) {
	now := c.opts.Now().UTC()
	var ids []string
	err := c.box.db.WithContext(ctx).Model(new(R)).Where(due, Pending, now, Sending, now).
		Order("next_at").Limit(c.opts.Batch).Pluck("id", &ids).Error
	if err != nil {
		return 0, fmt.Errorf("find due %ss: %w", c.box.noun, err)
	}
	sent := 0
	for _, id := range ids {
		r, err := c.claim(ctx, id)
		if err != nil {
			return sent, err
		}
		if r == nil {
			continue // another worker took it
		}
		ok, err := c.send(ctx, r)
		if err != nil {
			return sent, err
		}
		if ok {
			sent++
		}
	}
	return sent, nil
}

// claim moves a due row to sending under a new claim and returns it; nil
// when another worker claimed it first.
func (c *Courier[R, P]) claim(ctx context.Context, id string) (P, error) {
	now := c.opts.Now().UTC()
	claim := newToken("cl_")
	res := c.box.db.WithContext(ctx).Model(new(R)).Where("id = ? AND ("+due+")", id, Pending, now, Sending, now).
		Updates(map[string]any{"status": Sending, "claim": claim, "claimed_until": now.Add(c.opts.Lease),
			"attempts": gorm.Expr("attempts + 1"), "updated_at": now})
	if res.Error != nil {
		return nil, fmt.Errorf("claim %s %s: %w", c.box.noun, id, res.Error)
	}
	if res.RowsAffected != 1 {
		return nil, nil
	}
	r := P(new(R))
	if err := c.box.db.WithContext(ctx).Where("id = ? AND claim = ?", id, claim).Take(r).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("read claimed %s %s: %w", c.box.noun, id, err)
	}
	return r, nil
}

// send delivers a claimed row and records the outcome; it reports whether
// the row was delivered.
func (c *Courier[R, P]) send(ctx context.Context, r P) (bool, error) {
	derr := c.deliver(ctx, r)
	d := r.delivery()
	now := c.opts.Now().UTC()
	set := map[string]any{"claim": "", "claimed_until": nil, "updated_at": now}
	log := append(c.attrs(r), "attempts", d.Attempts, "err", derr)
	var perm *PermanentError
	switch {
	case derr == nil:
		set["status"], set["sent_at"], set["last_error"] = Sent, now, ""
	case errors.As(derr, &perm):
		set["status"], set["last_error"] = Failed, clip(derr.Error())
		c.opts.Logger.ErrorContext(ctx, c.box.noun+" refused for good", log...)
	case d.Attempts >= c.opts.MaxAttempts:
		set["status"] = Failed
		set["last_error"] = clip(fmt.Sprintf("gave up after %d temporary failures: %v", d.Attempts, derr))
		c.opts.Logger.ErrorContext(ctx, c.box.noun+" given up on", log...)
	default:
		set["status"], set["last_error"] = Pending, clip(derr.Error())
		set["next_at"] = now.Add(c.backoff(d.Attempts))
		c.opts.Logger.WarnContext(ctx, c.box.noun+" not delivered; trying again later", log...)
	}
	// Only the claim that delivered it records the outcome: a worker whose
	// lease ran out meanwhile changes nothing.
	res := c.box.db.WithContext(context.WithoutCancel(ctx)).Model(new(R)).
		Where("id = ? AND status = ? AND claim = ?", d.ID, Sending, d.Claim).Updates(set)
	if res.Error != nil {
		return false, fmt.Errorf("record %s %s: %w", c.box.noun, d.ID, res.Error)
	}
	return derr == nil, nil
}

// attrs are the log attributes that name r.
func (c *Courier[R, P]) attrs(r P) []any {
	if c.about == nil {
		return []any{"id", r.delivery().ID}
	}
	return c.about(r)
}

// backoff is the wait after the n-th try failed for now: Backoff × 2^(n−1),
// at most MaxBackoff.
func (c *Courier[R, P]) backoff(n int) time.Duration {
	d := c.opts.Backoff
	for i := 1; i < n && d < c.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, c.opts.MaxBackoff)
}

// clip bounds an error kept in last_error.
func clip(s string) string {
	const maxErr = 1000
	if len(s) > maxErr {
		return s[:maxErr]
	}
	return s
}
