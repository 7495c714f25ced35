package main

import (
	"bufio"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/notify/smtptest"
)

// scrape reads the shop's /metrics into its series ("name{labels}") and values.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s\n%s", url, resp.Status, resp.Header.Get("Content-Type"), b)
	}
	out := map[string]float64{}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		at := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[at+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		out[line[:at]] = v
	}
	return out
}

var metricsLine = regexp.MustCompile(`metrics=(http://\S+)`)

// TestMetrics scrapes the operator's metrics after a purchase, a declined
// card and a refund: the counters moved by exactly those.
func TestMetrics(t *testing.T) {
	smtp := smtptest.Start(t)
	shop := startShop(t, dbtest.DSN(t, database.SQLite), map[string]string{"SHOP_ADMIN_TOKENS": "owner:" + ownerToken, "SHOP_SMTP_URL": smtp.URL})
	found := metricsLine.FindStringSubmatch(shop.logs.String())
	if found == nil || !strings.HasPrefix(found[1], "http://127.0.0.1:") || strings.HasSuffix(shop.url, strings.TrimSuffix(strings.TrimPrefix(found[1], "http://"), "/metrics")) {
		t.Fatalf("no metrics URL of its own on the loopback in the start line:\n%s", shop.logs.String())
	}
	url := found[1]
	if resp, err := http.Get(shop.url + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("the public port answers /metrics")
		}
	}
	rebound, _ := http.NewRequest("GET", url, nil)
	rebound.Host = "evil.example" // a page's name, rebound to the machine
	if resp, err := http.DefaultClient.Do(rebound); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("/metrics to Host evil.example: %v %v; want 403", resp, err)
	} else {
		resp.Body.Close()
	}
	before := scrape(t, url)

	buyer := connect(t, shop.url)
	if res := call(t, buyer, "get_checkout_session", map[string]any{"checkout_session_id": "cs_nosuchsession"}); !res.IsError {
		t.Fatalf("an unknown session: %s", text(res))
	}
	declined := readySession(t, buyer)
	if got := session(t, complete(t, buyer, declined.ID, "pm_card_visa_chargeDeclined")); got.Status != checkout.Ready {
		t.Fatalf("declined: %s", got.Status)
	}
	cs := readySession(t, buyer)
	done := session(t, complete(t, buyer, cs.ID, "pm_card_visa"))
	if done.Status != checkout.Completed {
		t.Fatalf("%s %+v", done.Status, done.Messages)
	}
	total := float64(done.Order.Receipt.Totals[len(done.Order.Receipt.Totals)-1].Amount)
	owner := connectAdmin(t, shop.url, ownerToken)
	refund := map[string]any{"order_id": done.Order.ID, "amount": 500, "reason": "a chipped mug"}
	refund["confirm"] = structured[struct{ Confirm string }](t, call(t, owner, "refund_order", refund)).Confirm
	if res := call(t, owner, "refund_order", refund); res.IsError {
		t.Fatalf("refund: %s", text(res))
	}
	smtp.Wait(t, 2, quiet*5) // the confirmation and the refund's notice

	// The worker marks an email sent once the server has taken it: a
	// moment after the server has it.
	pending := `shop_emails{status="pending"}`
	after := scrape(t, url)
	for deadline := time.Now().Add(5 * time.Second); after[pending] != before[pending] && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		after = scrape(t, url)
	}
	for series, want := range map[string]float64{
		`shop_charges_total{outcome="succeeded"}`:                                            1,
		`shop_charges_total{outcome="declined"}`:                                             1,
		`shop_charge_amount_minor_total{currency="usd",outcome="succeeded"}`:                 total,
		`shop_orders_total{currency="usd"}`:                                                  1,
		`shop_order_value_minor_total{currency="usd"}`:                                       total,
		`shop_refunds_total{currency="usd"}`:                                                 1,
		`shop_refund_value_minor_total{currency="usd"}`:                                      500,
		`shop_checkout_sessions{status="completed"}`:                                         1,
		`shop_checkout_sessions{status="ready_for_payment"}`:                                 1, // the declined one
		`shop_tool_calls_total{outcome="ok",server="shop",tool="complete_checkout"}`:         2,
		`shop_tool_call_duration_seconds_count{server="shop",tool="complete_checkout"}`:      2,
		`shop_tool_calls_total{outcome="ok",server="shop",tool="create_checkout_session"}`:   2,
		`shop_tool_calls_total{outcome="ok",server="shop-admin",tool="refund_order"}`:        2,
		`shop_checkout_session_transitions_total{from="new",to="ready_for_payment"}`:         2,
		`shop_checkout_session_transitions_total{from="ready_for_payment",to="in_progress"}`: 2,
		`shop_checkout_session_transitions_total{from="in_progress",to="ready_for_payment"}`: 1,
		`shop_checkout_session_transitions_total{from="in_progress",to="completed"}`:         1,
		`shop_tool_calls_total{outcome="refused",server="shop",tool="get_checkout_session"}`: 1,
		`shop_emails{status="pending"}`:                                                      0,
		`shop_emails{status="failed"}`:                                                       0,
		`shop_reconciler_backlog{kind="attempt"}`:                                            0,
		`shop_reconciler_oldest_seconds`:                                                     0,
	} {
		if got := after[series] - before[series]; got != want {
			t.Errorf("%s moved by %v, want %v (before %v, after %v)", series, got, want, before[series], after[series])
		}
	}
	for _, series := range []string{`shop_stock_holds_units`, `shop_order_webhooks{status="pending"}`, `go_goroutines`, `process_resident_memory_bytes`, `shop_tool_call_duration_seconds_bucket{server="shop",tool="complete_checkout",le="+Inf"}`} {
		if _, ok := after[series]; !ok {
			t.Errorf("no %s", series)
		}
	}
	if n := after[`shop_stock_holds_units`]; n != 3 {
		t.Errorf("shop_stock_holds_units %v, want the declined session's 3 units", n)
	}
}
