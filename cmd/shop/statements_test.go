package main

import (
	"fmt"
	"testing"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
)

// maxPurchaseStatements is what one purchase flow may cost the database on
// SQLite (docs/architecture.md, "Cost of a purchase").
const maxPurchaseStatements = 20

// TestPurchaseStatements counts, through the operator's metrics, the SQL
// statements and commits of the bench's purchase flow (`shop bench
// --scenario purchase`): a new buyer creates a session of three lines, sends
// the address and the shipping option, and pays with pm_card_visa. The
// flow may run at most maxPurchaseStatements statements.
func TestPurchaseStatements(t *testing.T) {
	shop := startShop(t, dbtest.DSN(t, database.SQLite), nil, "--metrics-addr", "127.0.0.1:0")
	found := metricsLine.FindStringSubmatch(shop.logs.String())
	if found == nil {
		t.Fatalf("no metrics URL in the start line:\n%s", shop.logs.String())
	}
	metrics := found[1]
	s := connect(t, shop.url)
	items := []map[string]any{
		{"id": "enamel-camp-mug-forest-green", "quantity": 2},
		{"id": "stoneware-coffee-mug-16-oz", "quantity": 1},
		{"id": "brass-candle-holder-default", "quantity": 1},
	}
	flow := func(n int) {
		cs := session(t, call(t, s, "create_checkout_session", map[string]any{
			"items": items, "buyer": map[string]any{"name": "Ada Lovelace", "email": fmt.Sprintf("ada-%d@example.com", n)},
		}))
		ready := session(t, call(t, s, "update_checkout_session", map[string]any{
			"checkout_session_id": cs.ID, "fulfillment_address": address, "fulfillment_option_id": "us-standard",
		}))
		if ready.Status != checkout.Ready {
			t.Fatalf("flow %d: not ready: %+v", n, ready.Messages)
		}
		if done := session(t, complete(t, s, cs.ID, "pm_card_visa")); done.Status != checkout.Completed {
			t.Fatalf("flow %d: not completed: %+v", n, done.Messages)
		}
	}
	flow(0) // the caches (policy, profiles, prepared statements) warm
	before := scrape(t, metrics)
	flow(1)
	after := scrape(t, metrics)
	var statements, commits float64
	for _, op := range []string{"create_checkout_session", "update_checkout_session", "complete_checkout"} {
		st := after[`shop_db_statements_total{operation="`+op+`"}`] - before[`shop_db_statements_total{operation="`+op+`"}`]
		co := after[`shop_db_commits_total{operation="`+op+`"}`] - before[`shop_db_commits_total{operation="`+op+`"}`]
		t.Logf("%s: %v statements, %v commits", op, st, co)
		statements, commits = statements+st, commits+co
	}
	t.Logf("the flow: %v statements, %v commits", statements, commits)
	if statements == 0 || statements > maxPurchaseStatements {
		t.Errorf("a purchase flow ran %v statements; at most %d", statements, maxPurchaseStatements)
	}
}
