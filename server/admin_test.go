package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/contract"
	"shop/database/dbtest"
	"shop/mcptest"
	"shop/money"
	"shop/orders"
	"shop/server"
)

const (
	ownerToken   = "owner-token-0123456789abcdef"
	supportToken = "support-token-0123456789abcdef"
)

func TestParseAdminTokens(t *testing.T) {
	long := strings.Repeat("x", 24)
	got, err := server.ParseAdminTokens(" owner:" + ownerToken + " , ,Support:" + supportToken + ",viewer:" + long + ",")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Actor.Role != shop.Owner || got[1].Actor.Role != shop.Support || got[2].Actor.Role != shop.Viewer {
		t.Fatalf("parsed %+v", got)
	}
	for _, tok := range got {
		if len(tok.Actor.Label) != 8 || strings.Contains(ownerToken+supportToken+long, tok.Actor.Label) {
			t.Errorf("label %q: want 8 hex digits of the token's hash, not a piece of the token", tok.Actor.Label)
		}
	}
	if got, err := server.ParseAdminTokens(""); err != nil || len(got) != 0 {
		t.Errorf("no tokens: %v, %v", got, err)
	}
	for _, tc := range []struct{ name, env, want string }{
		{"NotAPair", "owner" + ownerToken, "entry 1 is not role:token"},
		{"UnknownRole", "owner:" + ownerToken + ",admin:" + supportToken, "entry 2: the role (before the colon) is not viewer, support or owner"},
		{"EmptyRole", ":" + ownerToken, "entry 1: the role (before the colon) is not viewer, support or owner"},
		{"TokenThenRole", supportToken + ":owner", "entry 1: the role (before the colon) is not viewer, support or owner"},
		{"TokenWithColonNoRole", ownerToken[:12] + ":" + ownerToken[12:], "entry 1: the role (before the colon) is not viewer, support or owner"},
		{"NoColon", ownerToken, "entry 1 is not role:token"},
		{"EmptyToken", "viewer:", "entry 1: the token is empty"},
		{"BlankToken", "viewer:   ", "entry 1: the token is empty"},
		{"TooShort", "viewer:" + strings.Repeat("x", 23), "entry 1: the token is too short; use at least 24 random characters"},
		{"Spaces", "viewer:" + strings.Repeat("x", 12) + " " + strings.Repeat("x", 12), "entry 1: the token has spaces"},
		{"Duplicate", "owner:" + ownerToken + ",viewer:" + supportToken + ",viewer:" + ownerToken, "entry 3 has the same token as entry 1"},
		{"DuplicateSameRole", "support:" + supportToken + ", support:" + supportToken + " ", "entry 2 has the same token as entry 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := server.ParseAdminTokens(tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) || got != nil {
				t.Fatalf("got %v, %v; want an error saying %q", got, err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "SHOP_ADMIN_TOKENS: ") {
				t.Errorf("%q does not name the variable", err)
			}
			for _, secret := range []string{ownerToken, supportToken, ownerToken[:12], ownerToken[12:]} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows a token: %q", err)
				}
			}
		})
	}
}

// newAdminServer serves /admin/mcp with the real staff tools, to the
// tokens of env, over a SQLite database holding one order; query reads the
// database.
func newAdminServer(t *testing.T, env string) (*httptest.Server, *contract.Order, func(q string, args ...any) []string) {
	t.Helper()
	db := dbtest.Open(t, "sqlite")
	now := time.Now().UTC()
	if err := db.Exec(`INSERT INTO checkout_sessions (id, status, version, currency, items, priced, total, expires_at, created_at, updated_at)
		VALUES ('cs_admin', 'completed', 1, 'usd', '[]', '{}', 1250, ?, ?, ?)`, now, now, now).Error; err != nil {
		t.Fatal(err)
	}
	o := orders.New(db, &orders.Options{PaymentAttempts: checkout.PaymentAttempts})
	ord, err := o.Create(context.Background(), nil, orders.NewOrder{
		SessionID: "cs_admin", Email: "ada@example.com", Currency: "usd", Total: 1250,
		LineItems: []contract.LineItem{{ID: "li_1", Item: contract.Item{ID: "mug", Quantity: 1}, Name: "Mug", UnitAmount: 1250, BaseAmount: 1250, Subtotal: 1250, Total: 1250}},
		Totals:    []contract.Total{{Type: contract.TotalTotal, DisplayText: "Total", Amount: 1250}},
		Payment:   contract.Payment{Provider: "sandbox", Mode: "test", Reference: "ch_sandbox_1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := server.ParseAdminTokens(env)
	if err != nil {
		t.Fatal(err)
	}
	admin := orders.NewAdmin(o, catalog.New(db, money.MustLookup("usd"), nil), nil)
	srv, err := server.New(server.Options{
		AdminMCP:    server.NewMCP(server.MCPOptions{Name: "shop-admin", Version: "test", Tools: admin.Tools()}),
		AdminTokens: tokens,
		RateLimit:   -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	query := func(q string, args ...any) []string {
		t.Helper()
		var out []string
		if err := db.Raw(q, args...).Scan(&out).Error; err != nil {
			t.Fatal(err)
		}
		return out
	}
	return ts, ord, query
}

// authorizing sets an Authorization header on every request.
type authorizing struct{ header string }

func (a authorizing) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", a.header)
	return http.DefaultTransport.RoundTrip(r)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestAdminAuth(t *testing.T) {
	ts, _, _ := newAdminServer(t, "owner:"+ownerToken+",support:"+supportToken)
	ownerHash := sha256.Sum256([]byte(ownerToken))
	post := func(t *testing.T, header []string) *http.Response {
		t.Helper()
		req, err := http.NewRequest("POST", ts.URL+"/admin/mcp", strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if header != nil {
			req.Header["Authorization"] = header
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	for _, tc := range []struct {
		name   string
		header []string
	}{
		{"NoHeader", nil},
		{"Empty", []string{""}},
		{"BearerAlone", []string{"Bearer"}},
		{"BearerSpace", []string{"Bearer "}},
		{"NoScheme", []string{ownerToken}},
		{"Basic", []string{"Basic b3duZXI6b3duZXItdG9rZW4tMDEyMzQ1Njc4OWFiY2RlZg=="}},
		{"BasicWithTheToken", []string{"Basic " + ownerToken}},
		{"ThreeFields", []string{"Bearer " + ownerToken + " extra"}},
		{"WrongToken", []string{"Bearer owner-token-0123456789abcdeF"}},
		{"ATokenPrefix", []string{"Bearer " + ownerToken[:len(ownerToken)-1]}},
		{"TheTokensHash", []string{"Bearer " + hex.EncodeToString(ownerHash[:])}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, tc.header)
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
				t.Errorf("%s, WWW-Authenticate %q; want 401 with a Bearer challenge", resp.Status, resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
	for _, h := range []string{"Bearer " + ownerToken, "bearer " + supportToken, "Bearer  " + ownerToken} {
		if resp := post(t, []string{h}); resp.StatusCode != http.StatusOK {
			t.Errorf("Authorization %q: %s, want 200", h[:8], resp.Status)
		}
	}
}

// TestAdminSupportRole: a support token reaches, over HTTP, the tools its
// role allows (reading, notes, fulfilment), acting as itself, and is refused
// the owner's.
func TestAdminSupportRole(t *testing.T) {
	ts, ord, query := newAdminServer(t, "owner:"+ownerToken+",support:"+supportToken)
	tokens, _ := server.ParseAdminTokens("support:" + supportToken)
	me := tokens[0].Actor.String()
	client := mcptest.NewClient(t, "test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/admin/mcp",
		HTTPClient: &http.Client{Transport: authorizing{"Bearer " + supportToken}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// callText returns a call's text and, when it failed, its error code.
	callText := func(name string, args map[string]any) (string, shop.Code) {
		t.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError {
			return text, ""
		}
		var out struct{ Error struct{ Code shop.Code } }
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil || out.Error.Code == "" {
			t.Fatalf("%s: an error without a code: %s", name, b)
		}
		return text, out.Error.Code
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_orders", map[string]any{}},
		{"get_order", map[string]any{"order_id": ord.ID}},
		{"sales_report", map[string]any{}},
		{"list_audit_events", map[string]any{}},
		{"add_order_note", map[string]any{"order_id": ord.ID, "note": "Gift wrap, please."}},
		{"fulfill_order", map[string]any{"order_id": ord.ID, "carrier": "USPS", "tracking_number": "9400111899223100001234"}},
	} {
		if text, code := callText(c.tool, c.args); code != "" {
			t.Errorf("%s as support: %s %s", c.tool, code, text)
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"refund_order", map[string]any{"order_id": ord.ID, "amount": 100, "reason": "chipped"}},
		{"cancel_order", map[string]any{"order_id": ord.ID, "reason": "asked"}},
		{"adjust_inventory", map[string]any{"variant_id": "mug", "add": 1, "reason": "count"}},
	} {
		text, code := callText(c.tool, c.args)
		if code != shop.Forbidden || !strings.Contains(text, "needs the owner role; your token has the support role") {
			t.Errorf("%s as support: %q %s; want forbidden, naming both roles", c.tool, code, text)
		}
	}
	actors := query("SELECT DISTINCT actor FROM audit_events WHERE action IN ('add_order_note', 'fulfill_order')")
	if len(actors) != 1 || actors[0] != me {
		t.Errorf("support's changes audited as %v, want %s", actors, me)
	}
	if n := query("SELECT id FROM audit_events WHERE action IN ('refund_order', 'cancel_order', 'adjust_inventory')"); len(n) != 0 {
		t.Errorf("refused calls were audited: %v", n)
	}
}
