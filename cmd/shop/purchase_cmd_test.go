package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shop"
	"shop/database"
	"shop/database/dbtest"
	"shop/payments"
	"shop/purchase"
)

// runCmd runs the shop's command line in-process with env and returns what
// it printed and its error.
func runCmd(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errs bytes.Buffer
	m := &Main{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs,
		Getenv: func(k string) string { return env[k] },
		Logger: slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err := m.Run(ctx, args)
	if errs.Len() > 0 {
		t.Logf("stderr:\n%s", errs.String())
	}
	return out.String(), err
}

// checkLines checks the report of a run that held: a ✓ line per step, the
// wanted steps among them, and a PASS summary.
func checkLines(t *testing.T, out string, want ...string) {
	t.Helper()
	body, summary, ok := strings.Cut(out, "\n\n")
	if !ok || !strings.HasPrefix(summary, "PASS: all ") || !strings.Contains(summary, "order #") {
		t.Fatalf("no PASS summary:\n%s", out)
	}
	steps := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "✓ ") || !strings.Contains(line, " ms  ") {
			t.Errorf("line %q is not a held step with its timing", line)
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "✓ "), "  ")
		steps[strings.TrimSpace(name)] = true
	}
	for _, w := range want {
		if !steps[w] {
			t.Errorf("no step %q in:\n%s", w, out)
		}
	}
}

// TestPurchaseCommand runs `shop purchase` against a shop started
// in-process, as test.sh runs it against `shop serve`.
func TestPurchaseCommand(t *testing.T) {
	running := startShop(t, dbtest.DSN(t, database.SQLite), nil)
	endpoint := running.url + "/mcp"
	every := []string{"connect", "tools/list", "search_products", "get_product", "create_checkout_session", "payment mode",
		"update: address", "update: shipping", "render_checkout", "template", "complete_checkout",
		"complete_checkout: again", "get_order", "permalink_url", "figures"}

	t.Run("OK", func(t *testing.T) {
		out, err := runCmd(t, nil, "purchase", "--url", endpoint)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		checkLines(t, out, every...)
	})

	t.Run("DeclineThreeItemsPromo", func(t *testing.T) {
		out, err := runCmd(t, nil, "purchase", "--url", endpoint, "--decline", "--items", "3", "--promo", "welcome10")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		checkLines(t, out, append(every, "complete_checkout: decline", "update: promotion")...)
		if n := strings.Count(out, "✓ get_product"); n != 3 {
			t.Errorf("%d get_product steps for --items 3", n)
		}
		if !strings.Contains(out, "payment_declined") && !strings.Contains(out, "declined") {
			t.Errorf("the decline step does not show the shop's message:\n%s", out)
		}
	})

	t.Run("PaymentLinkDecline", func(t *testing.T) {
		out, err := runCmd(t, nil, "purchase", "--url", endpoint, "--link", "--decline")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		onPage := []string{"connect", "tools/list", "create_checkout_session", "update: shipping", "render_checkout",
			"create_payment_link", "payment page: decline", "payment page: pay", "payment page: again", "get_order", "permalink_url", "figures"}
		checkLines(t, out, onPage...)
		if strings.Contains(out, "complete_checkout") {
			t.Errorf("a --link run called complete_checkout:\n%s", out)
		}
	})

	// New York taxes shipping (the demo policy): the run's figures still agree,
	// shipping's tax counted once.
	t.Run("TaxedShipping", func(t *testing.T) {
		ny := `{"name":"Purchase Check","line_one":"350 Fifth Ave","city":"New York","state":"NY","country":"US","postal_code":"10118"}`
		out, err := runCmd(t, nil, "purchase", "--url", endpoint, "--address", ny, "--items", "2")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		checkLines(t, out, every...)
		if !strings.Contains(out, "New York, NY") {
			t.Errorf("the address step does not name New York:\n%s", out)
		}
	})

	t.Run("JSON", func(t *testing.T) {
		out, err := runCmd(t, nil, "purchase", "--url", endpoint, "--json")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var rep purchase.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("stdout is not one JSON report: %v\n%s", err, out)
		}
		if !rep.OK || rep.Failed != 0 || rep.Passed != len(rep.Steps) || rep.Order == nil || rep.Order.Number <= 0 || rep.Order.PaymentMode != "test" {
			t.Errorf("report %+v", rep)
		}
	})

	t.Run("SharedPaymentToken", func(t *testing.T) {
		stripe := fakeStripe(t)
		var out bytes.Buffer
		// The options as the command line makes them from the environment,
		// with Stripe's address pointed at the fake.
		key := "sk_test_" + strings.Repeat("x", 24)
		m := &Main{Stderr: io.Discard, Getenv: func(k string) string { return map[string]string{"STRIPE_SECRET_KEY": key}[k] }}
		o, err := purchase.ParseArgs([]string{"--url", endpoint}, m.purchaseEnv())
		if err != nil {
			t.Fatal(err)
		}
		o.StripeAPI = stripe.url
		rep := purchase.Run(context.Background(), o, &out)
		if !rep.OK {
			t.Fatalf("with a test key:\n%s", out.String())
		}
		// The sandbox takes any spt_…; what Stripe was asked is the point.
		form := stripe.only(t)
		want := map[string]string{"payment_method": "pm_card_visa", "usage_limits[currency]": "usd",
			"usage_limits[max_amount]": strconv.FormatInt(rep.Order.Total, 10)}
		for k, v := range want {
			if form.Get(k) != v {
				t.Errorf("%s = %q, want %q (form %v)", k, form.Get(k), v, form)
			}
		}
		if exp, _ := strconv.ParseInt(form.Get("usage_limits[expires_at]"), 10, 64); exp <= time.Now().Unix() {
			t.Errorf("usage_limits[expires_at] %q is not in the future", form.Get("usage_limits[expires_at]"))
		}
		if !strings.Contains(out.String(), "spt_test_granted") {
			t.Errorf("the pay step does not name the token:\n%s", out.String())
		}
	})

	t.Run("ErrNoShop", func(t *testing.T) {
		out, err := runCmd(t, nil, "purchase", "--url", "http://127.0.0.1:1/mcp", "--timeout", "5s")
		if !errors.Is(err, purchase.ErrFailed) || !strings.HasPrefix(out, "✗ connect") || !strings.Contains(out, "FAIL: 1 of 1") {
			t.Errorf("err %v, out:\n%s", err, out)
		}
	})

	// A shop that accepts the connection and never answers: the run ends at
	// --timeout, saying so, instead of hanging.
	t.Run("ErrTimeout", func(t *testing.T) {
		release := make(chan struct{})
		stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(func() { close(release); stuck.Close() })
		start := time.Now()
		out, err := runCmd(t, nil, "purchase", "--url", stuck.URL+"/mcp", "--timeout", "1s")
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("the run took %s with --timeout 1s", took)
		}
		if !errors.Is(err, purchase.ErrFailed) || !strings.Contains(out, "✗ connect") || !strings.Contains(out, "--timeout 1s is up") {
			t.Errorf("err %v, out:\n%s", err, out)
		}
	})

	t.Run("ErrUnknownPromo", func(t *testing.T) {
		out, err := runCmd(t, nil, "purchase", "--url", endpoint, "--promo", "FREEMONEY")
		if !errors.Is(err, purchase.ErrFailed) || !strings.Contains(out, "✗ update: promotion") || !strings.Contains(out, "✓ cancel_checkout_session") {
			t.Errorf("err %v, out:\n%s", err, out)
		}
	})

	t.Run("ErrUsage", func(t *testing.T) {
		for _, args := range [][]string{{"--items", "0"}, {"--items", "21"}, {"--url", "127.0.0.1:8000"}, {"--timeout", "-1s"}, {"extra"},
			{"--address", "New York"}, {"--address", `{"city":"Albany"}`}, {"--address", `{"name":"A","line_one":"1 Main St","city":"Albany","country":"US","postal_code":"12207","planet":"Earth"}`}} {
			if _, err := runCmd(t, nil, append([]string{"purchase"}, args...)...); !errors.Is(err, errUsage) {
				t.Errorf("%v: %v, want the usage", args, err)
			}
		}
	})
}

// TestPurchaseLiveShop: against a live-mode shop the run refuses before any
// payment unless --live is given, and with --live it only checks that a test
// card is refused. No request leaves the machine: the shop refuses test
// cards in live mode before calling Stripe.
func TestPurchaseLiveShop(t *testing.T) {
	policy, err := fs.ReadFile(shop.Demo, "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	live := strings.Replace(string(policy), "\npayment_mode: test\n", "\npayment_mode: live\n", 1)
	if live == string(policy) {
		t.Fatal("the demo policy has no `payment_mode: test` line to change")
	}
	file := filepath.Join(t.TempDir(), "live.yaml")
	if err := os.WriteFile(file, []byte(live), 0o600); err != nil {
		t.Fatal(err)
	}
	// Not a real key: only its prefix selects live mode.
	key := "sk_" + "live_" + strings.Repeat("0", 24)
	endpoint := startShopArgs(t, map[string]string{"STRIPE_SECRET_KEY": key},
		"--db", dbtest.DSN(t, database.SQLite), "--config", file) + "/mcp"

	out, err := runCmd(t, nil, "purchase", "--url", endpoint)
	if !errors.Is(err, purchase.ErrFailed) || !strings.Contains(out, "✗ payment mode") || !strings.Contains(out, "--live") ||
		!strings.Contains(out, "✓ cancel_checkout_session") || strings.Contains(out, "complete_checkout") {
		t.Errorf("without --live: err %v, out:\n%s", err, out)
	}

	out, err = runCmd(t, nil, "purchase", "--url", endpoint, "--live")
	if err != nil || !strings.Contains(out, "✓ complete_checkout (live)") || !strings.Contains(out, "refused the test card") ||
		!strings.Contains(out, "✓ cancel_checkout_session") {
		t.Errorf("with --live: err %v, out:\n%s", err, out)
	}
}

// startShopArgs starts `shop serve` in-process on a free port with the given
// flags and environment and returns its base URL.
func startShopArgs(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan error, 1)
	logs := &lockedBuffer{}
	m := &Main{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: logs,
		Getenv: func(k string) string { return env[k] }, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Started: func(addr string) { addrc <- addr },
	}
	go func() { done <- m.Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shop serve: %v", err)
		}
	})
	select {
	case addr := <-addrc:
		return "http://" + addr
	case err := <-done:
		done <- err
		t.Fatalf("shop serve stopped: %v\n%s", err, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatal("shop serve did not start in 30s")
	}
	return ""
}

// stripeFake answers Stripe's test helper for shared payment tokens and
// keeps the forms it was sent.
type stripeFake struct {
	url   string
	mu    sync.Mutex
	forms []url.Values
}

func fakeStripe(t *testing.T) *stripeFake {
	f := &stripeFake{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, _, _ := r.BasicAuth()
		if r.Method != http.MethodPost || r.URL.Path != "/v1/test_helpers/shared_payment/granted_tokens" ||
			!strings.HasPrefix(key, "sk_test_") || r.Header.Get("Stripe-Version") != payments.DefaultSPTVersion || r.ParseForm() != nil {
			t.Errorf("unexpected Stripe request %s %s (version %q)", r.Method, r.URL, r.Header.Get("Stripe-Version"))
			http.Error(w, `{"error": {"message": "unexpected"}}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.forms = append(f.forms, r.PostForm)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id": "spt_test_granted", "object": "shared_payment.granted_token", "livemode": false}`)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// only is the one form the fake was sent.
func (f *stripeFake) only(t *testing.T) url.Values {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.forms) != 1 {
		t.Fatalf("Stripe was sent %d requests, want 1", len(f.forms))
	}
	return f.forms[0]
}

// TestPurchaseAccount runs `shop purchase --account`: it links the buyer's
// account through the shop's OAuth server and login pages, reading the
// sign-in code from the email the shop sends to its --smtp-capture
// listener, and buys with the token; list_my_orders shows the order.
func TestPurchaseAccount(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	capture := ln.Addr().String()
	ln.Close()
	running := startShop(t, dbtest.DSN(t, database.SQLite), map[string]string{"SHOP_SMTP_URL": "smtp://" + capture + "?tls=none"})
	out, err := runCmd(t, nil, "purchase", "--url", running.url+"/mcp", "--account", "--smtp-capture", capture)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkLines(t, out, "smtp capture", "account: discover", "account: register", "account: sign in", "account: token",
		"create_checkout_session", "complete_checkout", "get_order", "list_my_orders")

	// Each flag needs the other.
	for _, args := range [][]string{{"--account"}, {"--smtp-capture", capture}} {
		if _, err := runCmd(t, nil, append([]string{"purchase", "--url", running.url + "/mcp"}, args...)...); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want the usage", args, err)
		}
	}
}
