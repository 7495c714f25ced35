package main

import (
	"context"

	shopmetrics "shop/metrics"
	"shop/notify"
	"shop/payments"
)

// newMetrics is the operator's metrics of the wired shop: what the
// database holds is read at each scrape.
func (a *app) newMetrics() *shopmetrics.Metrics {
	return shopmetrics.New(shopmetrics.Sources{
		Sales: func(ctx context.Context) ([]shopmetrics.Sales, error) {
			ts, err := a.orders.Tallies(ctx)
			out := make([]shopmetrics.Sales, len(ts))
			for i, t := range ts {
				out[i] = shopmetrics.Sales{Currency: t.Currency, Orders: t.Orders, OrderValue: t.Value, Refunds: t.Refunds, RefundedValue: t.Refunded}
			}
			return out, err
		},
		// Closures: the parts are wired after the metrics (the charger counts into them).
		Sessions:  func(ctx context.Context) (map[string]int64, error) { return a.checkout.SessionsByStatus(ctx) },
		HeldUnits: func(ctx context.Context) (int64, error) { return a.catalog.HeldUnits(ctx) },
		Backlog: func(ctx context.Context) (shopmetrics.Backlog, error) {
			u, err := a.checkout.Unsettled(ctx)
			if err != nil {
				return shopmetrics.Backlog{}, err
			}
			refunds, oldestRefund, err := a.orders.PendingRefunds(ctx)
			return shopmetrics.Backlog{Attempts: u.Attempts, Refunds: refunds, Surplus: u.Surplus,
				Oldest: shopmetrics.Earliest(u.OldestAttempt, u.OldestSurplus, oldestRefund)}, err
		},
		Emails: func(ctx context.Context) (shopmetrics.Emails, error) {
			s, err := notify.Stand(ctx, a.db)
			return outboxStand(s), err
		},
		Webhooks: func(ctx context.Context) (shopmetrics.Outbox, error) {
			s, err := a.orders.WebhookBacklog(ctx)
			return outboxStand(s), err
		},
	})
}

// outboxStand is an outbox's backlog as the metrics show it.
func outboxStand(b notify.Backlog) shopmetrics.Outbox {
	return shopmetrics.Outbox{Pending: b.Pending, Failed: b.Failed, Oldest: b.Oldest}
}

// countCharge counts a charge asked of the payment provider, with its
// outcome and amount, in the operator's metrics.
func (a *app) countCharge(r payments.Request, res *payments.Result, err error) {
	outcome := shopmetrics.ChargeError
	if err == nil && res != nil {
		switch res.Status {
		case payments.Succeeded:
			outcome = shopmetrics.ChargeSucceeded
		case payments.Declined:
			outcome = shopmetrics.ChargeDeclined
		case payments.RequiresAction:
			outcome = shopmetrics.ChargeRequires3DS
		}
	}
	a.metrics.Charged(outcome, r.Amount, r.Currency)
}
