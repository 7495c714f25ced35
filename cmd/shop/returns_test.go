package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"shop/database"
	"shop/database/dbtest"
	"shop/ucp"
)

// TestReturnWebhook: a buyer returns part of an order an agent placed
// through UCP; the agent's order webhook carries the return as an
// adjustment, pending when requested and completed once staff accept it
// and it is refunded, each body valid against UCP's order schema, with the
// return policy. On SQLite and PostgreSQL.
func TestReturnWebhook(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) { testReturnWebhook(t, d) })
	}
}

func testReturnWebhook(t *testing.T, d database.Dialect) {
	platform := serveHookPlatform(t)
	agents := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.ReplaceAll(agentProfileJSON, "2026-04-08", "2026-08-25")
		w.Write([]byte(strings.Replace(p, `"dev.ucp.shopping.order": [{"version": "2026-08-25"}]`,
			`"dev.ucp.shopping.order": [{"version": "2026-08-25", "config": {"webhook_url": "`+platform.URL+`/hooks"}}]`, 1)))
	}))
	t.Cleanup(agents.Close)
	env := map[string]string{"SHOP_UCP_TEST_ALLOW_LOOPBACK": "true", "SHOP_ADMIN_TOKENS": "owner:" + ownerToken}
	shop := startShop(t, dbtest.DSN(t, d), env, "--webhook-backoff", "300ms")
	s := connectUCP(t, shop.url)
	admin := connectAdmin(t, shop.url, ownerToken)
	buyer := connect(t, shop.url)
	profile := agents.URL + "/agent.json"
	co, _ := ucpBasket(t, s, ucpMeta(profile, ""))
	pay := map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
		"credential": map[string]any{"type": "token", "token": "pm_card_visa"}}}}}
	done := ucpCall[ucp.Checkout](t, s, "complete_checkout", map[string]any{"meta": ucpMeta(profile, "0b6c1a0e-0000-4000-8000-0000000000c1"), "id": co.ID, "checkout": pay})
	if done.Order == nil {
		t.Fatalf("complete_checkout: %+v", done)
	}
	id := done.Order.ID
	if res := call(t, admin, "fulfill_order", map[string]any{"order_id": id, "carrier": "USPS", "tracking_number": "9400"}); res.IsError {
		t.Fatalf("fulfill_order: %s", resultText(res))
	}
	platform.taken(t, "/hooks", 2) // created, fulfilled

	order := structured[struct {
		Order struct {
			LineItems []struct{ ID string } `json:"line_items"`
		}
	}](t, call(t, buyer, "get_order", map[string]any{"order_id": id, "email": "ada@example.com"}))
	res := call(t, buyer, "request_return", map[string]any{"order_id": id, "email": "ada@example.com", "reason": "damaged",
		"lines": []map[string]any{{"line_item_id": order.Order.LineItems[0].ID, "quantity": 1}}})
	if res.IsError {
		t.Fatalf("request_return: %s", resultText(res))
	}
	ret := structured[struct {
		Return struct {
			ID           string
			RefundAmount int64 `json:"refund_amount"`
		}
	}](t, res).Return
	adjustment := func(dl hookDelivery, status string) {
		t.Helper()
		checkREST(t, "order", dl.body)
		var o ucp.Order
		if err := json.Unmarshal(dl.body, &o); err != nil || len(o.Adjustments) != 1 {
			t.Fatalf("webhook body (err %v): %s", err, dl.body)
		}
		a := o.Adjustments[0]
		if a.ID != ret.ID || a.Type != "return" || a.Status != status || a.Totals[0].Amount != -ret.RefundAmount || a.LineItems[0].Quantity != -1 {
			t.Errorf("adjustment %+v, want return %s %s of %d", a, ret.ID, status, ret.RefundAmount)
		}
		if len(o.Policies) != 1 || !strings.Contains(o.Policies[0].Description.Plain, "30 days") {
			t.Errorf("order policies %+v, want the return policy", o.Policies)
		}
	}
	adjustment(platform.taken(t, "/hooks", 3)[2], "pending")

	prev := call(t, admin, "accept_return", map[string]any{"return_id": ret.ID})
	if prev.IsError {
		t.Fatalf("accept_return preview: %s", resultText(prev))
	}
	if res := call(t, admin, "accept_return", map[string]any{"return_id": ret.ID, "confirm": structured[struct{ Confirm string }](t, prev).Confirm}); res.IsError {
		t.Fatalf("accept_return: %s", resultText(res))
	}
	got := platform.taken(t, "/hooks", 5) // the refund and the return refunded
	adjustment(got[len(got)-1], "completed")

	// The receipt page shows the return.
	resp, err := http.Get(done.Order.PermalinkURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), "Return "+ret.ID) || !strings.Contains(string(page), "refunded") {
		t.Errorf("the receipt page does not show return %s refunded:\n%s", ret.ID, page)
	}
}

// TestPurchaseReturn runs `shop purchase --return`, as test.sh does: the
// buyer returns the whole order, staff ship it and accept the return with
// an owner token, and get_order shows it refunded. On SQLite and PostgreSQL.
func TestPurchaseReturn(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			running := startShop(t, dbtest.DSN(t, d), map[string]string{"SHOP_ADMIN_TOKENS": "owner:" + ownerToken})
			out, err := runCmd(t, map[string]string{"SHOP_ADMIN_TOKEN": ownerToken}, "purchase", "--url", running.url+"/mcp", "--items", "2", "--return")
			if err != nil {
				t.Fatalf("shop purchase --return: %v\n%s", err, out)
			}
			checkLines(t, out, "admin: fulfill_order", "request_return", "request_return: again", "admin: accept_return", "get_order: returns")
			if _, err := runCmd(t, nil, "purchase", "--url", running.url+"/mcp", "--return"); err == nil {
				t.Error("--return without SHOP_ADMIN_TOKEN ran")
			}
			// The return page the shop makes from its policy's returns:.
			resp, err := http.Get(running.url + "/policies/returns")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "within 30 days") || !strings.Contains(string(page), "1 Dock Street") ||
				!strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
				t.Errorf("GET /policies/returns: %d %v\n%s", resp.StatusCode, resp.Header, page)
			}
		})
	}
}
