package main

import (
	"testing"

	"shop/database"
	"shop/database/dbtest"
	"shop/idempotency"
	"shop/ucp"
)

// TestUCPRESTOneKey: each state change over UCP's REST binding keeps one
// idempotency record, the REST layer's (scope ucp-rest|…), and none of
// /ucp/mcp's tools (ucp|…), which a call run through the MCP tool layer
// would add; a replay keeps none. On SQLite and PostgreSQL.
func TestUCPRESTOneKey(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) { testUCPRESTOneKey(t, d) })
	}
}

func testUCPRESTOneKey(t *testing.T, d database.Dialect) {
	dsn := dbtest.DSN(t, d)
	shop := startShop(t, dsn, map[string]string{"SHOP_UCP_TEST_ALLOW_LOOPBACK": "true"})
	agents := serveAgentProfiles(t)
	a := restAgent{url: shop.url, profile: agents.URL + "/agent-2026-08-25.json"}
	db, err := database.Open(t.Context(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	kept, rest := 0, map[string]bool{} // the records so far; REST's scopes, hashed as stored
	once := func(what, pattern string, r restAnswer) restAnswer {
		t.Helper()
		if pattern != "" {
			kept++
			rest[idempotency.ScopeHash("ucp-rest|"+a.profile+"|"+pattern)] = true
		}
		var scopes []string
		if err := db.Table("idempotency_keys").Pluck("scope", &scopes).Error; err != nil {
			t.Fatal(err)
		}
		if len(scopes) != kept {
			t.Errorf("%s (HTTP %d): %d idempotency records in all, want %d", what, r.status, len(scopes), kept)
			kept = len(scopes)
		}
		for _, s := range scopes {
			if !rest[s] {
				t.Errorf("%s: a record of another layer than REST's (scope hash %s)", what, s)
				rest[s] = true
			}
		}
		return r
	}

	cart := restDecode[ucp.Cart](t, once("create cart", "POST /carts", a.do(t, "POST", "/carts", uuid(t), map[string]any{"line_items": ucpLine(ucpVariant, 2)})), 201, "cart_response")
	once("update cart", "PUT /carts/{id}", a.do(t, "PUT", "/carts/"+cart.ID, uuid(t), map[string]any{"line_items": ucpLine(ucpVariant, 1)}))
	co := restDecode[ucp.Checkout](t, once("create checkout", "POST /checkout-sessions", a.do(t, "POST", "/checkout-sessions", uuid(t), map[string]any{"cart_id": cart.ID, "line_items": []any{}})), 201, "checkout_response")
	update := map[string]any{
		"buyer":       map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"},
		"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}},
	}
	key := uuid(t)
	once("update checkout", "PUT /checkout-sessions/{id}", a.do(t, "PUT", "/checkout-sessions/"+co.ID, key, update))
	once("the update replayed", "", a.do(t, "PUT", "/checkout-sessions/"+co.ID, key, update))
	once("get checkout", "", a.do(t, "GET", "/checkout-sessions/"+co.ID, "", nil))
	pay := map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
		"credential": map[string]any{"type": "token", "token": "pm_card_visa"}}}}}
	done := restDecode[ucp.Checkout](t, once("complete", "POST /checkout-sessions/{id}/complete", a.do(t, "POST", "/checkout-sessions/"+co.ID+"/complete", uuid(t), pay)), 200, "checkout_response")
	if done.Status != "completed" {
		t.Errorf("complete: %s", done.Status)
	}
	other := restDecode[ucp.Checkout](t, once("create checkout", "POST /checkout-sessions", a.do(t, "POST", "/checkout-sessions", uuid(t), map[string]any{"line_items": ucpLine(ucpVariant, 1)})), 201, "checkout_response")
	once("cancel checkout", "POST /checkout-sessions/{id}/cancel", a.do(t, "POST", "/checkout-sessions/"+other.ID+"/cancel", uuid(t), nil))
	once("cancel cart", "POST /carts/{id}/cancel", a.do(t, "POST", "/carts/"+cart.ID+"/cancel", uuid(t), nil))
}
