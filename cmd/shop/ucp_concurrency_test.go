package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/database/dbtest"
	"shop/ucp"
)

// callRaw calls a tool from any goroutine: it returns what happened
// instead of failing the test.
func callRaw(s *mcp.ClientSession, name string, args any, meta mcp.Meta) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
}

func decodeResult[T any](res *mcp.CallToolResult) (T, error) {
	var v T
	b, _ := json.Marshal(res.StructuredContent)
	err := json.Unmarshal(b, &v)
	return v, err
}

var ucpPayment = map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
	"credential": map[string]any{"type": "token", "token": "pm_card_visa"}}}}}

// TestUCPPaidTwice pays one UCP checkout from six callers at once: three
// with one idempotency key (one payload), three with keys of their own.
// Exactly one charge is made and every answer that says completed names
// the same order.
func TestUCPPaidTwice(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			shop := startShop(t, dsn, ucpEnv)
			agents := serveAgentProfiles(t)
			profile := agents.URL + "/agent.json"
			s := connectUCP(t, shop.url)
			co := ucpCall[ucp.Checkout](t, s, "create_checkout", map[string]any{"meta": ucpMeta(profile, ""), "checkout": map[string]any{
				"line_items":  []map[string]any{{"item": map[string]any{"id": "enamel-camp-mug-cream"}, "quantity": 1}},
				"buyer":       map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"},
				"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}}}})
			if co.Status != "ready_for_complete" {
				t.Fatalf("checkout: %+v", co)
			}
			keys := []string{"11111111-1111-4111-8111-111111111111", "11111111-1111-4111-8111-111111111111", "11111111-1111-4111-8111-111111111111",
				"22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444"}
			clients := make([]*mcp.ClientSession, len(keys))
			for i := range clients {
				clients[i] = connectUCP(t, shop.url)
			}
			var wg sync.WaitGroup
			answers := make([]string, len(keys))
			for i, key := range keys {
				wg.Go(func() {
					res, err := callRaw(clients[i], "complete_checkout", map[string]any{"meta": ucpMeta(profile, key), "id": co.ID, "checkout": ucpPayment}, nil)
					if err != nil {
						answers[i] = "error: " + err.Error()
						return
					}
					got, err := decodeResult[ucp.Checkout](res)
					switch {
					case err != nil:
						answers[i] = "undecodable: " + err.Error()
					case got.Order != nil:
						answers[i] = got.Status + " " + got.Order.ID
					default:
						answers[i] = got.Status
					}
				})
			}
			wg.Wait()
			done := ucpCall[ucp.Checkout](t, s, "get_checkout", map[string]any{"meta": ucpMeta(profile, ""), "id": co.ID})
			if done.Status != "completed" || done.Order == nil {
				t.Fatalf("after the payments: %+v", done)
			}
			for i, a := range answers {
				switch a {
				case "completed " + done.Order.ID, "complete_in_progress":
				default:
					if len(a) < 6 || a[:6] != "error:" {
						t.Errorf("caller %d (key %s): %s", i, keys[i], a)
					}
				}
			}
			t.Logf("answers: %v", answers)
			var charges, orders int64
			db := openDB(t, dsn)
			if err := db.Raw(`SELECT COUNT(*) FROM sandbox_charges WHERE idempotency_key IN
				(SELECT idempotency_key FROM payment_attempts WHERE session_id = ?)`, co.ID).Scan(&charges).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Raw(`SELECT COUNT(*) FROM orders WHERE checkout_session_id = ?`, co.ID).Scan(&orders).Error; err != nil {
				t.Fatal(err)
			}
			var channel string
			if err := db.Raw(`SELECT channel FROM orders WHERE checkout_session_id = ?`, co.ID).Scan(&channel).Error; err != nil {
				t.Fatal(err)
			}
			if channel != "ucp" {
				t.Errorf("the order's channel is %q, want ucp", channel)
			}
			if charges != 1 || orders != 1 {
				t.Errorf("%d charges and %d orders for one checkout paid six times at once; want one of each", charges, orders)
			}
		})
	}
}

// TestDialectsLastUnits sells the last three units of a variant to fifteen
// buyers at once, five over each of /mcp, /acp/mcp and /ucp/mcp: never
// more orders than units, and the stock ends at what was not sold.
func TestDialectsLastUnits(t *testing.T) {
	const variant, units, perDialect = "enamel-camp-mug-slate", 3, 5
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			shop := startShop(t, dsn, ucpEnv, "--acp-open")
			db := openDB(t, dsn)
			if err := db.Exec("UPDATE variants SET stock = ? WHERE id = ?", units, variant).Error; err != nil {
				t.Fatal(err)
			}
			agents := serveAgentProfiles(t)
			profile := agents.URL + "/agent.json"
			type buyer struct {
				dialect string
				s       *mcp.ClientSession
			}
			var buyers []buyer
			for range perDialect {
				buyers = append(buyers, buyer{"mcp", connect(t, shop.url)}, buyer{"ucp", connectUCP(t, shop.url)}, buyer{"acp", connectACP(t, shop.url)})
			}
			var wg sync.WaitGroup
			outcomes := make([]string, len(buyers))
			for i, b := range buyers {
				wg.Go(func() {
					email := fmt.Sprintf("buyer%d@example.com", i)
					switch b.dialect {
					case "mcp":
						outcomes[i] = buyOverMCP(b.s, fmt.Sprintf("subject-%d", i), variant, email)
					case "ucp":
						outcomes[i] = buyOverUCP(b.s, profile, variant, email, fmt.Sprintf("55555555-5555-4555-8555-%012d", i))
					default:
						outcomes[i] = buyOverACP(b.s, variant, email, fmt.Sprintf("last-units-%d", i))
					}
				})
			}
			wg.Wait()
			var sold, stock int64
			if err := db.Raw("SELECT COALESCE(SUM(quantity), 0) FROM order_lines WHERE variant_id = ?", variant).Scan(&sold).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Raw("SELECT stock FROM variants WHERE id = ?", variant).Scan(&stock).Error; err != nil {
				t.Fatal(err)
			}
			t.Logf("outcomes: %v; sold %d, stock left %d", outcomes, sold, stock)
			paid, byDialect := 0, map[string]int{}
			for i, o := range outcomes {
				if o == "paid" {
					paid++
					byDialect[buyers[i].dialect]++
				}
			}
			t.Logf("paid per dialect: %v", byDialect)
			if sold > units || int64(paid) != sold || stock != units-sold || stock < 0 {
				t.Errorf("sold %d of %d units in %d paid answers, stock left %d", sold, units, paid, stock)
			}
			if sold == 0 {
				t.Error("nobody bought anything")
			}
		})
	}
}

// buyOverMCP buys one unit as a ChatGPT buyer would: "paid", or why not.
func buyOverMCP(s *mcp.ClientSession, subject, variant, email string) string {
	meta := mcp.Meta{"openai/subject": subject}
	res, err := callRaw(s, "create_checkout_session", map[string]any{
		"items": []map[string]any{{"id": variant, "quantity": 1}}, "buyer": map[string]any{"email": email, "name": "Ada Lovelace"},
		"fulfillment_address": ucpMCPAddress}, meta)
	if err != nil || res.IsError {
		return fmt.Sprintf("create failed: %v %v", err, resultText(res))
	}
	cs, err := decodeResult[struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}](res)
	if err != nil || cs.Status != "ready_for_payment" {
		return "not ready: " + cs.Status
	}
	return paid(callRaw(s, "complete_checkout", map[string]any{"checkout_session_id": cs.ID,
		"payment_data": map[string]any{"token": "pm_card_visa", "provider": "stripe"}}, meta))
}

// paid is "paid" when a completion answered a completed session or
// checkout, else why not.
func paid(res *mcp.CallToolResult, err error) string {
	if err != nil || res.IsError {
		return fmt.Sprintf("complete failed: %v %s", err, resultOf(res))
	}
	done, _ := decodeResult[struct {
		Status string `json:"status"`
	}](res)
	if done.Status == "completed" {
		return "paid"
	}
	return "not paid: " + done.Status
}

// buyOverUCP buys one unit as a UCP agent would: "paid", or why not.
func buyOverUCP(s *mcp.ClientSession, profile, variant, email, key string) string {
	res, err := callRaw(s, "create_checkout", map[string]any{"meta": ucpMeta(profile, ""), "checkout": map[string]any{
		"line_items":  []map[string]any{{"item": map[string]any{"id": variant}, "quantity": 1}},
		"buyer":       map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": email},
		"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}}}}, nil)
	if err != nil {
		return "create failed: " + err.Error()
	}
	co, err := decodeResult[ucp.Checkout](res)
	if err != nil || co.Status != "ready_for_complete" {
		return "not ready: " + co.Status
	}
	return paid(callRaw(s, "complete_checkout", map[string]any{"meta": ucpMeta(profile, key), "id": co.ID, "checkout": ucpPayment}, nil))
}

// connectACP joins a plain MCP client to the shop's /acp/mcp (open to
// every agent with --acp-open). The ACP binding's tools
// declare no outputSchema: its answers are ACP's objects, its errors
// JSON-RPC errors.
func connectACP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "shop-acp-test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/acp/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// buyOverACP buys one unit as an ACP agent would: "paid", or why not.
func buyOverACP(s *mcp.ClientSession, variant, email, key string) string {
	meta := func(k string) map[string]any {
		return map[string]any{"api_version": "2026-04-17", "idempotency_key": k}
	}
	res, err := callRaw(s, "create_checkout_session", map[string]any{"meta": meta(key + "-create"), "payload": map[string]any{
		"currency": "usd", "capabilities": map[string]any{},
		"line_items": []any{map[string]any{"id": variant, "quantity": 1}},
		"buyer":      map[string]any{"full_name": "Ada Lovelace", "email": email},
		"fulfillment_details": map[string]any{"name": "Ada Lovelace", "address": map[string]any{
			"name": "Ada Lovelace", "line_one": "350 Fifth Ave", "city": "New York", "state": "NY", "country": "US", "postal_code": "10118"}},
	}}, nil)
	if err != nil {
		return "create failed: " + err.Error()
	}
	cs, err := decodeResult[struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}](res)
	if err != nil || cs.Status != "ready_for_payment" {
		return "not ready: " + cs.Status
	}
	return paid(callRaw(s, "complete_checkout_session", map[string]any{"meta": meta(key + "-pay"), "id": cs.ID, "payload": map[string]any{
		"payment_data": map[string]any{"handler_id": "card_test", "instrument": map[string]any{"type": "card",
			"credential": map[string]any{"type": "stripe_test_payment_method", "token": "pm_card_visa"}}}}}, nil))
}
