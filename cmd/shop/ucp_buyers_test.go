package main

import (
	"fmt"
	"testing"

	"shop/database"
	"shop/database/dbtest"
	"shop/ucp"
)

// TestUCPAgentBuyers: an agent platform's shoppers, all from one address,
// are each a buyer of their own (the agent's profile and their email), so
// its sixth concurrent shopper holds a checkout like the first five
// (the policy allows five open sessions per buyer).
func TestUCPAgentBuyers(t *testing.T) {
	dsn := dbtest.DSN(t, database.SQLite)
	shop := startShop(t, dsn, ucpEnv)
	agents := serveAgentProfiles(t)
	s := connectUCP(t, shop.url)
	meta := ucpMeta(agents.URL+"/agent.json", "")
	for i := range 7 {
		co := ucpCall[ucp.Checkout](t, s, "create_checkout", map[string]any{"meta": meta, "checkout": map[string]any{
			"line_items":  ucpLine(ucpVariant, 1),
			"buyer":       map[string]any{"first_name": "Shopper", "last_name": fmt.Sprint(i), "email": fmt.Sprintf("shopper%d@example.com", i)},
			"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}}}})
		if co.Status != "ready_for_complete" {
			t.Errorf("shopper %d of one agent: %s %+v", i+1, co.Status, co.Messages)
		}
	}
	db := openDB(t, dsn)
	var keys int64
	if err := db.Raw("SELECT COUNT(DISTINCT buyer_key) FROM checkout_sessions WHERE buyer_key LIKE 'agent:%'").Scan(&keys).Error; err != nil {
		t.Fatal(err)
	}
	if keys != 7 {
		t.Errorf("%d agent buyer keys for 7 shoppers, want 7", keys)
	}
}
