package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop/database/dbtest"
	"shop/server"
)

// TestLinkedSessionOverMCP: over /mcp, a session ada starts with her token
// is hers: without a token, or with bob's, get_checkout_session and
// update_checkout_session answer not_found, as for an unknown id; with
// hers they answer the session (checkout's TestLinkedSessionIsTheirs tries
// every call).
func TestLinkedSessionOverMCP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := startPayShop(t, db, true)
		ts, as := accountsServer(t, db)
		o := server.Options{PublicURL: ts.URL, Accounts: as}
		o.MCP = server.NewMCP(server.MCPOptions{Name: "shop", Tools: p.co.Tools(),
			Challenge: func(s []string) string { return as.Challenge("insufficient_scope", s) }})
		srv, err := server.New(o)
		if err != nil {
			t.Fatal(err)
		}
		ts.Config.Handler = srv.Handler()
		ada, bob := link(t, db, ts.URL, "ada@example.com"), link(t, db, ts.URL, "bob@example.com")

		call := func(token, tool string, args map[string]any) (isError bool, text string, structured json.RawMessage) {
			t.Helper()
			rpc, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
			status, _, body := post(t, ts.URL, token, string(rpc))
			var res struct {
				IsError           bool            `json:"isError"`
				StructuredContent json.RawMessage `json:"structuredContent"`
				Content           []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			if err := json.Unmarshal(rpcResult(body), &res); err != nil || status != 200 {
				t.Fatalf("%s: HTTP %d %s", tool, status, body)
			}
			for _, c := range res.Content {
				text += c.Text
			}
			return res.IsError, text, res.StructuredContent
		}
		isErr, text, raw := call(ada, "create_checkout_session", map[string]any{
			"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 1}},
			"fulfillment_address": map[string]any{"name": "Ada", "line_one": "1 Market St", "city": "San Francisco",
				"state": "CA", "country": "US", "postal_code": "94105"},
		})
		var s struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &s); isErr || s.ID == "" {
			t.Fatalf("ada's session: %s", text)
		}
		for who, token := range map[string]string{"a guest": "", "bob": bob} {
			for tool, args := range map[string]map[string]any{
				"get_checkout_session":    {"checkout_session_id": s.ID},
				"update_checkout_session": {"checkout_session_id": s.ID, "fulfillment_address": map[string]any{"name": "Mallory", "line_one": "9 Drop St", "city": "San Francisco", "state": "CA", "country": "US", "postal_code": "94103"}},
			} {
				if isErr, text, _ := call(token, tool, args); !isErr || !strings.Contains(text, "no checkout session has id") {
					t.Errorf("%s by %s: isError %v, %q; want not_found", tool, who, isErr, text)
				}
			}
		}
		isErr, text, raw = call(ada, "get_checkout_session", map[string]any{"checkout_session_id": s.ID})
		if isErr || !strings.Contains(string(raw), "1 Market St") || strings.Contains(string(raw), "Mallory") {
			t.Errorf("ada reads her session: isError %v, %q, %s", isErr, text, raw)
		}
	})
}
