package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
	"shop/mcptest"
	"shop/server"
)

// syncBuffer lets the server's goroutines log into one buffer.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// host is a test host: it posts JSON-RPC to a shop serving whoami, a tool
// that answers the shop.Buyer its context carries and counts its calls, on
// /mcp and, to ownerToken, on /admin/mcp.
type host struct {
	url    string
	calls  *atomic.Int64
	logs   *syncBuffer
	client *http.Client
}

func newHost(t *testing.T, opts server.Options) *host {
	t.Helper()
	h := &host{calls: &atomic.Int64{}, logs: &syncBuffer{}, client: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: 100},
		Timeout:   30 * time.Second,
	}}
	whoami := shop.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`), ReadOnly: true,
		Handle: func(ctx context.Context, _ json.RawMessage) (*shop.Result, error) {
			h.calls.Add(1)
			return &shop.Result{Structured: shop.BuyerFrom(ctx), Text: "you"}, nil
		}}
	logger := slog.New(slog.NewTextHandler(h.logs, nil))
	mcpOpts := server.MCPOptions{Name: "shop", Version: "test", Tools: []shop.Tool{whoami}, Logger: logger}
	tokens, err := server.ParseAdminTokens("owner:" + ownerToken)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = logger
	opts.MCP = server.NewMCP(mcpOpts)
	opts.AdminMCP, opts.AdminTokens = server.NewMCP(mcpOpts), tokens
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	h.url = ts.URL
	return h
}

// reply is what the shop answered to one POST.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// post sends body to path with the headers a streamable HTTP client sends
// (Mcp-Protocol-Version 2025-06-18 unless hdr sets it, "" to omit it).
func (h *host) post(path, body string, hdr map[string]string) (reply, error) {
	req, err := http.NewRequest("POST", h.url+path, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}, err
}

// toolCall is a tools/call of whoami with id, its _meta the host user id
// subject (none when nil).
func toolCall(id int, subject any) string {
	params := map[string]any{"name": "whoami", "arguments": map[string]any{}}
	if subject != nil {
		params["_meta"] = map[string]any{"openai/subject": subject, "openai/locale": "en-US"}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
	return string(b)
}

// whoami calls the tool as subject (nil: none) with the extra headers and
// returns the buyer it saw; an answer that is not a tool result is an error.
func (h *host) whoami(subject any, hdr map[string]string) (shop.Buyer, reply, error) {
	r, err := h.post("/mcp", toolCall(1, subject), hdr)
	if err != nil || r.status != http.StatusOK {
		return shop.Buyer{}, r, fmt.Errorf("HTTP %d %s: %v", r.status, r.body, err)
	}
	var res struct {
		Result struct {
			StructuredContent shop.Buyer `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &res); err != nil {
		return shop.Buyer{}, r, fmt.Errorf("%s: %w", r.body, err)
	}
	return res.Result.StructuredContent, r, nil
}

// TestBuyerOverHTTP: a tool's ctx carries the buyer, its client address
// (put there by the HTTP middleware: the stateless MCP handler passes the
// request's context to the tool) and the host user id of the call's _meta,
// when it is one the shop accepts.
func TestBuyerOverHTTP(t *testing.T) {
	h := newHost(t, server.Options{})
	for _, tc := range []struct {
		name    string
		subject any
		want    shop.Buyer
	}{
		{"Subject", "v1/user-ABC_123", shop.Buyer{Subject: "v1/user-ABC_123", Address: "127.0.0.1"}},
		{"NoMeta", nil, shop.Buyer{Address: "127.0.0.1"}},
		{"Longest", strings.Repeat("s", 256), shop.Buyer{Subject: strings.Repeat("s", 256), Address: "127.0.0.1"}},
		{"ErrTooLong", strings.Repeat("s", 257), shop.Buyer{Address: "127.0.0.1"}},
		{"ErrNotAString", 42, shop.Buyer{Address: "127.0.0.1"}},
		{"ErrEmpty", "", shop.Buyer{Address: "127.0.0.1"}},
		{"ErrControl", "user\n2", shop.Buyer{Address: "127.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := h.whoami(tc.subject, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("buyer (-want +got):\n%s", diff)
			}
		})
	}
	// The go-sdk client, as a host sends it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := mcptest.NewClient(t, "host", nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Meta: mcp.Meta{"openai/subject": "sdk-user"}})
	if err != nil {
		t.Fatal(err)
	}
	var got shop.Buyer
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, shop.Buyer{Subject: "sdk-user", Address: "127.0.0.1"}) {
		t.Errorf("buyer %+v (%v); want sdk-user at 127.0.0.1", got, err)
	}
}

// TestBuyerOverStdio: with no HTTP in front (shop stdio), the tool handler
// reads the host user id from the call's own _meta.
func TestBuyerOverStdio(t *testing.T) {
	var seen shop.Buyer
	srv := server.NewMCP(server.MCPOptions{Name: "shop", Version: "test", Tools: []shop.Tool{{
		Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`),
		Handle: func(ctx context.Context, _ json.RawMessage) (*shop.Result, error) {
			seen = shop.BuyerFrom(ctx)
			return &shop.Result{Structured: map[string]any{}, Text: "you"}, nil
		},
	}}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs := server.ConnectMCP(t, srv)
	for _, tc := range []struct {
		meta mcp.Meta
		want shop.Buyer
	}{
		{mcp.Meta{"openai/subject": "local-user"}, shop.Buyer{Subject: "local-user"}},
		{nil, shop.Buyer{}},
	} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Meta: tc.meta}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(seen, tc.want) {
			t.Errorf("meta %v: buyer %+v; want %+v", tc.meta, seen, tc.want)
		}
	}
}
