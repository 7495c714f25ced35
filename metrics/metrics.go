// Package metrics is the shop's Prometheus metrics
// (github.com/prometheus/client_golang), in a registry of their own served
// by Handler on the operator's listener. The business packages know nothing
// of it: what happens in a process (tool calls, charges, refusals) comes in
// through plain methods the wiring hooks up, and what the database holds
// (orders, holds, backlogs, emails, webhooks) is read from Sources at each scrape, so
// that every replica reports the same shop-wide figures and nothing is lost
// with a restart.
//
// The series, all prefixed shop_:
//
//	tool_calls_total{server, tool, outcome}            counter: ok, refused, error
//	tool_call_duration_seconds{server, tool}           histogram
//	checkout_session_transitions_total{from, to}       counter (this process's moves)
//	checkout_sessions{status}                          gauge (the database's)
//	charges_total{outcome}                             counter: succeeded, declined, requires_3ds, error
//	charge_amount_minor_total{outcome, currency}       counter: minor units asked for
//	orders_total{currency}, order_value_minor_total{currency}        counters (the database's)
//	refunds_total{currency}, refund_value_minor_total{currency}      counters (succeeded refunds)
//	stock_holds_units                                  gauge: units held by live sessions
//	reconciler_backlog{kind}                           gauge: payment attempts, refunds, surplus payments awaiting an outcome
//	reconciler_oldest_seconds                          gauge: age of the oldest of them (0: none)
//	emails{status}                                     gauge: pending, failed
//	emails_oldest_pending_seconds                      gauge
//	order_webhooks{status}                             gauge: pending, failed (order webhooks to agents' platforms)
//	order_webhooks_oldest_pending_seconds              gauge
//	rate_limit_refusals_total{scope}                   counter: buyer, address, feed, feed
//	db_statements_total{operation}                     counter: SQL statements run, by tool ("other": background work)
//	db_commits_total{operation}                        counter: transactions committed, by tool
//	metrics_source_errors_total{source}                counter: a database read that failed at a scrape
//
// and Go's runtime and process collectors (go_*, process_*).
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the shop's metrics.
type Metrics struct {
	reg           *prometheus.Registry
	toolCalls     *prometheus.CounterVec
	toolSeconds   *prometheus.HistogramVec
	sessionMoves  *prometheus.CounterVec
	charges       *prometheus.CounterVec
	chargedAmount *prometheus.CounterVec
	refusals      *prometheus.CounterVec
	statements    *prometheus.CounterVec
	commits       *prometheus.CounterVec
	// byOperation holds each operation's two counters, found once: a
	// lookup by label value hashes it, and a purchase runs dozens of
	// statements.
	byOperation sync.Map // operation → *[2]prometheus.Counter
}

// The outcomes of a charge, as Charged takes them.
const (
	ChargeSucceeded   = "succeeded"
	ChargeDeclined    = "declined"
	ChargeRequires3DS = "requires_3ds"
	ChargeError       = "error" // no answer, or one that says nothing of the outcome
)

// New returns the shop's metrics, reading the database's figures from src
// at each scrape (a nil source is left out).
func New(src Sources) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shop_tool_calls_total", Help: "MCP tool calls by server (shop, shop-admin), tool and outcome (ok, refused, error).",
	}, []string{"server", "tool", "outcome"})
	m.toolSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "shop_tool_call_duration_seconds", Help: "How long MCP tool calls took, by server and tool.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"server", "tool"})
	m.sessionMoves = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shop_checkout_session_transitions_total", Help: "Checkout sessions' status changes this process made, by from and to status.",
	}, []string{"from", "to"})
	m.charges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shop_charges_total", Help: "Charges asked of the payment provider, by outcome (succeeded, declined, requires_3ds, error).",
	}, []string{"outcome"})
	m.chargedAmount = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shop_charge_amount_minor_total", Help: "Amounts of the charges asked of the payment provider, in minor units, by outcome and currency.",
	}, []string{"outcome", "currency"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shop_rate_limit_refusals_total", Help: "Requests refused with 429 by the rate limits, by scope (buyer, address, feed).",
	}, []string{"scope"})
	m.statements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shop_db_statements_total", Help: "SQL statements the shop ran, by operation (the tool called; other: background work).",
	}, []string{"operation"})
	m.commits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shop_db_commits_total", Help: "Database transactions the shop committed, by operation (the tool called; other: background work).",
	}, []string{"operation"})
	m.reg.MustRegister(m.toolCalls, m.toolSeconds, m.sessionMoves, m.charges, m.chargedAmount, m.refusals,
		m.statements, m.commits,
		newDatabaseCollector(src),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	return mux
}

// ToolObserver returns the hook of one MCP server (named server) that
// counts its tool calls and times them.
func (m *Metrics) ToolObserver(server string) func(tool, outcome string, took time.Duration) {
	// Each tool's and outcome's series, found once: a lookup by label
	// values hashes them, on every call.
	type toolOutcome struct{ tool, outcome string }
	var (
		mu      sync.RWMutex
		calls   = map[toolOutcome]prometheus.Counter{}
		seconds = map[string]prometheus.Observer{}
	)
	return func(tool, outcome string, took time.Duration) {
		key := toolOutcome{tool, outcome}
		mu.RLock()
		c, o := calls[key], seconds[tool]
		mu.RUnlock()
		if c == nil || o == nil {
			c, o = m.toolCalls.WithLabelValues(server, tool, outcome), m.toolSeconds.WithLabelValues(server, tool)
			mu.Lock()
			calls[key], seconds[tool] = c, o
			mu.Unlock()
		}
		c.Inc()
		o.Observe(took.Seconds())
	}
}

// Charged counts a charge asked of the payment provider and its amount.
func (m *Metrics) Charged(outcome string, amount int64, currency string) {
	m.charges.WithLabelValues(outcome).Inc()
	m.chargedAmount.WithLabelValues(outcome, currency).Add(float64(amount))
}

// SessionMoved counts n checkout sessions' change of status.
func (m *Metrics) SessionMoved(from, to string, n int64) {
	m.sessionMoves.WithLabelValues(from, to).Add(float64(n))
}

// RateLimited counts a request the rate limits refused.
func (m *Metrics) RateLimited(scope string) {
	m.refusals.WithLabelValues(scope).Inc()
}

// Statement counts a SQL statement run for operation.
func (m *Metrics) Statement(operation string) { m.operation(operation)[0].Inc() }

// Commit counts a transaction committed for operation.
func (m *Metrics) Commit(operation string) { m.operation(operation)[1].Inc() }

// operation is operation's statement and commit counters.
func (m *Metrics) operation(op string) *[2]prometheus.Counter {
	if c, ok := m.byOperation.Load(op); ok {
		return c.(*[2]prometheus.Counter)
	}
	c := &[2]prometheus.Counter{m.statements.WithLabelValues(op), m.commits.WithLabelValues(op)}
	actual, _ := m.byOperation.LoadOrStore(op, c)
	return actual.(*[2]prometheus.Counter)
}

// Timeouts of the metrics' listener: a scrape is one small request.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = time.Minute
)

// Serve answers /metrics (and every other path) on ln until ctx is done,
// to requests whose Host is one of hosts, localhost or an IP address (see
// checkHost).
func (m *Metrics) Serve(ctx context.Context, ln net.Listener, hosts []string) error {
	hs := m.httpServer(hosts)
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// httpServer is the net/http server Serve runs.
func (m *Metrics) httpServer(hosts []string) *http.Server {
	return &http.Server{
		Handler:           checkHost(hosts, m.Handler()),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
	}
}

// checkHost refuses requests whose Host is neither one of names, nor
// localhost, nor an IP address, as the shop's own listener does, so that a
// page on another site cannot read the metrics of a shop on the machine
// through DNS rebinding. An IP address names no site whose DNS a page's
// author controls; Prometheus scrapes by address more often than by name.
func checkHost(names []string, next http.Handler) http.Handler {
	allowed := map[string]bool{"localhost": true}
	for _, n := range names {
		allowed[strings.ToLower(n)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(strings.ToLower(host), "[]")
		if _, err := netip.ParseAddr(host); err != nil && !allowed[host] {
			http.Error(w, "unknown Host: scrape the metrics by IP address, localhost or the shop's public host name", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
