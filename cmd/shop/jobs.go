package main

import (
	"context"
	"log/slog"
	"time"

	"shop/accounts"
	"shop/checkout"
	"shop/idempotency"
	"shop/orders"
)

// job is one of the shop's background jobs: what a pass of it does (for
// its log lines), how often it runs, and one pass, which answers how many
// rows it settled, delivered or deleted. Every replica runs every job; each
// pass changes a row once, whichever replica gets to it (docs/architecture.md).
type job struct {
	name  string
	every time.Duration
	pass  func(context.Context) (int64, error)
}

// jobs is every background job of a serving shop, in one list.
func (a *app) jobs(m *Main) []job {
	webhooks := orders.NewWebhookWorker(a.db, a.ucpDialect(m).WebhookSender(),
		&orders.WebhookOptions{Backoff: a.cfg.WebhookBackoff, Logger: m.Logger})
	list := []job{
		{"checkout sessions expired", checkout.DefaultSweep, a.checkout.ExpireDue},
		{"ended checkout sessions deleted", checkout.DefaultSweep, a.checkout.DeleteEnded},
		{"agents' idempotency records past retention deleted", checkout.DefaultSweep, func(ctx context.Context) (int64, error) {
			return a.idem.Sweep(ctx, time.Now().Add(-idempotency.Retention))
		}},
		{"sign-in codes, grants and tokens past retention, and OAuth clients never used, deleted", checkout.DefaultSweep, func(ctx context.Context) (int64, error) {
			return accounts.Sweep(ctx, a.db, time.Now())
		}},
		{"order webhooks past retention deleted", checkout.DefaultSweep, a.orders.SweepWebhooks},
		{"payments settled or refunded by the reconciler", time.Minute, counted(a.checkout.Reconcile)},
		{"staff refunds settled", time.Minute, counted(func(ctx context.Context) (int, error) {
			return a.admin.ReconcileRefunds(ctx, a.cfg.ReconcileGrace)
		})},
		{"provider payments without an attempt settled", time.Hour, counted(a.checkout.ScanPayments)},
		{"order webhooks delivered", time.Second, counted(webhooks.Deliver)},
	}
	if a.mailer != nil {
		list = append(list, job{"emails delivered", time.Second, counted(a.mailer.Deliver)})
	}
	return list
}

// counted is pass answering its count as an int64.
func counted(pass func(context.Context) (int, error)) func(context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		n, err := pass(ctx)
		return int64(n), err
	}
}

// runJobs runs each job now and then every period, each on a goroutine of
// its own, until ctx is done.
func runJobs(ctx context.Context, jobs []job, logger *slog.Logger) {
	for _, j := range jobs {
		go j.run(ctx, logger)
	}
}

// run runs j now and then every period until ctx is done, logging what a
// pass did and its errors.
func (j job) run(ctx context.Context, logger *slog.Logger) {
	t := time.NewTicker(j.every)
	defer t.Stop()
	for {
		n, err := j.pass(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.ErrorContext(ctx, j.name, "err", err)
		case n > 0:
			logger.InfoContext(ctx, j.name, "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
