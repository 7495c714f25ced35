package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"shop/server"
)

// rpcFailure is a JSON-RPC error answer.
type rpcFailure struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestUCPJSONRPCErrors: /ucp/mcp answers every malformed or unknown call
// with a JSON-RPC error (the right code, the request's id when it had one,
// an application/json body), with or without an MCP-Protocol-Version
// header, and never plain text; a call it serves is still served.
func TestUCPJSONRPCErrors(t *testing.T) {
	h := newHost(t, server.Options{})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"a":"` +
		strings.Repeat("a", server.MaxMCPBodyBytes) + `"}}}`
	for _, tc := range []struct {
		name, body string
		status     int
		code       int
		id         string
	}{
		{"UnknownMethod", `{"jsonrpc":"2.0","id":7,"method":"checkout/create","params":{}}`, 404, -32601, "7"},
		{"UnknownMethodStringID", `{"jsonrpc":"2.0","id":"a-1","method":"nope"}`, 404, -32601, `"a-1"`},
		{"NotJSON", `{"jsonrpc":"2.0","id":7,`, 400, -32700, "null"},
		{"Garbage", `hello`, 400, -32700, "null"},
		{"NotAnObject", `"tools/list"`, 400, -32600, "null"},
		{"WrongVersion", `{"jsonrpc":"1.0","id":3,"method":"tools/list"}`, 400, -32600, "3"},
		{"NoVersion", `{"id":3,"method":"tools/list"}`, 400, -32600, "3"},
		{"NoMethod", `{"jsonrpc":"2.0","id":3}`, 400, -32600, "3"},
		{"MethodNotString", `{"jsonrpc":"2.0","id":3,"method":5}`, 400, -32600, "3"},
		{"IDAnObject", `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, 400, -32600, "null"},
		{"CallWithoutID", `{"jsonrpc":"2.0","method":"tools/list"}`, 400, -32600, "null"},
		{"NotificationWithID", `{"jsonrpc":"2.0","id":4,"method":"notifications/initialized"}`, 400, -32600, "4"},
		{"ParamsAnArray", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":["whoami"]}`, 400, -32602, "5"},
		{"ParamsMissing", `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`, 400, -32602, "5"},
		{"TooLarge", big, 413, -32600, "null"},
	} {
		for _, version := range []string{"", "2025-06-18", "2025-11-25"} {
			t.Run(tc.name+"/"+version, func(t *testing.T) {
				r, err := h.post("/ucp/mcp", tc.body, map[string]string{"Mcp-Protocol-Version": version})
				if err != nil {
					t.Fatal(err)
				}
				checkRPCError(t, r, tc.status, tc.code, tc.id)
			})
		}
	}
	t.Run("UnsupportedProtocolVersion", func(t *testing.T) {
		r, err := h.post("/ucp/mcp", `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "1999-01-01"})
		if err != nil {
			t.Fatal(err)
		}
		checkRPCError(t, r, 400, -32600, "9")
	})
	t.Run("UnknownNotification", func(t *testing.T) {
		r, err := h.post("/ucp/mcp", `{"jsonrpc":"2.0","method":"notifications/whatever"}`, map[string]string{"Mcp-Protocol-Version": ""})
		if err != nil || r.status != http.StatusAccepted || len(r.body) != 0 {
			t.Fatalf("HTTP %d %q %v, want 202 and nothing", r.status, r.body, err)
		}
	})
	t.Run("Get", func(t *testing.T) {
		req, _ := http.NewRequest("GET", h.url+"/ucp/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e rpcFailure
		if resp.StatusCode != 405 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.NewDecoder(resp.Body).Decode(&e) != nil || e.Error == nil {
			t.Fatalf("GET: HTTP %d %s, want 405 and a JSON-RPC error", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	})
	t.Run("Served", func(t *testing.T) {
		for _, version := range []string{"", "2025-06-18"} {
			r, err := h.post("/ucp/mcp", toolCall(11, nil), map[string]string{"Mcp-Protocol-Version": version})
			if err != nil || r.status != 200 || !strings.Contains(string(r.body), `"structuredContent"`) {
				t.Fatalf("%q: HTTP %d %s %v", version, r.status, r.body, err)
			}
		}
	})
}

// checkRPCError fails t unless r is a JSON-RPC error of code, with id, in
// JSON, with the HTTP status.
func checkRPCError(t *testing.T, r reply, status, code int, id string) {
	t.Helper()
	var e rpcFailure
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("HTTP %d, Content-Type %q, want JSON: %s", r.status, ct, r.body)
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == nil || e.JSONRPC != "2.0" {
		t.Fatalf("HTTP %d %s: not a JSON-RPC error (%v)", r.status, r.body, err)
	}
	if r.status != status || e.Error.Code != code || string(e.ID) != id || e.Error.Message == "" {
		t.Fatalf("HTTP %d %s, want HTTP %d, code %d, id %s", r.status, r.body, status, code, id)
	}
}

// TestRPCMethodsServed: every method the /ucp/mcp check lets through
// reaches the MCP server (go-sdk does not answer it "unsupported"), so the
// check refuses no method the server serves that it knows.
func TestRPCMethodsServed(t *testing.T) {
	h := newHost(t, server.Options{})
	for method, m := range server.RPCMethods {
		id := `"id":1,`
		if m.Notification {
			id = ""
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0",%s"method":%q,"params":{}}`, id, method)
		r, err := h.post("/mcp", body, map[string]string{"Mcp-Protocol-Version": ""})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(r.body), "unsupported") || strings.Contains(string(r.body), "not handled") {
			t.Errorf("%s: go-sdk does not serve it: HTTP %d %s", method, r.status, r.body)
		}
	}
}

// TestPromptsNotDeclared: no endpoint declares the prompts capability, so
// prompts/list and prompts/get answer -32601 (Method not found) on each:
// /ucp/mcp's gate with HTTP 404, /mcp's server in a JSON-RPC answer.
func TestPromptsNotDeclared(t *testing.T) {
	h := newHost(t, server.Options{})
	for _, path := range []string{"/mcp", "/ucp/mcp"} {
		for _, method := range []string{"prompts/list", "prompts/get"} {
			t.Run(path+"/"+method, func(t *testing.T) {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":%q,"params":{"name":"x"}}`, method)
				r, err := h.post(path, body, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
				if err != nil {
					t.Fatal(err)
				}
				status := 404
				if path == "/mcp" {
					status = 200
				}
				checkRPCError(t, r, status, -32601, "9")
			})
		}
	}
}
