package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"shop/metrics"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, body)
	}
	return string(body)
}

// TestSources: the database's figures are read at each scrape; a source
// that fails is left out of that scrape and counted, the others still shown.
func TestSources(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	orders := int64(3)
	m := metrics.New(metrics.Sources{
		Sales: func(context.Context) ([]metrics.Sales, error) {
			return []metrics.Sales{{Currency: "usd", Orders: orders, OrderValue: 4500, Refunds: 1, RefundedValue: 500}}, nil
		},
		Backlog: func(context.Context) (metrics.Backlog, error) {
			return metrics.Backlog{Attempts: 2, Oldest: now.Add(-90 * time.Second)}, nil
		},
		Emails: func(context.Context) (metrics.Emails, error) { return metrics.Emails{}, errors.New("database gone") },
		Now:    func() time.Time { return now },
	})
	m.Charged(metrics.ChargeDeclined, 1200, "usd")
	m.ToolObserver("shop")("search_products", "ok", 30*time.Millisecond)
	m.SessionMoved("new", "ready_for_payment", 2)
	m.RateLimited("buyer")
	body := scrape(t, m)
	orders = 4
	again := scrape(t, m)
	for _, want := range []string{
		`shop_orders_total{currency="usd"} 3`, `shop_order_value_minor_total{currency="usd"} 4500`,
		`shop_refunds_total{currency="usd"} 1`, `shop_refund_value_minor_total{currency="usd"} 500`,
		`shop_reconciler_backlog{kind="attempt"} 2`, `shop_reconciler_backlog{kind="refund"} 0`, `shop_reconciler_oldest_seconds 90`,
		`shop_metrics_source_errors_total{source="emails"} 1`,
		`shop_charges_total{outcome="declined"} 1`, `shop_charge_amount_minor_total{currency="usd",outcome="declined"} 1200`,
		`shop_tool_calls_total{outcome="ok",server="shop",tool="search_products"} 1`,
		`shop_tool_call_duration_seconds_bucket{server="shop",tool="search_products",le="0.05"} 1`,
		`shop_checkout_session_transitions_total{from="new",to="ready_for_payment"} 2`,
		`shop_rate_limit_refusals_total{scope="buyer"} 1`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in:\n%s", want, body)
		}
	}
	if strings.Contains(body, "shop_emails{") {
		t.Errorf("a failed source's series were shown:\n%s", body)
	}
	if !strings.Contains(again, `shop_orders_total{currency="usd"} 4`) || !strings.Contains(again, `shop_metrics_source_errors_total{source="emails"} 2`) {
		t.Errorf("the second scrape did not read the sources again:\n%s", again)
	}
}

// TestListenAddr: /metrics follows the shop's port on loopback unless told
// where, or told off; an address it cannot follow names the flag to set.
func TestListenAddr(t *testing.T) {
	for _, tc := range []struct{ flag, shop, want, err string }{
		{"", "127.0.0.1:8000", "127.0.0.1:8001", ""},
		{"", ":8000", "127.0.0.1:8001", ""},
		{"", "127.0.0.1:0", "127.0.0.1:0", ""},
		{"off", "127.0.0.1:8000", "", ""},
		{"0.0.0.0:9464", "127.0.0.1:8000", "0.0.0.0:9464", ""},
		{"", "127.0.0.1:65535", "", "set --metrics-addr"},
		{"9464", "127.0.0.1:8000", "", "--metrics-addr \"9464\""},
	} {
		got, err := metrics.ListenAddr(tc.flag, tc.shop)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ListenAddr(%q, %q): %v, want an error saying %q", tc.flag, tc.shop, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ListenAddr(%q, %q) = %q, %v; want %q", tc.flag, tc.shop, got, err, tc.want)
		}
	}
}

// TestEarliest: the earliest time that is set, whatever the order; zero
// when none is.
func TestEarliest(t *testing.T) {
	a := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := a.Add(time.Hour)
	for _, tc := range []struct {
		ts   []time.Time
		want time.Time
	}{
		{nil, time.Time{}},
		{[]time.Time{{}, {}}, time.Time{}},
		{[]time.Time{b, {}, a}, a},
		{[]time.Time{{}, b}, b},
	} {
		if got := metrics.Earliest(tc.ts...); !got.Equal(tc.want) {
			t.Errorf("Earliest(%v) = %v, want %v", tc.ts, got, tc.want)
		}
	}
}

// TestOutboxes: each outbox (emails, order webhooks) shows its rows
// pending and failed and the age of its oldest pending row.
func TestOutboxes(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := metrics.New(metrics.Sources{
		Emails: func(context.Context) (metrics.Emails, error) { return metrics.Emails{Failed: 1}, nil },
		Webhooks: func(context.Context) (metrics.Outbox, error) {
			return metrics.Outbox{Pending: 2, Failed: 3, Oldest: now.Add(-time.Minute)}, nil
		},
		Now: func() time.Time { return now },
	})
	body := scrape(t, m)
	for _, want := range []string{
		`shop_emails{status="pending"} 0`, `shop_emails{status="failed"} 1`, "shop_emails_oldest_pending_seconds 0",
		`shop_order_webhooks{status="pending"} 2`, `shop_order_webhooks{status="failed"} 3`, "shop_order_webhooks_oldest_pending_seconds 60",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in:\n%s", want, body)
		}
	}
}
