package main

import (
	"testing"

	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
	"shop/ucp"
)

// storedBytes is what the database holds: SQLite's pages in use, or
// PostgreSQL's tables (their indexes and TOAST too) once VACUUM FULL has dropped the rows' dead
// versions (an update's old row is space reused, not data kept).
func storedBytes(t *testing.T, db *gorm.DB, d database.Dialect) int64 {
	t.Helper()
	var n int64
	if d == database.SQLite {
		var pages, free, size int64
		for q, v := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &size} {
			if err := db.Raw(q).Scan(v).Error; err != nil {
				t.Fatal(err)
			}
		}
		return (pages - free) * size
	}
	if err := db.Exec("VACUUM FULL").Error; err != nil {
		t.Fatal(err)
	}
	err := db.Raw(`SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()`).Scan(&n).Error
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUCPRESTKeysBudget: 200 updates over REST of one large checkout, each
// with a fresh Idempotency-Key, from one address, grow the database by
// under 256 KiB (docs/limits.md): a key keeps the checkout's id, not the
// answer. A replay of the first key still answers the checkout. On SQLite
// and PostgreSQL.
func TestUCPRESTKeysBudget(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) { testUCPRESTKeysBudget(t, d) })
	}
}

func testUCPRESTKeysBudget(t *testing.T, d database.Dialect) {
	dsn := dbtest.DSN(t, d)
	shop := startShop(t, dsn, ucpEnv, "--rate-limit", "-1")
	agents := serveAgentProfiles(t)
	a := restAgent{url: shop.url, profile: agents.URL + "/agent-2026-08-25.json"}
	var lines []map[string]any
	for _, id := range []string{"enamel-camp-mug-forest-green", "enamel-camp-mug-cream", "stoneware-coffee-mug-12-oz", "stoneware-coffee-mug-16-oz",
		"insulated-travel-mug-12-oz-charcoal", "insulated-travel-mug-20-oz-charcoal", "cotton-tea-towels-brick-stripe", "cotton-tea-towels-natural",
		"cast-iron-skillet-8-in", "olive-wood-cutting-board-large", "glass-french-press-350-ml", "cotton-dinner-napkins-oat"} {
		lines = append(lines, ucpLine(id, 1)...)
	}
	long := "Ada Augusta King, Countess of Lovelace, née Byron"
	body := map[string]any{"line_items": lines,
		"buyer":       map[string]any{"first_name": long, "last_name": long, "email": "ada.lovelace.countess@example.com"},
		"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}}}
	co := restDecode[ucp.Checkout](t, a.do(t, "POST", "/checkout-sessions", uuid(t), body), 201, "checkout_response")
	first := uuid(t)
	was := a.do(t, "PUT", "/checkout-sessions/"+co.ID, first, body)
	if was.status != 200 || len(was.body) < 4<<10 {
		t.Fatalf("update: HTTP %d, %d bytes, want 200 and a large checkout", was.status, len(was.body))
	}
	db := openDB(t, dsn)
	before := storedBytes(t, db, d)
	for i := range 200 {
		if r := a.do(t, "PUT", "/checkout-sessions/"+co.ID, uuid(t), body); r.status != 200 {
			t.Fatalf("update %d: HTTP %d %s", i, r.status, r.body)
		}
	}
	grew := storedBytes(t, db, d) - before
	t.Logf("200 updates answering %d bytes each grew the database by %d bytes", len(was.body), grew)
	if grew >= 256<<10 {
		t.Errorf("200 updates with fresh keys grew the database by %d bytes, want under %d", grew, 256<<10)
	}
	again := restDecode[ucp.Checkout](t, a.do(t, "PUT", "/checkout-sessions/"+co.ID, first, body), 200, "checkout_response")
	if again.ID != co.ID || len(again.LineItems) != len(lines) {
		t.Errorf("a replay of the first key: %+v", again)
	}
}
