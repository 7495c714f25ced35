package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Sources read the shop's figures from its database at each scrape. Each
// may be nil (left out); one that fails is left out of that scrape and
// counted in shop_metrics_source_errors_total.
type Sources struct {
	// Sales are the orders and succeeded refunds ever recorded, by currency.
	Sales func(ctx context.Context) ([]Sales, error)
	// Sessions counts the checkout sessions kept, by status.
	Sessions func(ctx context.Context) (map[string]int64, error)
	// HeldUnits is the units live sessions hold in stock.
	HeldUnits func(ctx context.Context) (int64, error)
	// Backlog is what the reconciler has yet to settle.
	Backlog func(ctx context.Context) (Backlog, error)
	// Emails is how the emails' outbox stands.
	Emails func(ctx context.Context) (Emails, error)
	// Webhooks is how the outbox of order webhooks to agents' platforms stands.
	Webhooks func(ctx context.Context) (Outbox, error)
	// Timeout bounds a scrape's reads (default 5s).
	Timeout time.Duration
	// Now is the clock the ages are measured with (default time.Now).
	Now func() time.Time
}

// Sales are the orders and refunds of one currency.
type Sales struct {
	Currency               string
	Orders, OrderValue     int64 // count, and minor units
	Refunds, RefundedValue int64 // succeeded refunds: count, and minor units
}

// Backlog is what awaits the reconciler: payment attempts, staff refunds
// and surplus payments whose outcome is not known yet, and when the oldest
// of them began (zero: none).
type Backlog struct {
	Attempts, Refunds, Surplus int64
	Oldest                     time.Time
}

// Earliest is the earliest of ts that are set, zero when none is: a
// Backlog's Oldest from its kinds' oldest.
func Earliest(ts ...time.Time) time.Time {
	var first time.Time
	for _, t := range ts {
		if !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}

// Outbox is how an outbox stands: rows not delivered yet, rows given up
// on, and when the oldest one not delivered was written (zero: none).
type Outbox struct {
	Pending, Failed int64
	Oldest          time.Time
}

// Emails is how the emails' outbox stands.
type Emails = Outbox

// databaseCollector turns Sources into metrics at each scrape.
type databaseCollector struct {
	src    Sources
	errors *prometheus.CounterVec

	orders, orderValue, refunds, refundValue *prometheus.Desc
	sessions, held, backlog, backlogAge      *prometheus.Desc
	emails, emailsAge                        *prometheus.Desc
	webhooks, webhooksAge                    *prometheus.Desc
}

func newDatabaseCollector(src Sources) *databaseCollector {
	if src.Timeout <= 0 {
		src.Timeout = 5 * time.Second
	}
	if src.Now == nil {
		src.Now = time.Now
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &databaseCollector{
		src: src,
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shop_metrics_source_errors_total", Help: "Reads of the database at a scrape that failed, by source; their series were left out.",
		}, []string{"source"}),
		orders:      d("shop_orders_total", "Orders placed, by currency (the database's count: the same on every replica).", "currency"),
		orderValue:  d("shop_order_value_minor_total", "Value of the orders placed, in minor units, by currency.", "currency"),
		refunds:     d("shop_refunds_total", "Refunds that went through, by currency.", "currency"),
		refundValue: d("shop_refund_value_minor_total", "Amounts refunded, in minor units, by currency.", "currency"),
		sessions:    d("shop_checkout_sessions", "Checkout sessions kept, by status.", "status"),
		held:        d("shop_stock_holds_units", "Units of stock held by checkout sessions now."),
		backlog:     d("shop_reconciler_backlog", "What awaits an outcome from the payment provider, by kind (attempt, refund, surplus).", "kind"),
		backlogAge:  d("shop_reconciler_oldest_seconds", "Age of the oldest item awaiting an outcome; 0 when none."),
		emails:      d("shop_emails", "Emails in the outbox by status: pending (not sent yet) and failed (given up on).", "status"),
		emailsAge:   d("shop_emails_oldest_pending_seconds", "Age of the oldest email not sent yet; 0 when none."),
		webhooks:    d("shop_order_webhooks", "Order webhooks to agents' platforms in their outbox by status: pending (not delivered yet) and failed (given up on).", "status"),
		webhooksAge: d("shop_order_webhooks_oldest_pending_seconds", "Age of the oldest order webhook not delivered yet; 0 when none."),
	}
}

func (c *databaseCollector) Describe(ch chan<- *prometheus.Desc) {
	c.errors.Describe(ch)
	for _, d := range []*prometheus.Desc{c.orders, c.orderValue, c.refunds, c.refundValue, c.sessions, c.held, c.backlog, c.backlogAge, c.emails, c.emailsAge, c.webhooks, c.webhooksAge} {
		ch <- d
	}
}

func (c *databaseCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.src.Timeout)
	defer cancel()
	now := c.src.Now()
	age := func(t time.Time) float64 {
		if t.IsZero() {
			return 0
		}
		return max(0, now.Sub(t).Seconds())
	}
	failed := func(source string, err error) bool {
		if err != nil {
			c.errors.WithLabelValues(source).Inc()
		}
		return err != nil
	}
	if f := c.src.Sales; f != nil {
		if sales, err := f(ctx); !failed("sales", err) {
			for _, s := range sales {
				ch <- prometheus.MustNewConstMetric(c.orders, prometheus.CounterValue, float64(s.Orders), s.Currency)
				ch <- prometheus.MustNewConstMetric(c.orderValue, prometheus.CounterValue, float64(s.OrderValue), s.Currency)
				ch <- prometheus.MustNewConstMetric(c.refunds, prometheus.CounterValue, float64(s.Refunds), s.Currency)
				ch <- prometheus.MustNewConstMetric(c.refundValue, prometheus.CounterValue, float64(s.RefundedValue), s.Currency)
			}
		}
	}
	if f := c.src.Sessions; f != nil {
		if by, err := f(ctx); !failed("sessions", err) {
			for status, n := range by {
				ch <- prometheus.MustNewConstMetric(c.sessions, prometheus.GaugeValue, float64(n), status)
			}
		}
	}
	if f := c.src.HeldUnits; f != nil {
		if n, err := f(ctx); !failed("holds", err) {
			ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(n))
		}
	}
	if f := c.src.Backlog; f != nil {
		if b, err := f(ctx); !failed("backlog", err) {
			for kind, n := range map[string]int64{"attempt": b.Attempts, "refund": b.Refunds, "surplus": b.Surplus} {
				ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(n), kind)
			}
			ch <- prometheus.MustNewConstMetric(c.backlogAge, prometheus.GaugeValue, age(b.Oldest))
		}
	}
	for _, o := range []struct {
		source      string
		read        func(context.Context) (Outbox, error)
		count, aged *prometheus.Desc
	}{{"emails", c.src.Emails, c.emails, c.emailsAge}, {"webhooks", c.src.Webhooks, c.webhooks, c.webhooksAge}} {
		if o.read == nil {
			continue
		}
		if b, err := o.read(ctx); !failed(o.source, err) {
			ch <- prometheus.MustNewConstMetric(o.count, prometheus.GaugeValue, float64(b.Pending), "pending")
			ch <- prometheus.MustNewConstMetric(o.count, prometheus.GaugeValue, float64(b.Failed), "failed")
			ch <- prometheus.MustNewConstMetric(o.aged, prometheus.GaugeValue, age(b.Oldest))
		}
	}
	c.errors.Collect(ch)
}
