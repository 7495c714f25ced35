package main

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/checkout"
	"shop/database/dbtest"
	"shop/money"
)

var buyer = map[string]any{"name": "Ada Lovelace", "email": "Ada@Example.com"}

// readySession creates, through MCP, a session ready for payment.
func readySession(t *testing.T, s *mcp.ClientSession) checkout.Session {
	t.Helper()
	cs := session(t, call(t, s, "create_checkout_session", map[string]any{
		"items":               []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 2}, {"id": "stoneware-coffee-mug-16-oz", "quantity": 1}},
		"fulfillment_address": address, "buyer": buyer,
	}))
	if cs.Status != checkout.Ready {
		t.Fatalf("not ready: %+v", cs.Messages)
	}
	return cs
}

func complete(t *testing.T, s *mcp.ClientSession, id, token string) *mcp.CallToolResult {
	t.Helper()
	p := completeParams(id, token)
	return call(t, s, p.Name, p.Arguments)
}

// completeParams is a complete_checkout call as a host makes it: leniently
// shaped (a null buyer, a field the shop does not know).
func completeParams(id, token string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "complete_checkout", Arguments: map[string]any{
		"checkout_session_id": id,
		"buyer":               nil,
		"payment_data":        map[string]any{"token": token, "provider": "stripe", "unknown_field": true},
	}}
}

func total(s checkout.Session) int64 {
	for _, t := range s.Totals {
		if t.Type == checkout.TotalTotal {
			return t.Amount
		}
	}
	return -1
}

// TestPurchase is the acceptance through MCP: a session paid with
// pm_card_visa gives an order whose receipt page opens from permalink_url
// with the session's figures; paying again answers the same order; a
// declined card leaves a session the buyer can pay with another.
func TestPurchase(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			shop := startShop(t, dbtest.DSN(t, d), nil)
			s := connect(t, shop.url)

			cs := readySession(t, s)
			done := session(t, complete(t, s, cs.ID, "pm_card_visa"))
			if done.Status != checkout.Completed || done.Order == nil {
				t.Fatalf("completed: %s %+v", done.Status, done.Messages)
			}
			if got := done.Order.Receipt.Totals; total(done) != total(cs) || len(got) != len(cs.Totals) {
				t.Errorf("receipt totals %+v, session's %+v", got, cs.Totals)
			}

			resp, err := http.Get(done.Order.PermalinkURL)
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			display := money.MustLookup("usd").Format(total(cs))
			if resp.StatusCode != 200 || !strings.Contains(string(page), strconv.FormatInt(done.Order.Number, 10)) || !strings.Contains(string(page), display) {
				t.Errorf("receipt page: %s, total %s in it: %t", resp.Status, display, strings.Contains(string(page), display))
			}

			again := session(t, complete(t, s, cs.ID, "pm_card_visa"))
			if again.Order == nil || again.Order.ID != done.Order.ID {
				t.Errorf("paying again gave order %+v, want %s", again.Order, done.Order.ID)
			}

			res := call(t, s, "get_order", map[string]any{"order_id": done.Order.ID, "email": "ada@example.com"})
			if res.IsError || !strings.Contains(text(res), strconv.FormatInt(done.Order.Number, 10)) {
				t.Errorf("get_order: %s", text(res))
			}
			if res := call(t, s, "get_order", map[string]any{"order_id": done.Order.ID, "email": "eve@example.com"}); !res.IsError {
				t.Errorf("get_order with another email answered: %s", text(res))
			}

			// A decline the buyer recovers from.
			cs = readySession(t, s)
			res = complete(t, s, cs.ID, "pm_card_visa_chargeDeclined")
			declined := session(t, res)
			if res.IsError || declined.Status != checkout.Ready || declined.Messages[0].Code != "payment_declined" {
				t.Fatalf("declined: isError %t %s %+v", res.IsError, declined.Status, declined.Messages)
			}
			if paid := session(t, complete(t, s, cs.ID, "pm_card_visa")); paid.Status != checkout.Completed {
				t.Fatalf("after a decline: %s", paid.Status)
			}
		})
	}
}

// resultText is the text of a result's text blocks.
func resultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// totalOf is the amount of the total of type t, 0 when it is not listed.
func totalOf(ts []checkout.Total, t checkout.TotalType) int64 {
	for _, x := range ts {
		if x.Type == t {
			return x.Amount
		}
	}
	return 0
}

// seenField is the sandbox page form's signed "what you saw".
var seenField = regexp.MustCompile(`name="seen" value="([^"]*)"`)
