package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/idempotency"
	"shop/payments/stripetest"
)

// testACPExamples sends the binding's own example requests
// (examples.mcp.agentic_checkout.json) as they are, with the demo
// catalog's variant for item_123 and the created session's id for
// checkout_session_123. Two of them do not follow the schema they name
// (update's selected option nests its option_id under "shipping";
// complete's instrument has a token but neither type nor credential): the
// shop validates inputs against the schema, as the binding requires, and
// answers them invalid_request naming the field.
func testACPExamples(t *testing.T, s *acpShop) {
	raw, err := shop.Specs.ReadFile("testdata/acp/examples.mcp.agentic_checkout.json")
	if err != nil {
		t.Fatal(err)
	}
	var examples map[string]json.RawMessage
	if err := json.Unmarshal(raw, &examples); err != nil {
		t.Fatal(err)
	}
	// Their error answers follow the Error schema, as ours are checked to.
	for _, name := range []string{"error_invalid_request", "error_payment_declined"} {
		var ex struct {
			Error rpcError `json:"error"`
		}
		_ = json.Unmarshal(examples[name], &ex)
		validACP(t, "Error", ex.Error.Data)
	}
	id := ""
	send := func(name string) acpAnswer {
		body := strings.ReplaceAll(string(examples[name]), `"item_123"`, `"stoneware-coffee-mug-16-oz"`)
		if id != "" {
			body = strings.ReplaceAll(body, `"checkout_session_123"`, `"`+id+`"`)
		}
		return s.agent.post(t, []byte(body))
	}
	created := send("create_checkout_session_request").session(t)
	id = created.ID
	if len(created.LineItems) != 1 || created.LineItems[0].Quantity != 1 {
		t.Errorf("created from the example: %+v", created.LineItems)
	}
	if got := send("get_checkout_session_request").session(t); got.ID != id {
		t.Errorf("get: %s", got.ID)
	}
	if e := send("update_checkout_session_request").acpErr(t); e.Type != "invalid_request" || !strings.HasPrefix(e.Param, "$.payload.selected_fulfillment_options[0]") {
		t.Errorf("update example: %+v", e)
	}
	if e := send("complete_checkout_session_request").acpErr(t); e.Type != "invalid_request" || !strings.HasPrefix(e.Param, "$.payload.payment_data") {
		t.Errorf("complete example: %+v", e)
	}
	if got := send("cancel_checkout_session_request").session(t); got.Status != "canceled" {
		t.Errorf("cancel example: %s", got.Status)
	}
}

// testACPIdempotency checks each rule of the RFC's §6 over /acp/mcp.
func testACPIdempotency(t *testing.T, s *acpShop) {
	sessions := func() int64 { return s.count(t, "SELECT COUNT(*) FROM checkout_sessions") }
	key := newKey(t, "create")
	payload := shippable("stoneware-coffee-mug-12-oz", 1)
	before := sessions()
	first := s.agent.call(t, "create_checkout_session", acpArgs(key, "", payload)).session(t)
	// The same payload written otherwise (key order, 1.0 for 1) is the same request.
	same := shippable("stoneware-coffee-mug-12-oz", 1.0)
	again := s.agent.call(t, "create_checkout_session", acpArgs(key, "", same)).session(t)
	if again.ID != first.ID || sessions() != before+1 {
		t.Errorf("replay made session %s (first %s); %d sessions made, want 1", again.ID, first.ID, sessions()-before)
	}
	t.Run("Conflict", func(t *testing.T) {
		e := s.agent.call(t, "create_checkout_session", acpArgs(key, "", shippable("stoneware-coffee-mug-12-oz", 2))).acpErr(t)
		if e.Type != "invalid_request" || e.Code != "idempotency_conflict" {
			t.Errorf("same key, other payload: %+v", e)
		}
	})
	t.Run("ScopedByAgent", func(t *testing.T) {
		other := acpClient{url: s.url, token: acpOtherToken}
		theirs := other.call(t, "create_checkout_session", acpArgs(key, "", payload)).session(t)
		if theirs.ID == first.ID {
			t.Errorf("another agent's key %s replayed agent-one's session", key)
		}
	})
	t.Run("ScopedByTool", func(t *testing.T) {
		upd := s.agent.call(t, "update_checkout_session", acpArgs(key, first.ID, map[string]any{"buyer": map[string]any{"email": "ada@example.com", "first_name": "Ada"}})).session(t)
		if upd.ID != first.ID {
			t.Errorf("update with create's key: %s", upd.ID)
		}
	})
	t.Run("InTheDatabase", func(t *testing.T) {
		n := s.count(t, "SELECT COUNT(*) FROM idempotency_keys WHERE scope = ? AND idem_key = ? AND state = 'done'",
			idempotency.ScopeHash("acp|agent-one|create_checkout_session|"), key)
		if n != 1 {
			t.Errorf("%d stored answers for the key, want 1", n)
		}
	})
	t.Run("ProcessingErrorsNotStored", func(t *testing.T) { testACPNotStored(t, s) })
	t.Run("MalformedNotStored", func(t *testing.T) {
		k := newKey(t, "bad")
		for range 2 {
			e := s.agent.call(t, "update_checkout_session", acpArgs(k, "cs_no_such_session", map[string]any{"buyer": map[string]any{"email": "ada@example.com"}})).acpErr(t)
			if e.Code != "session_not_found" {
				t.Errorf("update of no session: %+v", e)
			}
		}
		n := s.count(t, "SELECT COUNT(*) FROM idempotency_keys WHERE idem_key = ?", k)
		if n != 0 {
			t.Errorf("%d stored answers for a malformed request's key, want none", n)
		}
	})
	t.Run("KeyTooLong", func(t *testing.T) {
		e := s.agent.call(t, "create_checkout_session", acpArgs(strings.Repeat("k", 256), "", payload)).acpErr(t)
		if e.Param != "$.meta.idempotency_key" {
			t.Errorf("256-character key: %+v", e)
		}
	})
}

// testACPNotStored: a declined payment keeps nothing under its key, which
// then pays with another card; the paid key replays the order.
func testACPNotStored(t *testing.T, s *acpShop) {
	cs := s.ready(t, "stoneware-coffee-mug-12-oz", 1)
	k := newKey(t, "complete")
	attempts := func() int64 { return s.count(t, "SELECT COUNT(*) FROM payment_attempts WHERE session_id = ?", cs.ID) }
	for i := range 2 {
		if e := s.agent.call(t, "complete_checkout_session", acpArgs(k, cs.ID, pay("pm_card_visa_chargeDeclined"))).acpErr(t); e.Code != "payment_declined" {
			t.Fatalf("try %d: %+v", i, e)
		}
	}
	if n := attempts(); n != 2 {
		t.Errorf("%d payment attempts after two declined tries with one key, want 2 (a decline is not kept)", n)
	}
	// The key is free: another card with it pays.
	paid := s.agent.call(t, "complete_checkout_session", acpArgs(k, cs.ID, pay("pm_card_visa"))).session(t)
	if paid.Order == nil {
		t.Fatal("no order")
	}
	replay := s.agent.call(t, "complete_checkout_session", acpArgs(k, cs.ID, pay("pm_card_visa"))).session(t)
	if replay.Order == nil || replay.Order.ID != paid.Order.ID || attempts() != 3 {
		t.Errorf("replay of the payment: %+v, %d attempts", replay.Order, attempts())
	}
	if e := s.agent.call(t, "complete_checkout_session", acpArgs(k, cs.ID, pay("pm_card_visa_chargeDeclined"))).acpErr(t); e.Code != "idempotency_conflict" {
		t.Errorf("the paid key with another card: %+v", e)
	}
}

// testACPConcurrentComplete: 16 agents' calls complete one session at once
// over /acp/mcp, each with a key of its own, then 16 with one key: one
// order and one charge each time.
func testACPConcurrentComplete(t *testing.T, s *acpShop) {
	for _, sameKey := range []bool{false, true} {
		cs := s.ready(t, "insulated-travel-mug-12-oz-charcoal", 1)
		shared := newKey(t, "shared")
		answers := make([]acpAnswer, 16)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() {
				k := shared
				if !sameKey {
					k = newKey(t, "c") + string(rune('a'+i))
				}
				answers[i] = s.agent.call(t, "complete_checkout_session", acpArgs(k, cs.ID, pay("pm_card_visa")))
			})
		}
		wg.Wait()
		orders := map[string]bool{}
		waits := 0
		for _, a := range answers {
			if a.Error != nil {
				e := a.acpErr(t)
				if e.Code != "payment_in_progress" && e.Code != "idempotency_in_flight" {
					t.Errorf("concurrent complete: %+v", e)
				}
				waits++
				continue
			}
			orders[a.session(t).Order.ID] = true
		}
		charges := s.count(t, `SELECT COUNT(*) FROM sandbox_charges c JOIN payment_attempts a ON a.idempotency_key = c.idempotency_key
			WHERE a.session_id = ? AND c.status = 'succeeded'`, cs.ID)
		n := s.count(t, "SELECT COUNT(*) FROM orders WHERE checkout_session_id = ?", cs.ID)
		if len(orders) != 1 || n != 1 || charges != 1 {
			t.Errorf("same key %v: answers name orders %v; %d orders, %d charges; want one of each", sameKey, orders, n, charges)
		}
		t.Logf("same key %v: %d answers with the order, %d told to wait", sameKey, 16-waits, waits)
	}
}

// testACPSameStock: a unit held by a session over /acp/mcp cannot be bought
// over /mcp until the ACP session lets it go.
func testACPSameStock(t *testing.T, s *acpShop) {
	const variant = "insulated-travel-mug-12-oz-harbour-blue"
	if err := s.db.Exec("UPDATE variants SET stock = 1 WHERE id = ?", variant).Error; err != nil {
		t.Fatal(err)
	}
	held := s.ready(t, variant, 1)
	buyer := connect(t, s.url)
	address := map[string]any{"name": "Bo Buyer", "line_one": "2 Main St", "city": "Austin", "state": "TX", "country": "US", "postal_code": "78701"}
	res := call(t, buyer, "create_checkout_session", map[string]any{
		"items": []map[string]any{{"id": variant, "quantity": 1}}, "fulfillment_address": address,
		"buyer": map[string]any{"email": "bo@example.com"},
	})
	other := structured[checkout.Session](t, res)
	if other.Status != checkout.NotReady || !hasCode(other.Messages, "out_of_stock") {
		t.Errorf("/mcp session for the unit ACP holds: %s %+v", other.Status, other.Messages)
	}
	s.agent.call(t, "cancel_checkout_session", acpArgs(newKey(t, "cancel"), held.ID, nil)).session(t)
	res = call(t, buyer, "update_checkout_session", map[string]any{"checkout_session_id": other.ID, "items": []map[string]any{{"id": variant, "quantity": 1}}})
	if got := structured[checkout.Session](t, res); got.Status != checkout.Ready {
		t.Errorf("/mcp session after the ACP one was canceled: %s %+v", got.Status, got.Messages)
	}
}

// testACPAdmin: the staff's tools list the order paid over ACP like any
// other, with its channel.
func testACPAdmin(t *testing.T, s *acpShop) {
	cs := s.ready(t, "enamel-camp-mug-cream", 1)
	paid := s.agent.call(t, "complete_checkout_session", acpArgs(newKey(t, "pay"), cs.ID, pay("pm_card_visa"))).session(t)
	staff := connectAdmin(t, s.url, ownerToken)
	list := structured[struct {
		Orders []struct{ ID, Channel string } `json:"orders"`
	}](t, call(t, staff, "list_orders", map[string]any{"limit": 100}))
	found := false
	for _, o := range list.Orders {
		if o.ID == paid.Order.ID {
			found = o.Channel == "acp"
		}
	}
	if !found {
		t.Errorf("list_orders %+v: no order %s with channel acp", list.Orders, paid.Order.ID)
	}
	detail := structured[struct {
		Order struct{ ID, Channel string } `json:"order"`
	}](t, call(t, staff, "get_order", map[string]any{"order_id": paid.Order.ID}))
	if detail.Order.Channel != "acp" {
		t.Errorf("get_order channel %q, want acp", detail.Order.Channel)
	}
}

// testACPAuth: with SHOP_ACP_TOKENS set, an agent needs its bearer token.
func testACPAuth(t *testing.T, s *acpShop) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	for _, token := range []string{"", "not-an-agent-token-0123456789"} {
		a := acpClient{url: s.url, token: token}.post(t, body)
		if a.Status != http.StatusUnauthorized {
			t.Errorf("token %q: HTTP %d, want 401", token, a.Status)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, s.url+"/acp/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("401 without WWW-Authenticate: %v", res.Header)
	}
	if a := (acpClient{url: s.url, token: acpOtherToken}).post(t, body); a.Status != http.StatusOK || a.Error != nil {
		t.Errorf("agent-two: %d %+v", a.Status, a.Error)
	}
}

// testACPClient: an MCP client (go-sdk's, with its initialize handshake)
// lists the five tools, buys, and reads an ACP error from the JSON-RPC
// error it gets.
func testACPClient(t *testing.T, s *acpShop) {
	client := mcp.NewClient(&mcp.Implementation{Name: "acp-agent-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/acp/mcp",
		HTTPClient: &http.Client{Transport: bearer{acpAgentToken}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 5 {
		t.Fatalf("tools/list: %v, %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_checkout_session", Arguments: acpArgs("", "", shippable("enamel-camp-mug-cream", 1))})
	if err != nil || res.IsError {
		t.Fatalf("create: %v %v", res, err)
	}
	created := structured[acpSession](t, res)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "complete_checkout_session", Arguments: acpArgs(newKey(t, "pay"), created.ID, pay("pm_card_visa"))})
	if err != nil || structured[acpSession](t, res).Order == nil {
		t.Fatalf("complete: %v %v", res, err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_checkout_session", Arguments: map[string]any{"meta": map[string]any{"api_version": "2099-01-01"}, "id": created.ID}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != -32000 {
		t.Fatalf("unknown version: %v, want a -32000 JSON-RPC error", err)
	}
	validACP(t, "Error", wire.Data)
}

// TestACPSharedPaymentToken: with a Stripe key (the shop's Stripe
// emulator), card_spt pays with a shared payment token through the same
// charge as complete_checkout, and refuses a credential of another type.
func TestACPSharedPaymentToken(t *testing.T) {
	stripe := stripetest.New(t)
	dsn := dbtest.DSN(t, database.SQLite)
	r := startShop(t, dsn, map[string]string{"STRIPE_SECRET_KEY": stripetest.SecretKey, "STRIPE_API_BASE": stripe.URL}, "--acp-open")
	c := acpClient{url: r.url}
	cs := c.call(t, "create_checkout_session", acpArgs("", "", shippable("enamel-camp-mug-cream", 1))).session(t)
	spt := func(credType string) map[string]any {
		return map[string]any{"payment_data": map[string]any{"handler_id": "card_spt",
			"instrument": map[string]any{"type": "card", "credential": map[string]any{"type": credType, "token": "spt_1RgaZcB7WZ01zgkWN1pyM2rT"}}}}
	}
	if e := c.call(t, "complete_checkout_session", acpArgs("", cs.ID, spt("card"))).acpErr(t); e.Param != "$.payload.payment_data.instrument.credential.type" {
		t.Errorf("credential type card: %+v", e)
	}
	done := c.call(t, "complete_checkout_session", acpArgs(newKey(t, "pay"), cs.ID, spt("spt"))).session(t)
	if done.Order == nil {
		t.Fatalf("no order: %+v", done)
	}
	db, err := database.Open(t.Context(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	var provider string
	if err := db.Raw("SELECT provider FROM payment_attempts WHERE session_id = ? AND status = 'succeeded'", cs.ID).Scan(&provider).Error; err != nil || provider != "stripe" {
		t.Errorf("the paying attempt's provider: %q, %v; want stripe", provider, err)
	}
}
