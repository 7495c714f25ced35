package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/database/dbtest"
	"shop/ucp"
)

// ucpBinding calls the tools of UCP over one binding, as an agent of one
// release: every answer checked against that release's schemas.
type ucpBinding struct {
	name    string
	profile string
	mcp     *mcp.ClientSession // over /ucp/mcp when set
	rest    restAgent          // over /ucp/v1 otherwise
}

// restRoutes are the REST operations of the tools the tests call.
var restRoutes = map[string]struct{ method, path, member string }{
	"create_cart": {"POST", "/carts", "cart"}, "update_cart": {"PUT", "/carts/%s", "cart"},
	"create_checkout": {"POST", "/checkout-sessions", "checkout"}, "update_checkout": {"PUT", "/checkout-sessions/%s", "checkout"},
	"get_checkout": {"GET", "/checkout-sessions/%s", ""}, "lookup_catalog": {"POST", "/catalog/lookup", "catalog"},
	"get_product": {"POST", "/catalog/product", "catalog"}, "search_catalog": {"POST", "/catalog/search", "catalog"},
	"complete_checkout": {"POST", "/checkout-sessions/%s/complete", "checkout"},
}

// mcpWords are /mcp's tool and field names, which no UCP answer may name.
var mcpWords = []string{"_checkout_session", "promo_code", "create_payment_link", "search_products", "fulfillment_address", "fulfillment_option_id"}

// speaksUCP fails t when an answer names one of /mcp's tools or fields.
func speaksUCP(t *testing.T, tool string, answer []byte) {
	t.Helper()
	for _, w := range mcpWords {
		if strings.Contains(string(answer), w) {
			t.Errorf("%s answered /mcp's %q: %s", tool, w, answer)
		}
	}
}

// ucpFailure is a protocol error: its HTTP status over REST (0 over MCP),
// its JSON-RPC code over MCP (0 over REST) and UCP code.
type ucpFailure struct {
	status int
	rpc    int64
	code   string
}

// call calls tool with args (meta added) and decodes its answer into out;
// a protocol error is returned instead.
func (b ucpBinding) call(t *testing.T, tool, id string, payload map[string]any, out any) *ucpFailure {
	t.Helper()
	if b.mcp != nil {
		args := map[string]any{"meta": ucpMeta(b.profile, uuid(t))}
		if id != "" {
			args["id"] = id
		}
		if r := restRoutes[tool]; r.member != "" {
			args[r.member] = payload
		}
		res, err := b.mcp.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			speaksUCP(t, tool, []byte(rpcErr.Message+string(rpcErr.Data)))
			var data struct{ Code string }
			_ = json.Unmarshal(rpcErr.Data, &data)
			return &ucpFailure{rpc: rpcErr.Code, code: data.Code}
		}
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		speaksUCP(t, tool, raw)
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
		return nil
	}
	r := restRoutes[tool]
	path := r.path
	if id != "" {
		path = fmt.Sprintf(r.path, id)
	}
	var body any
	if r.member != "" {
		body = payload
	}
	key := ""
	if r.method != "GET" && !strings.HasPrefix(path, "/catalog") {
		key = uuid(t)
	}
	ans := b.rest.do(t, r.method, path, key, body)
	speaksUCP(t, tool, ans.body)
	if ans.status >= 400 {
		var e struct{ Code string }
		_ = json.Unmarshal(ans.body, &e)
		return &ucpFailure{status: ans.status, code: e.Code}
	}
	kind := ucpToolResult[tool]
	checkUCP(t, kind, ans.body)
	if err := json.Unmarshal(ans.body, out); err != nil {
		t.Fatal(err)
	}
	return nil
}

// ucpBindings are both bindings as agents of both releases.
func ucpBindings(t *testing.T, url string, agents *agentProfiles) []ucpBinding {
	var out []ucpBinding
	s := connectUCP(t, url)
	for _, release := range []string{"2026-04-08", "2026-08-25"} {
		profile := agents.URL + "/agent.json"
		if release == "2026-08-25" {
			profile = agents.URL + "/agent-2026-08-25.json"
		}
		out = append(out, ucpBinding{name: "mcp/" + release, profile: profile, mcp: s},
			ucpBinding{name: "rest/" + release, profile: profile, rest: restAgent{url: url, profile: profile}})
	}
	return out
}

// policyWithExpiredCode writes the demo policy with a code that ended
// (OLD5) and returns its path.
func policyWithExpiredCode(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "demo", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const old = "promotions:\n  - code: OLD5\n    title: Old five off\n    kind: amount_off\n    amount: 500\n    ends_at: 2026-01-01T00:00:00Z\n"
	policy := strings.Replace(string(b), "promotions:\n", old, 1)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUCPContracts: over MCP and REST, as agents of both releases, on
// SQLite and PostgreSQL: discount codes as the discount extension says,
// a cart converted to one checkout however often and however concurrently,
// the catalog's batch limit, options and selections, and a create without
// line_items refused.
func TestUCPContracts(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			shop := startShop(t, dbtest.DSN(t, d), ucpEnv, "--config", policyWithExpiredCode(t))
			agents := serveAgentProfiles(t)
			for _, b := range ucpBindings(t, shop.url, agents) {
				t.Run(b.name, func(t *testing.T) {
					t.Run("Discounts", func(t *testing.T) { testUCPDiscounts(t, b) })
					t.Run("CartOnce", func(t *testing.T) { testUCPCartOnce(t, b) })
					t.Run("Catalog", func(t *testing.T) { testUCPCatalog(t, b) })
					t.Run("NoLineItems", func(t *testing.T) { testUCPNoLineItems(t, b) })
					t.Run("NotReady", func(t *testing.T) { testUCPNotReady(t, b) })
				})
			}
		})
	}
}

// warnings are a cart's or checkout's warning messages, code by path.
func warnings(ms []ucp.Message) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		if m.Type == "warning" {
			out[m.Path] = m.Code
		}
	}
	return out
}

func testUCPDiscounts(t *testing.T, b ucpBinding) {
	line := ucpLine(ucpVariant, 3)
	for _, tc := range []struct {
		name     string
		codes    []string
		applied  []string
		warnings map[string]string
	}{
		{"unknown", []string{"NOPE"}, nil, map[string]string{"$.discounts.codes[0]": "discount_code_invalid"}},
		{"expired", []string{"old5"}, nil, map[string]string{"$.discounts.codes[0]": "discount_code_expired"}},
		{"two valid", []string{"welcome10", "FreeShip"}, []string{"WELCOME10", "FREESHIP"}, map[string]string{}},
		{"the same twice", []string{"WELCOME10", "welcome10"}, []string{"WELCOME10"}, map[string]string{"$.discounts.codes[1]": "discount_code_already_applied"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var co ucp.Checkout
			if f := b.call(t, "create_checkout", "", map[string]any{"line_items": line, "discounts": map[string]any{"codes": tc.codes},
				"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}}}, &co); f != nil || co.ID == "" {
				t.Fatalf("create with codes %q: %+v %+v", tc.codes, f, co)
			}
			var got []string
			for _, a := range co.Discounts.Applied {
				got = append(got, a.Code)
				var sum int64
				for _, al := range a.Allocations {
					sum += al.Amount
				}
				if a.Title == "" || a.Title == "Promotion" || a.Amount <= 0 || sum != a.Amount {
					t.Errorf("applied %+v: allocations sum to %d", a, sum)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.applied, ",") {
				t.Errorf("applied %q, want %q", got, tc.applied)
			}
			if w := warnings(co.Messages); fmt.Sprint(w) != fmt.Sprint(tc.warnings) {
				t.Errorf("warnings %v, want %v (messages %+v)", w, tc.warnings, co.Messages)
			}
			if len(co.Discounts.Codes) != len(tc.codes) {
				t.Errorf("codes %q, sent %q", co.Discounts.Codes, tc.codes)
			}
			checkSum(t, "checkout", co.Totals)
		})
	}
	t.Run("cleared on a cart", func(t *testing.T) {
		var cart ucp.Cart
		if f := b.call(t, "create_cart", "", map[string]any{"line_items": line, "discounts": map[string]any{"codes": []string{"welcome10"}}}, &cart); f != nil {
			t.Fatal(f)
		}
		if cart.Discounts == nil || len(cart.Discounts.Applied) != 1 || cart.Discounts.Applied[0].Code != "WELCOME10" {
			t.Fatalf("cart with WELCOME10: %+v", cart.Discounts)
		}
		var cleared ucp.Cart
		if f := b.call(t, "update_cart", cart.ID, map[string]any{"discounts": map[string]any{"codes": []string{}}}, &cleared); f != nil {
			t.Fatal(f)
		}
		if cleared.Discounts == nil || len(cleared.Discounts.Codes) != 0 || len(cleared.Discounts.Applied) != 0 || totalsByType(cleared.Totals)["items_discount"] != 0 {
			t.Errorf("codes: [] left %+v %+v", cleared.Discounts, cleared.Totals)
		}
	})
}

func testUCPCartOnce(t *testing.T, b ucpBinding) {
	var cart ucp.Cart
	if f := b.call(t, "create_cart", "", map[string]any{"line_items": ucpLine(ucpVariant, 1)}, &cart); f != nil {
		t.Fatal(f)
	}
	const n = 4
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var co ucp.Checkout
			if f := b.call(t, "create_checkout", "", map[string]any{"cart_id": cart.ID, "line_items": []any{}}, &co); f != nil {
				t.Errorf("convert: %+v", f)
			}
			ids[i] = co.ID
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("a cart converted by %d agents at once gave checkouts %q", n, ids)
		}
	}
	var again ucp.Checkout
	if f := b.call(t, "create_checkout", "", map[string]any{"cart_id": cart.ID, "line_items": []any{}}, &again); f != nil || again.ID != ids[0] {
		t.Errorf("converted again while incomplete: %s %+v, want %s", again.ID, f, ids[0])
	}
}

func testUCPCatalog(t *testing.T, b ucpBinding) {
	ids := make([]string, 51)
	for i := range ids {
		ids[i] = fmt.Sprintf("no-such-id-%d", i)
	}
	var looked ucp.LookupResponse
	switch f := b.call(t, "lookup_catalog", "", map[string]any{"ids": ids}, &looked); {
	case f == nil:
		t.Errorf("51 ids answered %+v", looked)
	case f.code != "request_too_large" || b.mcp != nil && f.rpc != -32602 || b.mcp == nil && f.status != 400:
		t.Errorf("51 ids: %+v, want request_too_large (HTTP 400, JSON-RPC -32602)", f)
	}

	// A variant id: that variant first, its options selected; options listed.
	const variant = "insulated-travel-mug-12-oz-charcoal"
	var prod ucp.ProductResponse
	if f := b.call(t, "get_product", "", map[string]any{"id": variant}, &prod); f != nil {
		t.Fatal(f)
	}
	p := prod.Product
	if len(p.Variants) == 0 || p.Variants[0].ID != variant {
		t.Errorf("get_product %s: variants %+v", variant, p.Variants)
	}
	if fmt.Sprint(p.Selected) != fmt.Sprint(p.Variants[0].Options) || len(p.Selected) != 2 {
		t.Errorf("selected %+v, want the variant's options %+v", p.Selected, p.Variants[0].Options)
	}
	if len(p.Options) != 2 || len(p.Options[1].Values) < 2 {
		t.Errorf("options %+v, want capacity and colour with their values", p.Options)
	}
	for _, o := range p.Options {
		for _, v := range o.Values {
			if v.Exists == nil || v.Available == nil {
				t.Errorf("option %s %s without availability signals", o.Name, v.Label)
			}
		}
	}
	// A product id with a selection: a variant of it featured.
	if f := b.call(t, "get_product", "", map[string]any{"id": "insulated-travel-mug", "selected": []map[string]any{{"name": "Colour", "label": "Charcoal"}}}, &prod); f != nil {
		t.Fatal(f)
	}
	if got := prod.Product.Variants[0].Options; !strings.Contains(fmt.Sprint(got), "Charcoal") {
		t.Errorf("featured %+v, want a Charcoal one", got)
	}
	// A lookup by a variant id puts it first.
	if f := b.call(t, "lookup_catalog", "", map[string]any{"ids": []string{"insulated-travel-mug", variant}}, &looked); f != nil {
		t.Fatal(f)
	}
	if len(looked.Products) != 1 || looked.Products[0].Variants[0].ID != variant || len(looked.Products[0].Options) != 2 {
		t.Errorf("lookup: %+v", looked.Products)
	}
	// A search needs a query or a filter.
	var found ucp.SearchResponse
	if f := b.call(t, "search_catalog", "", map[string]any{"query": "  "}, &found); f != nil {
		t.Fatal(f)
	}
	if found.UCP.Status != "error" || len(found.Messages) == 0 || found.Messages[0].Path != "$.catalog.query" {
		t.Errorf("an empty search: %+v", found)
	}
}

func testUCPNoLineItems(t *testing.T, b ucpBinding) {
	var co ucp.Checkout
	f := b.call(t, "create_checkout", "", map[string]any{"buyer": map[string]any{"email": "ada@example.com"}}, &co)
	if f == nil || f.code != "invalid_request" || b.mcp != nil && f.rpc != -32602 || b.mcp == nil && f.status != 400 {
		t.Errorf("create without line_items: %+v %+v", f, co)
	}
}

// testUCPNotReady completes a checkout without an address: refused in
// UCP's words (update_checkout, never /mcp's update_checkout_session).
func testUCPNotReady(t *testing.T, b ucpBinding) {
	var co ucp.Checkout
	if f := b.call(t, "create_checkout", "", map[string]any{"line_items": ucpLine(ucpVariant, 1)}, &co); f != nil {
		t.Fatal(f)
	}
	pay := map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
		"credential": map[string]any{"type": "token", "token": "pm_card_visa"}}}}}
	var refused ucp.ErrorResponse
	if f := b.call(t, "complete_checkout", co.ID, pay, &refused); f != nil {
		t.Fatal(f)
	}
	if len(refused.Messages) == 0 || !strings.Contains(refused.Messages[0].Content, "update_checkout") {
		t.Errorf("completing a checkout not ready: %+v", refused)
	}
}
