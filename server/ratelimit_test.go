package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/mcptest"
	"shop/server"
)

// burst posts n bodies to /mcp, body(i) with the headers hdr(i) (nil: none),
// with at most workers in flight, and returns the replies in order.
func (h *host) burst(t *testing.T, n, workers int, body func(i int) string, hdr func(i int) map[string]string) []reply {
	t.Helper()
	replies := make([]reply, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				var hd map[string]string
				if hdr != nil {
					hd = hdr(i)
				}
				replies[i], errs[i] = h.post("/mcp", body(i), hd)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	return replies
}

func count(replies []reply, status int) int {
	n := 0
	for _, r := range replies {
		if r.status == status {
			n++
		}
	}
	return n
}

// refusalText is the message a refused MCP call answers with.
var refusalText = regexp.MustCompile(`^too many requests (for this buyer|from this address); wait (\d+) seconds? and try again$`)

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpcErrorOf decodes r as a JSON-RPC error answer, or fails the test.
func rpcErrorOf(t *testing.T, r reply) rpcError {
	t.Helper()
	var msg rpcError
	if err := json.Unmarshal(r.body, &msg); err != nil || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("body %s (%s, %v): want a JSON-RPC error", r.body, r.header.Get("Content-Type"), err)
	}
	return msg
}

// checkRefusal checks a 429: Retry-After in whole seconds ≥ 1, and a
// JSON-RPC error with the request's id whose message says who is limited
// and how long to wait, the same seconds.
func checkRefusal(t *testing.T, r reply, id int, who string) {
	t.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("status %d %s; want 429", r.status, r.body)
	}
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Errorf("Retry-After %q: want whole seconds ≥ 1", r.header.Get("Retry-After"))
	}
	msg := rpcErrorOf(t, r)
	m := refusalText.FindStringSubmatch(msg.Error.Message)
	if msg.JSONRPC != "2.0" || string(msg.ID) != strconv.Itoa(id) || msg.Error.Code == 0 || m == nil || m[1] != who || m[2] != strconv.Itoa(secs) {
		t.Errorf("refusal %s: want a JSON-RPC error with id %d saying: too many requests %s; wait %d seconds and try again", r.body, id, who, secs)
	}
}

// TestRateLimitDefaultBuyers: with the default limits, 60 buyers of one
// host, each with its own user id, sending 5 calls each at once from one
// address (300 calls, ten times a person's burst) are never throttled; a
// tool sees each one's own id.
func TestRateLimitDefaultBuyers(t *testing.T) {
	h := newHost(t, server.Options{})
	start := time.Now()
	replies := h.burst(t, 300, 60, func(i int) string { return toolCall(i+1, fmt.Sprintf("buyer-%02d", i%60)) }, nil)
	elapsed := time.Since(start)
	if n := count(replies, http.StatusOK); n != 300 {
		t.Fatalf("%d of 300 calls served in %s (%d refused with 429); want all", n, elapsed, count(replies, 429))
	}
	for i, r := range replies {
		if want := fmt.Sprintf(`"Subject":"buyer-%02d","Agent":"","Address":"127.0.0.1"`, i%60); !strings.Contains(string(r.body), want) {
			t.Fatalf("call %d answered %s; want the buyer %s", i, r.body, want)
		}
	}
	if h.calls.Load() != 300 {
		t.Errorf("%d tool calls ran; want 300", h.calls.Load())
	}
	t.Logf("300 calls of 60 buyers from one address in %s", elapsed.Round(time.Millisecond))
}

// TestRateLimitDefaultStatelessHost: with the default limits, a host that
// opens a session for every call (initialize, the initialized notification,
// then tools/call; only the call carries its user's id) does so for 60
// buyers sending 5 calls each at once from one address, and none is
// throttled: the handshakes, with no user id, are not one buyer's.
func TestRateLimitDefaultStatelessHost(t *testing.T) {
	h := newHost(t, server.Options{})
	const initialize = `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`
	replies := h.burst(t, 900, 60, func(i int) string {
		switch i % 3 {
		case 0:
			return fmt.Sprintf(initialize, i+1)
		case 1:
			return `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		}
		return toolCall(i+1, fmt.Sprintf("buyer-%02d", i/3%60))
	}, nil)
	if n := count(replies, http.StatusOK) + count(replies, http.StatusAccepted); n != 900 {
		t.Fatalf("%d of 900 requests served (%d refused with 429); want all", n, count(replies, 429))
	}
	if h.calls.Load() != 300 {
		t.Errorf("%d tool calls ran; want 300", h.calls.Load())
	}
}

// TestRateLimitDefaultFlood: with the default limits, one person (a host's
// user id) sending 200 calls in four seconds, which nobody in a chat does,
// is refused most of them, with Retry-After and a JSON-RPC error the model
// can act on, logged once; a person's burst is served whole; other buyers
// of the same address are still served, and so is a client that names no
// buyer: the conformance suite sends 115 requests at once.
func TestRateLimitDefaultFlood(t *testing.T) {
	h := newHost(t, server.Options{})
	start := time.Now()
	replies := make([]reply, 200)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Go(func() {
			var err error
			if replies[i], err = h.post("/mcp", toolCall(i+1, "flooder"), nil); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
		})
		time.Sleep(4 * time.Second / 200)
	}
	wg.Wait()
	elapsed := time.Since(start)
	served, refused := count(replies, http.StatusOK), count(replies, http.StatusTooManyRequests)
	if served < server.DefaultPersonRateBurst || refused < 100 || served+refused != 200 {
		t.Fatalf("200 calls in %s: %d served, %d refused; want the burst of %d served, then most refused with 429", elapsed, served, refused, server.DefaultPersonRateBurst)
	}
	// A person's burst, refilled at their rate during the four seconds.
	if most := server.DefaultPersonRateBurst + int(elapsed.Seconds()*server.DefaultPersonRateLimit) + 1; served > most {
		t.Errorf("%d served in %s; want at most %d", served, elapsed, most)
	}
	for i, r := range replies {
		if r.status == http.StatusTooManyRequests {
			checkRefusal(t, r, i+1, "for this buyer")
			break
		}
	}
	t.Logf("one person's 200 calls in %s: %d served", elapsed.Round(time.Millisecond), served)
	if n := strings.Count(h.logs.String(), `msg="rate limited" limit="for this buyer" key=subject:flooder`); n != 1 {
		t.Errorf("the flood was logged %d times; want once\n%s", n, h.logs)
	}
	if b, r, err := h.whoami("someone-else", nil); err != nil || b.Subject != "someone-else" {
		t.Errorf("another buyer of the same address: %+v, %d %s, %v", b, r.status, r.body, err)
	}
	anonymous := h.burst(t, 120, 20, func(i int) string { return toolCall(i+1, nil) }, nil)
	if n := count(anonymous, http.StatusOK); n != 120 {
		t.Errorf("a client with no user id sending 120 calls at once: %d served; want all", n)
	}
}

// TestRateLimitBackstop: one address making up a new user id for every
// call is stopped by the per-address limit.
func TestRateLimitBackstop(t *testing.T) {
	var told sync.Map // scope → *atomic.Int64: what Options.RateLimited heard
	h := newHost(t, server.Options{AddressRateLimit: 1, AddressRateBurst: 50, RateLimited: func(scope string) {
		n, _ := told.LoadOrStore(scope, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}})
	start := time.Now()
	replies := h.burst(t, 100, 1, func(i int) string { return toolCall(i+1, fmt.Sprintf("made-up-%d", i)) }, nil)
	// The address's 50, and 1 a second after.
	served, most := count(replies, http.StatusOK), 50+int(time.Since(start).Seconds())+1
	if served < 50 || served > most {
		t.Fatalf("%d of 100 made-up buyers served from one address; want the address's burst of 50 (and its refill: at most %d)", served, most)
	}
	checkRefusal(t, replies[99], 100, "from this address")
	n, _ := told.Load("address")
	if got, _ := n.(*atomic.Int64); got == nil || got.Load() != int64(100-served) {
		t.Errorf("RateLimited heard %v address refusals; want the %d refused", got, 100-served)
	}
	if h.calls.Load() != int64(served) {
		t.Errorf("%d tool calls ran; want the %d served", h.calls.Load(), served)
	}
}

// TestRateLimitOff: a negative RateLimit turns off both limits.
func TestRateLimitOff(t *testing.T) {
	h := newHost(t, server.Options{RateLimit: -1, AddressRateLimit: 1, AddressRateBurst: 1})
	replies := h.burst(t, 50, 5, func(i int) string { return toolCall(i+1, "one") }, nil)
	if n := count(replies, http.StatusOK); n != 50 {
		t.Errorf("%d of 50 served with the limits off", n)
	}
}

// TestRateLimitSeenByHost: a go-sdk host's session (server/discover, then
// calls naming no user) with a burst of 1: the handshake counts against no
// buyer, so the first call is served and the second refused. (go-sdk
// v1.8.0 reports a 429 as "Too Many Requests" without reading the body;
// checkRefusal checks the body that hosts which read it get.)
func TestRateLimitSeenByHost(t *testing.T) {
	h := newHost(t, server.Options{RateLimit: 0.1, RateBurst: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := mcptest.NewClient(t, "host", nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	params := &mcp.CallToolParams{Name: "whoami"} // no user id: the address's bucket, as the handshake's
	if _, err := s.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	if _, err = s.CallTool(ctx, params); err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Errorf("second call: %v; want it refused", err)
	}
}

// TestRateLimitSessionRequests: the GET of a server-sent stream and the
// DELETE that ends a session, which older hosts send around their calls
// with no user id, count against no buyer either.
func TestRateLimitSessionRequests(t *testing.T) {
	h := newHost(t, server.Options{RateLimit: 0.1, RateBurst: 1})
	for _, method := range []string{"GET", "DELETE", "GET"} {
		req, _ := http.NewRequest(method, h.url+"/mcp", nil)
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			t.Errorf("%s /mcp: 429", method)
		}
	}
	if _, r, err := h.whoami(nil, nil); err != nil {
		t.Errorf("the call after them: %d %s %v; want it served", r.status, r.body, err)
	}
}

// TestRateLimitFeed: the product feed has a limit of its own per client
// address, far below the others: its burst is served, the next GET is
// refused with Retry-After and counted as the feed's, another address is
// still served, and the rest of the shop is not touched.
func TestRateLimitFeed(t *testing.T) {
	var served atomic.Int64
	var told sync.Map
	srv, err := server.New(server.Options{
		Feed: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			served.Add(1)
			_, _ = w.Write([]byte("{}\n"))
		}),
		Static:         fstest.MapFS{"a.txt": {Data: []byte("a")}},
		ClientIPHeader: "X-Forwarded-For",
		RateLimited:    func(scope string) { told.Store(scope, true) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	get := func(path, client string) *http.Response {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for i := range server.DefaultFeedRateBurst {
		if resp := get("/feeds/products.jsonl", "192.0.2.1"); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %d of the feed: %s; want the burst of %d served", i+1, resp.Status, server.DefaultFeedRateBurst)
		}
	}
	resp := get("/feeds/products.jsonl", "192.0.2.1")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "10" {
		t.Errorf("the GET after the burst: %s, Retry-After %q; want 429 and 10 seconds", resp.Status, resp.Header.Get("Retry-After"))
	}
	if _, ok := told.Load("feed"); !ok {
		t.Error("the refusal was not counted as the feed's")
	}
	if resp := get("/feeds/products.jsonl", "192.0.2.2"); resp.StatusCode != http.StatusOK {
		t.Errorf("another address: %s", resp.Status)
	}
	if resp := get("/static/a.txt", "192.0.2.1"); resp.StatusCode != http.StatusOK {
		t.Errorf("a static file from the limited address: %s", resp.Status)
	}
	if n := served.Load(); n != server.DefaultFeedRateBurst+1 {
		t.Errorf("the feed served %d GETs; want %d", n, server.DefaultFeedRateBurst+1)
	}
}
