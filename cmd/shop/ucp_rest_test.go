package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"shop/database"
	"shop/database/dbtest"
	"shop/ucp"
)

// restOpenAPI is the id the tests give rest.openapi.json, so that its
// ../../schemas/… refs resolve to UCP's schema ids.
const restOpenAPI = "https://ucp.dev/services/shopping/rest.openapi.json"

var (
	restCompileOnce sync.Once
	restCompiled    map[string]*sjs.Schema
	restCompileErr  error
)

// restSchema is the compiled schema of the OpenAPI's components.schemas
// entry name (2026-08-25).
func restSchema(t *testing.T, name string) *sjs.Schema {
	t.Helper()
	restCompileOnce.Do(func() {
		c := sjs.NewCompiler()
		c.UseLoader(restLoader{ucpLoader{ucpSpecs["2026-08-25"]}})
		c.AssertFormat()
		restCompiled = map[string]*sjs.Schema{}
		for _, n := range []string{"checkout_response", "cart_response", "order_response", "order", "catalog_search_request", "catalog_search_response",
			"catalog_lookup_request", "catalog_lookup_response", "catalog_get_product_request", "catalog_get_product_response"} {
			s, err := c.Compile(restOpenAPI + "#/components/schemas/" + n)
			if err != nil {
				restCompileErr = fmt.Errorf("%s: %w", n, err)
				return
			}
			restCompiled[n] = s
		}
	})
	if restCompileErr != nil {
		t.Fatal(restCompileErr)
	}
	return restCompiled[name]
}

// restLoader loads the OpenAPI document by restOpenAPI, UCP's schemas as
// ucpLoader does.
type restLoader struct{ ucpLoader }

func (l restLoader) Load(url string) (any, error) {
	if url == restOpenAPI {
		f, err := os.Open(filepath.Join(l.dir, "rest.openapi.json"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return sjs.UnmarshalJSON(f)
	}
	return l.ucpLoader.Load(url)
}

// checkREST validates doc against the OpenAPI's schema name.
func checkREST(t *testing.T, name string, doc []byte) {
	t.Helper()
	v, err := sjs.UnmarshalJSON(bytes.NewReader(doc))
	if err == nil {
		err = restSchema(t, name).Validate(v)
	}
	if err != nil {
		t.Errorf("%s does not follow rest.openapi.json: %v\n%s", name, err, doc)
	}
}

// restAgent calls the shop's REST binding as an agent of profile.
type restAgent struct {
	url, profile string
	// sign, when set, signs each request (its body given) before it goes.
	sign func(r *http.Request, body []byte)
}

// restAnswer is an HTTP answer of the REST binding.
type restAnswer struct {
	status int
	header http.Header
	body   []byte
}

func uuid(t *testing.T) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// do sends one request: the UCP-Agent and Request-Id headers always, the
// Idempotency-Key when key is set.
func (a restAgent) do(t *testing.T, method, path, key string, body any) restAnswer {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, a.url+"/ucp/v1"+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if a.profile != "" {
		req.Header.Set("UCP-Agent", `profile="`+a.profile+`"`)
	}
	rid := uuid(t)
	req.Header.Set("Request-Id", rid)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if a.sign != nil {
		a.sign(req, raw)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Request-Id") != rid {
		t.Errorf("%s %s: Request-Id %q echoed as %q", method, path, rid, resp.Header.Get("Request-Id"))
	}
	return restAnswer{resp.StatusCode, resp.Header, b}
}

// restDecode decodes an answer of status want, checked against the OpenAPI's
// schema name (and, for checkouts and carts, the release's schemas with the
// extensions the shop implements).
func restDecode[T any](t *testing.T, r restAnswer, want int, schema string) T {
	t.Helper()
	if r.status != want {
		t.Fatalf("HTTP %d, want %d: %s", r.status, want, r.body)
	}
	checkREST(t, schema, r.body)
	switch schema {
	case "checkout_response":
		checkUCP(t, "checkout", r.body)
	case "cart_response":
		checkUCP(t, "cart", r.body)
	}
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// protocolCode is the code of a protocol error answer.
func protocolCode(t *testing.T, r restAnswer, status int) string {
	t.Helper()
	var e struct{ Code, Content string }
	if err := json.Unmarshal(r.body, &e); err != nil || r.status != status || e.Content == "" {
		t.Errorf("HTTP %d %s, want %d and {code, content}", r.status, r.body, status)
	}
	return e.Code
}

// TestUCPREST buys over UCP's REST binding through every operation, each
// answer checked against rest.openapi.json, on SQLite and PostgreSQL.
func TestUCPREST(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) { testUCPREST(t, d) })
	}
}

func testUCPREST(t *testing.T, d database.Dialect) {
	dsn := dbtest.DSN(t, d)
	env := map[string]string{"SHOP_UCP_TEST_ALLOW_LOOPBACK": "true", "SHOP_ADMIN_TOKENS": "owner:" + ownerToken}
	shop := startShop(t, dsn, env)
	agents := serveAgentProfiles(t)
	a := restAgent{url: shop.url, profile: agents.URL + "/agent-2026-08-25.json"}

	for _, req := range []struct {
		path, schema string
		body         map[string]any
	}{
		{"/catalog/search", "catalog_search", map[string]any{"query": "mug"}},
		{"/catalog/lookup", "catalog_lookup", map[string]any{"ids": []string{ucpVariant}}},
		{"/catalog/product", "catalog_get_product", map[string]any{"id": ucpVariant}},
	} {
		b, _ := json.Marshal(req.body)
		checkREST(t, req.schema+"_request", b)
		r := a.do(t, "POST", req.path, "", req.body)
		_ = restDecode[map[string]any](t, r, 200, req.schema+"_response")
	}

	cart := restDecode[ucp.Cart](t, a.do(t, "POST", "/carts", uuid(t), map[string]any{"line_items": ucpLine(ucpVariant, 2)}), 201, "cart_response")
	cart = restDecode[ucp.Cart](t, a.do(t, "PUT", "/carts/"+cart.ID, uuid(t), map[string]any{"line_items": ucpLine(ucpVariant, 3)}), 200, "cart_response")
	if got := restDecode[ucp.Cart](t, a.do(t, "GET", "/carts/"+cart.ID, "", nil), 200, "cart_response"); got.LineItems[0].Quantity != 3 {
		t.Errorf("cart after update: %+v", got)
	}
	co := restDecode[ucp.Checkout](t, a.do(t, "POST", "/checkout-sessions", uuid(t), map[string]any{"cart_id": cart.ID, "line_items": []any{}}), 201, "checkout_response")
	update := map[string]any{
		"buyer":       map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"},
		"line_items":  []map[string]any{{"id": co.LineItems[0].ID, "item": map[string]any{"id": ucpVariant}, "quantity": 3}},
		"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}},
	}
	key := uuid(t)
	first := a.do(t, "PUT", "/checkout-sessions/"+co.ID, key, update)
	co = restDecode[ucp.Checkout](t, first, 200, "checkout_response")
	if co.Status != "ready_for_complete" {
		t.Fatalf("checkout with an address: %+v", co)
	}
	// The same key and body: the first answer again. Another body: 409.
	if replay := a.do(t, "PUT", "/checkout-sessions/"+co.ID, key, update); replay.status != 200 || !bytes.Equal(replay.body, first.body) {
		t.Errorf("replay: HTTP %d, the same answer %v", replay.status, bytes.Equal(replay.body, first.body))
	}
	update["buyer"] = map[string]any{"email": "mallory@example.com"}
	if code := protocolCode(t, a.do(t, "PUT", "/checkout-sessions/"+co.ID, key, update), 409); code != "idempotency_conflict" {
		t.Errorf("the same key with another body: %s", code)
	}
	if got := restDecode[ucp.Checkout](t, a.do(t, "GET", "/checkout-sessions/"+co.ID, "", nil), 200, "checkout_response"); got.Buyer.Email != "ada@example.com" {
		t.Errorf("the refused update changed the checkout: %+v", got.Buyer)
	}

	// Headers the binding requires.
	if code := protocolCode(t, a.do(t, "PUT", "/checkout-sessions/"+co.ID, "", update), 400); code != "invalid_request" {
		t.Errorf("no Idempotency-Key: %s", code)
	}
	if code := protocolCode(t, restAgent{url: shop.url}.do(t, "GET", "/checkout-sessions/"+co.ID, "", nil), 400); code != "invalid_profile_url" {
		t.Errorf("no UCP-Agent: %s", code)
	}
	if code := protocolCode(t, restAgent{url: shop.url, profile: agents.URL + "/old.json"}.do(t, "GET", "/checkout-sessions/"+co.ID, "", nil), 422); code != "version_unsupported" {
		t.Errorf("an agent of another release: %s", code)
	}
	_ = protocolCode(t, a.do(t, "GET", "/nothing-here", "", nil), 404)

	order := restPay(t, a, co)
	if got := restDecode[ucp.Order](t, a.do(t, "GET", "/orders/"+order+"?email=ADA@example.com", "", nil), 200, "order_response"); got.ID != order || got.CheckoutID != co.ID {
		t.Errorf("order: %+v", got)
	}
	_ = restDecode[ucp.ErrorResponse](t, a.do(t, "GET", "/orders/"+order+"?email=mallory@example.com", "", nil), 200, "order_response")
	_ = restDecode[ucp.Cart](t, a.do(t, "POST", "/carts/"+cart.ID+"/cancel", uuid(t), nil), 200, "cart_response")

	// The order paid over REST is the staff's as any other.
	staff := connectAdmin(t, shop.url, ownerToken)
	list := structured[struct {
		Orders []struct{ ID, Channel string } `json:"orders"`
	}](t, call(t, staff, "list_orders", map[string]any{"limit": 100}))
	found := false
	for _, o := range list.Orders {
		found = found || o.ID == order && o.Channel == "ucp"
	}
	if !found {
		t.Errorf("list_orders %+v: no order %s of channel ucp", list.Orders, order)
	}

	// A key the store cannot keep is 503, not a call run without its key.
	db, err := database.Open(t.Context(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	if err := db.Exec("DROP TABLE idempotency_keys").Error; err != nil {
		t.Fatal(err)
	}
	if code := protocolCode(t, a.do(t, "POST", "/carts", uuid(t), map[string]any{"line_items": ucpLine(ucpVariant, 1)}), 503); code != "storage_unavailable" {
		t.Errorf("the store failing: %s", code)
	}
}

// restPay completes co from several agents' retries at once, each with its
// own Idempotency-Key: one order, which every completed answer names.
func restPay(t *testing.T, a restAgent, co ucp.Checkout) string {
	t.Helper()
	pay := map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
		"credential": map[string]any{"type": "token", "token": "pm_card_visa"}}}}}
	const n = 6
	answers := make([]restAnswer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i] = a.do(t, "POST", "/checkout-sessions/"+co.ID+"/complete", uuid(t), pay) })
	}
	wg.Wait()
	orders := map[string]bool{}
	for _, r := range answers {
		if r.status != 200 {
			t.Errorf("complete: HTTP %d %s", r.status, r.body)
			continue
		}
		checkREST(t, "checkout_response", r.body)
		var c ucp.Checkout
		_ = json.Unmarshal(r.body, &c)
		if c.Order != nil {
			orders[c.Order.ID] = true
		}
	}
	if len(orders) != 1 {
		t.Fatalf("%d orders from %d concurrent completes: %v", len(orders), n, orders)
	}
	for id := range orders {
		return id
	}
	return ""
}
