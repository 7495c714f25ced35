package checkout

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// ExpireDue marks expired the open sessions past their expiry and drops the
// stock holds that have run out. It returns how many sessions expired.
// Replicas may run it at once: each row changes once.
func (c *Checkout) ExpireDue(ctx context.Context) (int64, error) {
	now := c.now().UTC()
	var expired int64
	for _, from := range []Status{NotReady, Ready} { // one status at a time, to tell SessionMoved
		res := c.db.WithContext(ctx).Model(&sessionRow{}).
			Where("status = ? AND expires_at <= ?", from, now).
			Updates(map[string]any{"status": Expired, "version": gorm.Expr("version + 1"), "updated_at": now})
		if res.Error != nil {
			return expired, fmt.Errorf("expire sessions: %w", res.Error)
		}
		c.noteMove(c.db, from, Expired, res.RowsAffected)
		expired += res.RowsAffected
	}
	if _, err := c.catalog.ReleaseExpired(ctx); err != nil {
		return expired, err
	}
	return expired, nil
}

// Sweep runs ExpireDue, then DeleteEnded and Options.AlsoSweep, now and
// then every interval until ctx is done.
func (c *Checkout) Sweep(ctx context.Context, every time.Duration) {
	c.repeat(ctx, every, "checkout sessions expired", func(ctx context.Context) (int64, error) {
		n, err := c.ExpireDue(ctx)
		if err != nil {
			return n, err
		}
		deleted, err := c.DeleteEnded(ctx)
		if deleted > 0 {
			c.logger.InfoContext(ctx, "ended checkout sessions deleted", "count", deleted, "retention", c.policy.SessionRetention())
		}
		if c.swept != nil && err == nil {
			var more int64
			more, err = c.swept(ctx)
			if more > 0 {
				c.logger.InfoContext(ctx, "rows past their retention deleted", "count", more)
			}
		}
		return n, err
	})
}

// Run does the checkout's background work, as every replica of a shop
// does, until ctx is done: sessions past their expiry release their stock
// (Sweep, every DefaultSweep; each session expires once, whichever replica
// sweeps it), and payments left open by a crash or a lost answer are
// settled at start and every minute after (RunReconciler), and the
// provider's payments that no attempt accounts for at start and every hour
// (ScanPayments).
func (c *Checkout) Run(ctx context.Context) {
	go c.Sweep(ctx, DefaultSweep)
	go c.repeat(ctx, time.Hour, "provider payments without an attempt settled", func(ctx context.Context) (int64, error) {
		n, err := c.ScanPayments(ctx)
		return int64(n), err
	})
	c.RunReconciler(ctx, time.Minute)
}

// RunReconciler runs Reconcile now and then every interval until ctx is done.
func (c *Checkout) RunReconciler(ctx context.Context, every time.Duration) {
	c.repeat(ctx, every, "payments settled or refunded by the reconciler", func(ctx context.Context) (int64, error) {
		n, err := c.Reconcile(ctx)
		return int64(n), err
	})
}

// repeat runs job now and then every interval (a minute when not positive)
// until ctx is done, logging what it did under what and its errors.
func (c *Checkout) repeat(ctx context.Context, every time.Duration, what string, job func(context.Context) (int64, error)) {
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := job(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			c.logger.ErrorContext(ctx, what, "err", err)
		case n > 0:
			c.logger.InfoContext(ctx, what, "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
