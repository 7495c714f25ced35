package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/database/dbtest"
	"shop/mcptest"
)

const (
	ownerToken  = "owner-token-0123456789abcdef"
	viewerToken = "viewer-token-0123456789abcdef"
)

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectAdmin(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	client := mcptest.NewClient(t, "shop-admin-test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/admin/mcp", HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

type orderList struct {
	Orders []struct{ ID string } `json:"orders"`
}

// TestAdmin is the acceptance: with an owner token, list today's
// orders, fulfil one with a tracking number, refund part of another after a
// preview, and find both in the audit log; a viewer's refund is refused.
func TestAdmin(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			shop := startShop(t, dbtest.DSN(t, d), map[string]string{"SHOP_ADMIN_TOKENS": "owner:" + ownerToken + ",viewer:" + viewerToken})
			buyer := connect(t, shop.url)
			var ids []string
			for range 2 {
				cs := readySession(t, buyer)
				done := session(t, complete(t, buyer, cs.ID, "pm_card_visa"))
				ids = append(ids, done.Order.ID)
			}

			t.Run("ErrNoToken", func(t *testing.T) {
				resp, err := http.Post(shop.url+"/admin/mcp", "application/json", strings.NewReader(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s, WWW-Authenticate %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
				}
			})
			t.Run("ErrWrongToken", func(t *testing.T) {
				for _, auth := range []string{"Bearer " + ownerToken + "x", "Basic " + ownerToken, ownerToken} {
					req, _ := http.NewRequest("POST", shop.url+"/admin/mcp", strings.NewReader(`{}`))
					req.Header.Set("Authorization", auth)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
						t.Errorf("Authorization %.6s…: %s, WWW-Authenticate %q", auth, resp.Status, resp.Header.Get("WWW-Authenticate"))
					}
				}
			})
			t.Run("BuyersSeeNoAdminTool", func(t *testing.T) {
				res, err := buyer.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range res.Tools {
					switch tool.Name {
					case "list_orders", "refund_order", "cancel_order", "fulfill_order", "adjust_inventory", "sales_report", "list_audit_events", "add_order_note":
						t.Errorf("the buyers' endpoint lists %s", tool.Name)
					}
				}
				called, err := buyer.CallTool(context.Background(), &mcp.CallToolParams{Name: "refund_order", Arguments: map[string]any{"order_id": ids[0]}})
				if err == nil && !called.IsError {
					t.Errorf("the buyers' endpoint ran refund_order: %s", text(called))
				}
			})

			owner := connectAdmin(t, shop.url, ownerToken)
			today := time.Now().UTC().Format("2006-01-02")
			list := call(t, owner, "list_orders", map[string]any{"created_from": today})
			listed := structured[orderList](t, list)
			if list.IsError || len(listed.Orders) != 2 {
				t.Fatalf("list_orders: %s", text(list))
			}
			if res := call(t, owner, "fulfill_order", map[string]any{"order_id": ids[0], "carrier": "USPS", "tracking_number": "9400111899223100001234",
				"tracking_url": "https://tools.usps.com/go/TrackConfirmAction?tLabels=9400111899223100001234"}); res.IsError {
				t.Fatalf("fulfill_order: %s", text(res))
			}
			refund := map[string]any{"order_id": ids[1], "amount": 500, "reason": "a chipped mug"}
			prev := call(t, owner, "refund_order", refund)
			if prev.IsError || !strings.Contains(text(prev), "Preview") {
				t.Fatalf("preview: %s", text(prev))
			}
			refund["confirm"] = structured[struct{ Confirm string }](t, prev).Confirm
			if res := call(t, owner, "refund_order", refund); res.IsError || !strings.Contains(text(res), "$5.00") {
				t.Fatalf("refund: %s", text(res))
			}
			audit := text(call(t, owner, "list_audit_events", map[string]any{}))
			for _, want := range []string{"fulfill_order", "refund_order"} {
				if !strings.Contains(audit, want) {
					t.Errorf("the audit log lacks %s:\n%s", want, audit)
				}
			}

			viewer := connectAdmin(t, shop.url, viewerToken)
			delete(refund, "confirm")
			res := call(t, viewer, "refund_order", refund)
			if !res.IsError || !strings.Contains(text(res), "owner") {
				t.Errorf("a viewer's refund: %s", text(res))
			}
			if res := call(t, viewer, "get_order", map[string]any{"order_id": ids[1]}); res.IsError {
				t.Errorf("a viewer's get_order: %s", text(res))
			}
		})
	}
}
