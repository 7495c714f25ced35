package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"shop"
	"shop/server"
)

// regionSchema is an input schema with descriptions, bounds and an
// argument an HTTP header must repeat (x-mcp-header).
const regionSchema = `{"type":"object","description":"Where to look.","required":["region"],"properties":{
	"region":{"type":"string","description":"The region.","maxLength":20,"x-mcp-header":"Region"},
	"near":{"type":"object","description":"A place.","properties":{"city":{"type":"string","description":"Its city.","x-mcp-header":"City"}}},
	"limit":{"type":"integer","minimum":1,"maximum":50}}}`

func regionTool() shop.Tool {
	return shop.Tool{Name: "region", InputSchema: json.RawMessage(regionSchema), OutputSchema: json.RawMessage(`{"type":"object"}`), ReadOnly: true,
		Handle: func(context.Context, json.RawMessage) (*shop.Result, error) {
			return &shop.Result{Structured: map[string]any{"ok": true}, Text: "ok"}, nil
		}}
}

// TestToolsListAnswersWholeSchemas: tools/list answers the input schema a
// tool declared, descriptions and bounds included, although go-sdk holds a
// lean copy of it for its per-call header check.
func TestToolsListAnswersWholeSchemas(t *testing.T) {
	srv := server.NewMCP(server.MCPOptions{Name: "shop", Version: "test", Tools: []shop.Tool{regionTool()}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := server.ConnectMCP(t, srv).ListTools(ctx, nil)
	if err != nil || len(list.Tools) != 1 {
		t.Fatalf("tools/list: %v %v", list, err)
	}
	got, _ := json.Marshal(list.Tools[0].InputSchema)
	var gotV, wantV any
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(regionSchema), &wantV); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("tools/list's inputSchema differs from the declared one (-want +got):\n%s", diff)
	}
}

// TestParamHeadersStillChecked: go-sdk's check of the arguments that HTTP
// headers repeat (protocol 2026-07-28) still reads every x-mcp-header of the
// schema, nested ones included, from the lean copy it holds.
func TestParamHeadersStillChecked(t *testing.T) {
	s, err := server.New(server.Options{MCP: server.NewMCP(server.MCPOptions{Name: "shop", Version: "test", Tools: []shop.Tool{regionTool()}})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	tests := []struct {
		name    string
		headers map[string]string
		ok      bool
	}{
		{"both headers", map[string]string{"Mcp-Param-Region": "north", "Mcp-Param-City": "Oslo"}, true},
		{"both headers, base64", map[string]string{"Mcp-Param-Region": b64("north"), "Mcp-Param-City": "Oslo"}, true},
		{"no region header", map[string]string{"Mcp-Param-City": "Oslo"}, false},
		{"no nested city header", map[string]string{"Mcp-Param-Region": "north"}, false},
		{"region header differs", map[string]string{"Mcp-Param-Region": "south", "Mcp-Param-City": "Oslo"}, false},
	}
	client := &http.Client{Timeout: 10 * time.Second}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"region","arguments":{"region":"north","near":{"city":"Oslo"}},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "region")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			answered := resp.StatusCode == http.StatusOK && strings.Contains(string(got), `"structuredContent":{"ok":true}`)
			if answered != tc.ok {
				t.Errorf("HTTP %d %s: answered %v, want %v", resp.StatusCode, got, answered, tc.ok)
			}
		})
	}
}

// TestLeanSchemaKeepsOnlyAnnotations: the schema go-sdk reads on every call
// holds the annotated arguments and the levels leading to them, nothing
// else; a schema without annotations is just its type.
func TestLeanSchemaKeepsOnlyAnnotations(t *testing.T) {
	tests := []struct{ name, full, want string }{
		{"annotated, nested", regionSchema, `{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"near":{"type":"object","properties":{"city":{"type":"string","x-mcp-header":"City"}}}}}`},
		{"no annotation", `{"type":"object","description":"d","properties":{"query":{"type":"string","maxLength":200},
			"where":{"type":"object","properties":{"city":{"type":"string"}}}},"required":["query"]}`, `{"type":"object"}`},
		{"a property that is not an object", `{"type":"object","properties":{"any":true,"id":{"type":"string","x-mcp-header":"Id"}}}`,
			`{"type":"object","properties":{"id":{"type":"string","x-mcp-header":"Id"}}}`},
		{"not an object", `true`, `true`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got, want any
			if err := json.Unmarshal(server.LeanSchema(json.RawMessage(tc.full)), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lean schema (-want +got):\n%s", diff)
			}
		})
	}
}
