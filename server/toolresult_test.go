package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
)

// TestToolResultBytes: a tool's answer through flatResults is the JSON
// go-sdk writes for the *mcp.CallToolResult itself, byte for byte once <, >
// and & are escaped as go-sdk's json.Marshal escapes them inside the result
// (the JSON-RPC envelope around it leaves them as they are): a success, a
// refusal, an internal error, in the protocol versions before 2026-07-28
// and in 2026-07-28 (whose results carry resultType and the server's
// _meta).
func TestToolResultBytes(t *testing.T) {
	tools := []shop.Tool{
		{Name: "page", InputSchema: json.RawMessage(`{"type":"object"}`), ReadOnly: true,
			Handle: func(context.Context, json.RawMessage) (*shop.Result, error) {
				type item struct {
					Name  string   `json:"name"`
					Price int64    `json:"price"`
					Tags  []string `json:"tags,omitempty"`
					Note  *string  `json:"note,omitempty"`
				}
				return &shop.Result{Text: "2 items: <Salt & Pepper> — 3 × €4", Structured: struct {
					Items []item `json:"items"`
					Total int64  `json:"total"`
				}{Items: []item{{Name: "Salt & Pepper <mill>", Price: 1299, Tags: []string{"kitchen", "line\u2028sep"}}, {Name: "Tea — “Earl Grey”", Price: 450}}, Total: 1749}}, nil
			}},
		{Name: "refuse", InputSchema: json.RawMessage(`{"type":"object"}`), ReadOnly: true,
			Handle: func(context.Context, json.RawMessage) (*shop.Result, error) {
				return nil, shop.Errorf(shop.Invalid, "$.limit", "send a limit from 1 to 50, not <0> & such")
			}},
		{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`), ReadOnly: true,
			Handle: func(context.Context, json.RawMessage) (*shop.Result, error) {
				return nil, errors.New("disk on fire")
			}},
	}
	opts := MCPOptions{Name: "shop", Version: "test", Tools: tools}
	serve := func(srv *mcp.Server) string {
		s, err := New(Options{MCP: srv})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(ts.Close)
		return ts.URL + "/mcp"
	}
	flat, sdk := serve(NewMCP(opts)), serve(newMCP(opts))

	newMeta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, proto := range []struct{ version, meta string }{{"2025-06-18", ""}, {"2026-07-28", newMeta}} {
		for _, tool := range []string{"page", "refuse", "fail"} {
			t.Run(proto.version+"/"+tool, func(t *testing.T) {
				body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}` + proto.meta + `}}`
				got, want := callRaw(t, flat, proto.version, tool, body), callRaw(t, sdk, proto.version, tool, body)
				var escaped bytes.Buffer
				json.HTMLEscape(&escaped, got)
				if diff := cmp.Diff(string(want), escaped.String()); diff != "" {
					t.Errorf("the answer differs from go-sdk's own encoding (-go-sdk +flat):\n%s", diff)
				}
				if !json.Valid(got) || !strings.Contains(string(got), `"content":[`) {
					t.Errorf("not a tool result: %s", got)
				}
				if proto.meta != "" && !strings.Contains(string(got), `"resultType":"complete"`) {
					t.Errorf("a 2026-07-28 answer without its resultType: %s", got)
				}
			})
		}
	}
}

// callRaw posts body, a tools/call of tool, to the MCP endpoint url in
// protocol version and returns the response's body.
func callRaw(t *testing.T, url, version, tool, body string) []byte {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d %s: %v", resp.StatusCode, b, err)
	}
	return bytes.TrimSpace(b)
}
