package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
	"shop/mcptest"
	"shop/server"
)

// tools are stand-ins at the seam the server adapts: what each answers is
// what the test checks the server does with it.
func tools() []shop.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	out := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	ts := []shop.Tool{
		{Name: "echo", InputSchema: schema, ReadOnly: true, Handle: func(ctx context.Context, args json.RawMessage) (*shop.Result, error) {
			var in struct{ N int }
			if err := shop.DecodeArgs(args, &in); err != nil {
				return nil, err
			}
			return &shop.Result{Structured: map[string]int{"n": in.N}, Text: "echoed"}, nil
		}},
		{Name: "refuse", InputSchema: schema, Handle: func(context.Context, json.RawMessage) (*shop.Result, error) {
			return nil, shop.Errorf(shop.Invalid, "$.n", "send a smaller n")
		}},
		{Name: "fail", InputSchema: schema, Handle: func(context.Context, json.RawMessage) (*shop.Result, error) {
			return nil, errors.New("pq: relation \"secret_table\" does not exist")
		}},
		{Name: "panic", InputSchema: schema, Handle: func(context.Context, json.RawMessage) (*shop.Result, error) {
			panic("boom")
		}},
	}
	for i := range ts {
		ts[i].OutputSchema = out
	}
	return ts
}

func newServer(t *testing.T, opts server.Options) (*httptest.Server, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.Logger = logger
	opts.MCP = server.NewMCP(server.MCPOptions{Name: "shop", Version: "test", Tools: tools(), Logger: logger})
	opts.Static = fstest.MapFS{"products/mug.svg": {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)}}
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, logs
}

func TestToolErrors(t *testing.T) {
	ts, logs := newServer(t, server.Options{})
	client := mcptest.NewClient(t, "test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Each call's log line: a call answered at debug, a refusal at info,
	// an internal error at error, so that a shop logging at info (the
	// default) writes a line for what needs a look and none for each sale.
	cases := []struct {
		tool    string
		isError bool
		text    string
		line    string
	}{
		{"echo", false, "echoed", `level=DEBUG msg="tool call" tool=echo`},
		{"refuse", true, "$.n: send a smaller n", `level=INFO msg="tool call refused" tool=refuse`},
		{"fail", true, "internal error", `level=ERROR msg="tool call failed" tool=fail`},
		{"panic", true, "internal error", `level=ERROR msg="tool call failed" tool=panic`},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"n": 1}})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Content[0].(*mcp.TextContent).Text
			if res.IsError != tc.isError || !strings.Contains(got, tc.text) {
				t.Errorf("isError %t, text %q; want %t, %q", res.IsError, got, tc.isError, tc.text)
			}
			if strings.Contains(got, "secret_table") {
				t.Errorf("the database's error reached the caller: %q", got)
			}
			if !strings.Contains(logs.String(), tc.line) {
				t.Errorf("no line %q in the log:\n%s", tc.line, logs)
			}
		})
	}
	if !strings.Contains(logs.String(), "secret_table") {
		t.Error("the internal error was not logged")
	}
}

func TestHardening(t *testing.T) {
	ts, _ := newServer(t, server.Options{
		PublicURL: "https://shop.example.com",
		Ready:     func(context.Context) error { return errors.New("migrations pending") },
		RateLimit: 1000, RateBurst: 1000,
	})
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	cases := []struct {
		name    string
		method  string
		path    string
		body    string
		headers map[string]string
		status  int
	}{
		{"OK", "POST", "/mcp", initialize, nil, 200},
		{"PublicHost", "POST", "/mcp", initialize, map[string]string{"Host": "shop.example.com"}, 200},
		{"ErrForeignHost", "POST", "/mcp", initialize, map[string]string{"Host": "evil.example"}, 403},
		{"ErrCrossOrigin", "POST", "/mcp", initialize, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"TrustedOrigin", "POST", "/mcp", initialize, map[string]string{"Origin": "https://shop.example.com", "Sec-Fetch-Site": "cross-site"}, 200},
		{"ErrBodyTooLarge", "POST", "/mcp", `{"x":"` + strings.Repeat("a", server.MaxBodyBytes) + `"}`, nil, 413},
		{"Healthz", "GET", "/healthz", "", nil, 200},
		{"ErrReadyzNotReady", "GET", "/readyz", "", nil, 503},
		{"Static", "GET", "/static/products/mug.svg", "", nil, 200},
		{"ErrStaticMissing", "GET", "/static/products/none.svg", "", nil, 404},
		{"ErrStaticListing", "GET", "/static/products/", "", nil, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.headers {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("%s %s: %d %s; want %d", tc.method, tc.path, resp.StatusCode, body, tc.status)
			}
			if tc.name == "ErrReadyzNotReady" && !strings.Contains(string(body), "migrations pending") {
				t.Errorf("readyz body %q does not say why", body)
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	ts, _ := newServer(t, server.Options{RateLimit: 1, RateBurst: 3})
	var codes []int
	for range 5 {
		resp, err := http.Get(ts.URL + "/static/products/mug.svg")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if codes[0] != 200 || codes[2] != 200 || codes[4] != 429 {
		t.Errorf("status codes %v: want the burst of 3 served, then 429", codes)
	}
	// Health checks are never limited.
	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz under rate limit: %d", resp.StatusCode)
	}
}

// TestRateLimitBehindProxy: behind a proxy each client has its own bucket,
// named by the address the proxy appends to the configured header; a
// negative limit turns limiting off.
func TestRateLimitBehindProxy(t *testing.T) {
	get := func(url, client string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", url+"/static/products/mug.svg", nil)
		if client != "" {
			req.Header.Set("X-Forwarded-For", "10.0.0.1, "+client)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	proxied, _ := newServer(t, server.Options{RateLimit: 1, RateBurst: 2, ClientIPHeader: "X-Forwarded-For"})
	for _, client := range []string{"192.0.2.1", "192.0.2.2"} {
		if a, b, c := get(proxied.URL, client), get(proxied.URL, client), get(proxied.URL, client); a != 200 || b != 200 || c != 429 {
			t.Errorf("client %s: %d %d %d; want its own burst of 2, then 429", client, a, b, c)
		}
	}
	open, _ := newServer(t, server.Options{RateLimit: -1})
	for i := range 100 {
		if code := get(open.URL, ""); code != 200 {
			t.Fatalf("request %d with no limit: %d", i, code)
		}
	}
}
