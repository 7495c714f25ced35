package main

import (
	"testing"

	"shop/database"
	"shop/database/dbtest"
	"shop/ucp"
)

// TestUCPUpdateInProgress: an update_checkout while the checkout is
// complete_in_progress (its payment under way) changes nothing; UCP
// 2026-08-25 answers the checkout, unchanged, with a recoverable error
// message, 2026-04-08 an error response, each valid in its release.
func TestUCPUpdateInProgress(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			shop := startShop(t, dsn, ucpEnv)
			agents := serveAgentProfiles(t)
			s := connectUCP(t, shop.url)
			db, err := database.Open(t.Context(), dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer database.Close(db)
			for _, agent := range []string{"/agent-2026-08-25.json", "/agent.json"} {
				meta := ucpMeta(agents.URL+agent, "")
				co, _ := ucpBasket(t, s, meta)
				// A payment under way, as complete_checkout leaves it until the
				// provider answers (a new version of the row, as every change).
				if err := db.Exec("UPDATE checkout_sessions SET status = 'in_progress', version = version + 1 WHERE id = ?", co.ID).Error; err != nil {
					t.Fatal(err)
				}
				update := map[string]any{"meta": meta, "id": co.ID, "checkout": map[string]any{
					"line_items": []map[string]any{{"id": co.LineItems[0].ID, "item": map[string]any{"id": ucpVariant}, "quantity": 1}}}}
				if agent == "/agent.json" {
					e := ucpCall[ucp.ErrorResponse](t, s, "update_checkout", update)
					if e.UCP.Version != "2026-04-08" || len(e.Messages) == 0 || e.Messages[0].Type != "error" {
						t.Errorf("2026-04-08: %+v, want an error response", e)
					}
				} else {
					got := ucpCall[ucp.Checkout](t, s, "update_checkout", update)
					if got.UCP.Version != "2026-08-25" || got.Status != "complete_in_progress" || got.LineItems[0].Quantity != 3 ||
						len(got.Messages) == 0 || got.Messages[len(got.Messages)-1].Type != "error" || got.Messages[len(got.Messages)-1].Severity != "recoverable" {
						t.Errorf("2026-08-25: %s %+v %+v, want the unchanged checkout with a recoverable error", got.Status, got.LineItems, got.Messages)
					}
				}
				if now := ucpCall[ucp.Checkout](t, s, "get_checkout", map[string]any{"meta": meta, "id": co.ID}); now.LineItems[0].Quantity != 3 || now.Status != "complete_in_progress" {
					t.Errorf("%s: the checkout changed: %s %+v", agent, now.Status, now.LineItems)
				}
			}
		})
	}
}
