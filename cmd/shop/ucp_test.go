package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/database"
	"shop/database/dbtest"
	"shop/ucp"
)

// ucpEnv lets the shop fetch agents' profiles from 127.0.0.1, as tests serve them.
var ucpEnv = map[string]string{"SHOP_UCP_TEST_ALLOW_LOOPBACK": "true"}

// ucpDestination is a UCP shipping destination in New York.
var ucpDestination = map[string]any{
	"first_name": "Ada", "last_name": "Lovelace", "street_address": "350 Fifth Ave",
	"address_locality": "New York", "address_region": "NY", "postal_code": "10118", "address_country": "US",
}

// ucpMCPAddress is the same address as the /mcp dialect writes it.
var ucpMCPAddress = map[string]any{
	"name": "Ada Lovelace", "line_one": "350 Fifth Ave", "city": "New York", "state": "NY", "country": "US", "postal_code": "10118",
}

func ucpMeta(profile string, key string) map[string]any {
	m := map[string]any{"ucp-agent": map[string]any{"profile": profile}}
	if key != "" {
		m["idempotency-key"] = key
	}
	return m
}

// ucpCall calls a tool of /ucp/mcp and decodes its structured content into T.
func ucpCall[T any](t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) T {
	t.Helper()
	res := call(t, s, tool, args)
	return structured[T](t, res)
}

// ucpRPCError calls a tool that must fail as a JSON-RPC error and returns it.
func ucpRPCError(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) *jsonrpc.Error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("%s: want a JSON-RPC error, got %v", tool, err)
	}
	return rpcErr
}

// ucpPost calls a tool of /ucp/mcp as ucp-cli does, one JSON-RPC POST
// accepting only JSON, and returns the HTTP status and the answer.
func ucpPost(t *testing.T, url, tool string, args map[string]any) (int, rpcAnswer) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, url+"/ucp/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out rpcAnswer
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: HTTP %d, not JSON-RPC: %v", tool, resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// rpcAnswer is a JSON-RPC answer.
type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

func totalsByType(ts []ucp.Total) map[string]int64 {
	out := map[string]int64{}
	for _, t := range ts {
		out[t.Type] += t.Amount
	}
	return out
}

// checkSum checks UCP's rule that the entries other than total add up to it.
func checkSum(t *testing.T, what string, ts []ucp.Total) {
	t.Helper()
	var sum, total int64
	for _, x := range ts {
		if x.Type == "total" {
			total = x.Amount
		} else {
			sum += x.Amount
		}
	}
	if sum != total {
		t.Errorf("%s: totals add up to %d, total says %d: %+v", what, sum, total, ts)
	}
}

func TestUCPProfile(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) { testUCPProfile(t, d) })
	}
}

func testUCPProfile(t *testing.T, d database.Dialect) {
	shop := startShop(t, dbtest.DSN(t, d), ucpEnv)
	current := getUCPProfile(t, shop.url+"/.well-known/ucp")
	previous := getUCPProfile(t, shop.url+"/.well-known/ucp/2026-04-08")
	for version, p := range map[string]ucp.BusinessProfile{"2026-08-25": current, "2026-04-08": previous} {
		// MCP in both releases, REST (2026-08-25's binding) in the current one.
		svc := p.UCP.Services[ucp.ServiceShopping]
		want := map[string]string{"mcp": shop.url + "/ucp/mcp"}
		if version == "2026-08-25" {
			want["rest"] = shop.url + "/ucp/v1"
		}
		got := map[string]string{}
		for _, e := range svc {
			if e["version"] == version {
				got[e["transport"].(string)] = e["endpoint"].(string)
			}
		}
		if p.UCP.Version != version || len(svc) != len(want) || !maps.Equal(got, want) {
			t.Errorf("profile %s: version %s, shopping service %v; want %v", version, p.UCP.Version, svc, want)
		}
		for _, c := range []string{ucp.CapCheckout, ucp.CapCart, ucp.CapOrder, ucp.CapCatalogSearch, ucp.CapCatalogLookup, ucp.CapFulfillment, ucp.CapDiscount} {
			if cs := p.UCP.Capabilities[c]; len(cs) != 1 || cs[0]["version"] != version {
				t.Errorf("profile %s: capability %s missing or of another version: %v", version, c, cs)
			}
		}
		if h := p.UCP.PaymentHandlers["dev.shop.sandbox"]; len(h) != 1 || h[0].ID != "sandbox_card" || h[0].Version != version {
			t.Errorf("profile %s: the sandbox's test handler missing: %+v", version, p.UCP.PaymentHandlers)
		}
	}
	if got := current.UCP.SupportedVersions; len(got) != 1 || got["2026-04-08"] != shop.url+"/.well-known/ucp/2026-04-08" {
		t.Errorf("supported_versions %v, want 2026-04-08's profile", got)
	}
	if previous.UCP.SupportedVersions != nil {
		t.Errorf("the 2026-04-08 profile is a leaf, yet names %v", previous.UCP.SupportedVersions)
	}
	// keys[] is a JWK set of the shop's public P-256 key, the same one that
	// the 2026-04-08 profile names in signing_keys, the same after a restart.
	if len(current.Keys) != 1 || len(previous.SigningKeys) != 1 {
		t.Fatalf("keys %+v, signing_keys %+v: want one key each", current.Keys, previous.SigningKeys)
	}
	k := current.Keys[0]
	pub, ok := k.Key.(*ecdsa.PublicKey)
	if !ok || !k.IsPublic() || !k.Valid() || k.Algorithm != "ES256" || k.Use != "sig" || k.KeyID == "" || pub.Curve != elliptic.P256() {
		t.Errorf("keys[0] = %+v, want a public ES256 P-256 key with a kid", k)
	}
	if !previous.SigningKeys[0].Key.(*ecdsa.PublicKey).Equal(pub) || previous.SigningKeys[0].KeyID != k.KeyID {
		t.Error("the 2026-04-08 profile names another key")
	}
	// No identity linking: the shop's OAuth tokens are for /mcp alone, with
	// its own scopes (orders:read, account, payments), not UCP's
	// {capability}:{scope} ones, and /ucp reads no user tokens; declaring
	// dev.ucp.common.identity_linking would send platforms to an
	// authorization server that refuses what UCP has them ask for.
	if _, ok := current.UCP.Capabilities["dev.ucp.common.identity_linking"]; ok {
		t.Error("the profile declares identity linking, which the shop's authorization server does not serve")
	}
	resp, err := http.Get(shop.url + "/.well-known/ucp/2026-01-11")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET the profile of a release the shop does not speak: %d, want 404", resp.StatusCode)
	}
}

// getUCPProfile GETs a business profile, cacheable for five minutes,
// checks it against the schema of its release and decodes it.
func getUCPProfile(t *testing.T, url string) ucp.BusinessProfile {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Cache-Control"), "public, max-age=300") {
		t.Fatalf("GET %s: %d, Cache-Control %q", url, resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	checkUCP(t, "profile", body)
	var p ucp.BusinessProfile
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUCPNegotiation(t *testing.T) {
	shop := startShop(t, dbtest.DSN(t, database.SQLite), ucpEnv)
	agents := serveAgentProfiles(t)
	s := connectUCP(t, shop.url)
	search := func(profile string) map[string]any {
		return map[string]any{"meta": ucpMeta(profile, ""), "catalog": map[string]any{"query": "mug"}}
	}
	cases := []struct {
		name, profile, code string
	}{
		{"ErrNoProfile", "", "invalid_profile_url"},
		{"ErrHTTPRemote", "http://example.com/agent.json", "invalid_profile_url"},
		{"ErrPrivateAddress", "https://10.1.2.3/agent.json", "profile_unreachable"},
		{"ErrLinkLocal", "https://169.254.169.254/latest/meta-data", "profile_unreachable"},
		{"ErrNotFound", agents.URL + "/missing.json", "profile_unreachable"},
		{"ErrMalformed", agents.URL + "/broken.json", "profile_malformed"},
		{"ErrOtherVersion", agents.URL + "/old.json", "version_unsupported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := ucpRPCError(t, s, "search_catalog", search(c.profile))
			var data struct {
				Code string `json:"code"`
			}
			_ = json.Unmarshal(e.Data, &data)
			if e.Code != -32001 || data.Code != c.code {
				t.Errorf("got %d %s (%s), want -32001 %s", e.Code, data.Code, e.Message, c.code)
			}
		})
	}
	t.Run("CachedForItsTTL", func(t *testing.T) {
		for range 5 {
			res := ucpCall[ucp.SearchResponse](t, s, "search_catalog", search(agents.URL+"/agent.json"))
			if len(res.Products) == 0 {
				t.Fatal("no mug found")
			}
		}
		if n := agents.count("/agent.json"); n != 1 {
			t.Errorf("the profile was fetched %d times, want once within its max-age", n)
		}
	})
}

// TestUCP buys over /ucp/mcp as an agent of each release the shop speaks,
// every answer checked against that release's schemas.
func TestUCP(t *testing.T) {
	for _, d := range dbtest.Dialects {
		for _, agent := range []string{"/agent.json", "/agent-2026-08-25.json"} {
			t.Run(string(d)+agent, func(t *testing.T) { testUCP(t, d, agent) })
		}
	}
}

func testUCP(t *testing.T, d database.Dialect, agent string) {
	shop := startShop(t, dbtest.DSN(t, d), ucpEnv)
	agents := serveAgentProfiles(t)
	s := connectUCP(t, shop.url)
	profile := agents.URL + agent
	meta := ucpMeta(profile, "")
	ucpBrowse(t, s, meta)
	co, cart := ucpBasket(t, s, meta)
	checkUCPPolicies(t, co, agent != "/agent.json")
	want := ucpMCPTotals(t, shop.url, co)
	ucpPay(t, shop.url, s, profile, co, want)
	ucpCancel(t, s, profile, cart)
}

// checkUCPPolicies checks a checkout's policies: since 2026-08-25, the
// merchant's return policy, the page links[] names; none before.
func checkUCPPolicies(t *testing.T, co ucp.Checkout, since20260825 bool) {
	t.Helper()
	returns := ""
	for _, l := range co.Links {
		if l.Type == "return_policy" {
			returns = l.URL
		}
	}
	switch {
	case !since20260825 && len(co.Policies) != 0:
		t.Errorf("a 2026-04-08 checkout with policies: %+v", co.Policies)
	case since20260825 && (returns == "" || len(co.Policies) != 1 || co.Policies[0].Type != "dev.ucp.shopping.policy.return" ||
		co.Policies[0].URL != returns || co.Policies[0].Description.Plain == ""):
		t.Errorf("policies %+v, want the return policy of links %+v", co.Policies, co.Links)
	}
}

// ucpVariant is the variant the UCP tests buy.
const ucpVariant = "enamel-camp-mug-forest-green"

// ucpLine is a request's line_items of one line.
func ucpLine(id string, q int) []map[string]any {
	return []map[string]any{{"item": map[string]any{"id": id}, "quantity": q}}
}

// ucpBrowse searches, looks up and gets products.
func ucpBrowse(t *testing.T, s *mcp.ClientSession, meta map[string]any) {
	found := ucpCall[ucp.SearchResponse](t, s, "search_catalog", map[string]any{"meta": meta,
		"catalog": map[string]any{"query": "enamel mug", "filters": map[string]any{"available": true}, "pagination": map[string]any{"limit": 2}}})
	if len(found.Products) == 0 || found.Pagination == nil {
		t.Fatalf("search: %+v", found)
	}
	looked := ucpCall[ucp.LookupResponse](t, s, "lookup_catalog", map[string]any{"meta": meta,
		"catalog": map[string]any{"ids": []string{ucpVariant, "no-such-thing"}}})
	if len(looked.Products) != 1 || len(looked.Products[0].Variants) != 1 || looked.Products[0].Variants[0].ID != ucpVariant {
		t.Errorf("lookup: %+v", looked)
	}
	prod := ucpCall[ucp.ProductResponse](t, s, "get_product", map[string]any{"meta": meta, "catalog": map[string]any{"id": "enamel-camp-mug"}})
	if len(prod.Product.Variants) < 2 {
		t.Errorf("get_product: %+v", prod.Product)
	}
	_ = ucpCall[ucp.ErrorResponse](t, s, "get_product", map[string]any{"meta": meta, "catalog": map[string]any{"id": "no-such-thing"}})
}

// ucpBasket fills a cart and makes a checkout of it, with an address and
// express shipping.
func ucpBasket(t *testing.T, s *mcp.ClientSession, meta map[string]any) (ucp.Checkout, ucp.Cart) {
	cart := ucpCall[ucp.Cart](t, s, "create_cart", map[string]any{"meta": meta, "cart": map[string]any{"line_items": ucpLine(ucpVariant, 2), "context": map[string]any{"address_country": "US"}}})
	cart = ucpCall[ucp.Cart](t, s, "update_cart", map[string]any{"meta": meta, "id": cart.ID,
		"cart": map[string]any{"line_items": ucpLine(ucpVariant, 3), "discounts": map[string]any{"codes": []string{"WELCOME10"}}}})
	if got := ucpCall[ucp.Cart](t, s, "get_cart", map[string]any{"meta": meta, "id": cart.ID}); got.LineItems[0].Quantity != 3 || totalsByType(got.Totals)["items_discount"] >= 0 {
		t.Errorf("cart after update: %+v", got)
	}
	checkSum(t, "cart", cart.Totals)

	co := ucpCall[ucp.Checkout](t, s, "create_checkout", map[string]any{"meta": meta, "checkout": map[string]any{"cart_id": cart.ID, "line_items": []any{}}})
	if co.Status != "incomplete" || len(co.LineItems) != 1 || co.LineItems[0].Quantity != 3 || co.ContinueURL == "" {
		t.Fatalf("checkout from the cart: %+v", co)
	}
	co = ucpCall[ucp.Checkout](t, s, "update_checkout", map[string]any{"meta": meta, "id": co.ID, "checkout": map[string]any{
		"buyer":       map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"},
		"line_items":  []map[string]any{{"id": co.LineItems[0].ID, "item": map[string]any{"id": ucpVariant}, "quantity": 3}},
		"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}}}})
	if co.Status != "ready_for_complete" || co.Fulfillment == nil || len(co.Fulfillment.Methods[0].Groups) != 1 {
		t.Fatalf("checkout with an address: %+v", co)
	}
	co = ucpCall[ucp.Checkout](t, s, "update_checkout", map[string]any{"meta": meta, "id": co.ID, "checkout": map[string]any{
		"fulfillment": map[string]any{"methods": []map[string]any{{"id": "shipping_1", "groups": []map[string]any{{"id": "package_1", "selected_option_id": "us-express"}}}}}}})
	if co.Status != "ready_for_complete" || co.Fulfillment.Methods[0].Groups[0].SelectedOptionID != "us-express" {
		t.Fatalf("checkout with express shipping: %+v", co)
	}
	checkSum(t, "checkout", co.Totals)
	return co, cart
}

// ucpMCPTotals checks co's totals against a /mcp session of the same cart
// and returns the session's, by type.
func ucpMCPTotals(t *testing.T, url string, co ucp.Checkout) map[string]int64 {
	// The same cart over /mcp prices the same.
	same := session(t, call(t, connect(t, url), "create_checkout_session", map[string]any{
		"items":               []map[string]any{{"id": ucpVariant, "quantity": 3}},
		"buyer":               map[string]any{"email": "ada@example.com", "name": "Ada Lovelace"},
		"fulfillment_address": ucpMCPAddress, "fulfillment_option_id": "us-express", "promo_code": "WELCOME10",
	}))
	want := map[string]int64{}
	for _, x := range same.Totals {
		want[string(x.Type)] = x.Amount
	}
	got := totalsByType(co.Totals)
	if got["total"] != want["total"] || got["subtotal"] != want["items_base_amount"] || got["items_discount"] != -want["items_discount"] ||
		got["fulfillment"] != want["fulfillment"] || got["tax"] != want["tax"] {
		t.Errorf("UCP totals %v, /mcp's %v", got, want)
	}
	return want
}

// ucpPay pays co: refused without a key, declined, 3-D Secure, paid, paid
// again, a key reused with another payload; then gets the order.
func ucpPay(t *testing.T, url string, s *mcp.ClientSession, profile string, co ucp.Checkout, want map[string]int64) {
	meta := ucpMeta(profile, "")
	pay := map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
		"credential": map[string]any{"type": "token", "token": "pm_card_visa"}}}}}
	refused := ucpCall[ucp.ErrorResponse](t, s, "complete_checkout", map[string]any{"meta": meta, "id": co.ID, "checkout": pay})
	if refused.Messages[0].Path != `$.meta["idempotency-key"]` {
		t.Errorf("complete without a key: %+v", refused)
	}
	card := func(token string) map[string]any {
		return map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
			"credential": map[string]any{"type": "token", "token": token}}}}}
	}
	declined := ucpCall[ucp.Checkout](t, s, "complete_checkout", map[string]any{"meta": ucpMeta(profile, "0b6c1a0e-0000-4000-8000-000000000009"), "id": co.ID, "checkout": card("pm_card_visa_chargeDeclined")})
	if declined.Status != "ready_for_complete" || len(declined.Messages) == 0 || declined.Messages[0].Code != "payment_declined" {
		t.Errorf("a declined card: %s %+v", declined.Status, declined.Messages)
	}
	secure := ucpCall[ucp.Checkout](t, s, "complete_checkout", map[string]any{"meta": ucpMeta(profile, "0b6c1a0e-0000-4000-8000-00000000000a"), "id": co.ID, "checkout": card("pm_card_authenticationRequired")})
	if secure.Status != "requires_escalation" || secure.ContinueURL == "" {
		t.Errorf("a card that needs 3-D Secure: %s %q %+v", secure.Status, secure.ContinueURL, secure.Messages)
	}
	done := ucpCall[ucp.Checkout](t, s, "complete_checkout", map[string]any{"meta": ucpMeta(profile, "0b6c1a0e-0000-4000-8000-000000000001"), "id": co.ID, "checkout": pay})
	if done.Status != "completed" || done.Order == nil || done.Order.PermalinkURL == "" {
		t.Fatalf("completed: %+v", done)
	}
	replay := ucpCall[ucp.Checkout](t, s, "complete_checkout", map[string]any{"meta": ucpMeta(profile, "0b6c1a0e-0000-4000-8000-000000000001"), "id": co.ID, "checkout": pay})
	if replay.Order == nil || replay.Order.ID != done.Order.ID || replay.Status != "completed" {
		t.Errorf("the same key again: %+v", replay)
	}
	otherCard := map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
		"credential": map[string]any{"type": "token", "token": "pm_card_mastercard"}}}}}
	status, conflict := ucpPost(t, url, "complete_checkout", map[string]any{"meta": ucpMeta(profile, "0b6c1a0e-0000-4000-8000-000000000001"), "id": co.ID, "checkout": otherCard})
	if status != http.StatusConflict || conflict.Error == nil || conflict.Error.Code != -32000 || !strings.Contains(string(conflict.Error.Data), `"idempotency_conflict"`) {
		t.Errorf("the same key with another card: HTTP %d %+v", status, conflict.Error)
	}
	again := ucpCall[ucp.Checkout](t, s, "complete_checkout", map[string]any{"meta": ucpMeta(profile, "0b6c1a0e-0000-4000-8000-000000000002"), "id": co.ID, "checkout": pay})
	if again.Order == nil || again.Order.ID != done.Order.ID {
		t.Errorf("completed again: %+v, want order %s", again.Order, done.Order.ID)
	}
	order := ucpCall[ucp.Order](t, s, "get_order", map[string]any{"meta": meta, "id": done.Order.ID, "email": " ADA@example.com"})
	if order.CheckoutID != co.ID || order.LineItems[0].Quantity.Total != 3 || totalsByType(order.Totals)["total"] != want["total"] {
		t.Errorf("order: %+v", order)
	}
	_ = ucpCall[ucp.ErrorResponse](t, s, "get_order", map[string]any{"meta": meta, "id": "ord_aaaaaaaaaaaaaaaaaaaaaaaaaa", "email": "ada@example.com"})
	// The order id alone is not enough: /mcp's get_order asks for the email too.
	if e := ucpCall[ucp.ErrorResponse](t, s, "get_order", map[string]any{"meta": meta, "id": done.Order.ID, "email": "mallory@example.com"}); len(e.Messages) == 0 || e.Messages[0].Code != "not_found" {
		t.Errorf("get_order with another email: %+v", e.Messages)
	}
	if e := ucpCall[ucp.ErrorResponse](t, s, "get_order", map[string]any{"meta": meta, "id": done.Order.ID}); len(e.Messages) == 0 || e.Messages[0].Code != "missing" || e.Messages[0].Path != "$.email" {
		t.Errorf("get_order without the email: %+v", e.Messages)
	}
}

// ucpCancel cancels a checkout and the cart, and reads what is gone.
func ucpCancel(t *testing.T, s *mcp.ClientSession, profile string, cart ucp.Cart) {
	meta := ucpMeta(profile, "")
	// Canceling.
	other := ucpCall[ucp.Checkout](t, s, "create_checkout", map[string]any{"meta": meta, "checkout": map[string]any{"line_items": ucpLine(ucpVariant, 1)}})
	canceled := ucpCall[ucp.Checkout](t, s, "cancel_checkout", map[string]any{"meta": ucpMeta(profile, "0b6c1a0e-0000-4000-8000-000000000003"), "id": other.ID})
	if canceled.Status != "canceled" {
		t.Errorf("canceled checkout: %s", canceled.Status)
	}
	if c := ucpCall[ucp.Cart](t, s, "cancel_cart", map[string]any{"meta": ucpMeta(profile, "0b6c1a0e-0000-4000-8000-000000000004"), "id": cart.ID}); c.ID != cart.ID {
		t.Errorf("canceled cart: %+v", c)
	}
	gone := ucpCall[ucp.ErrorResponse](t, s, "get_cart", map[string]any{"meta": meta, "id": cart.ID})
	unknown := ucpCall[ucp.ErrorResponse](t, s, "get_checkout", map[string]any{"meta": meta, "id": "cs_nosuchsession"})
	for _, e := range []ucp.ErrorResponse{gone, unknown} {
		if e.UCP.Status != "error" || e.Messages[0].Code != "not_found" {
			t.Errorf("not found: %+v", e)
		}
	}
	if stale := ucpCall[ucp.ErrorResponse](t, s, "update_checkout", map[string]any{"meta": meta, "id": canceled.ID,
		"checkout": map[string]any{"line_items": ucpLine(ucpVariant, 2)}}); stale.Messages[0].Path != "$.id" {
		t.Errorf("update of a canceled checkout: %+v", stale)
	}
}
