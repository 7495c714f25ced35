package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/checkout"
	"shop/database/dbtest"
)

var address = map[string]any{
	"name": "Ada Lovelace", "line_one": "1 Market St", "city": "San Francisco",
	"state": "CA", "country": "US", "postal_code": "94105",
}

func session(t *testing.T, res *mcp.CallToolResult) checkout.Session {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	return structured[checkout.Session](t, res)
}

func TestCheckoutTools(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			shop := startShop(t, dbtest.DSN(t, d), nil)
			s := connect(t, shop.url)

			t.Run("Flow", func(t *testing.T) {
				cs := session(t, call(t, s, "create_checkout_session", map[string]any{
					"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 2}, {"id": "stoneware-coffee-mug-16-oz", "quantity": 1}},
				}))
				if cs.Status != checkout.NotReady || !strings.HasPrefix(cs.ID, "cs_") || len(cs.ID) < 3+26 {
					t.Fatalf("created %+v", cs)
				}
				// A newer ACP caller's shapes.
				cs = session(t, call(t, s, "update_checkout_session", map[string]any{
					"checkout_session_id":          cs.ID,
					"fulfillment_details":          map[string]any{"address": address},
					"selected_fulfillment_options": []map[string]any{{"type": "shipping", "option_id": "us-express"}},
					"promo_code":                   "WELCOME10",
				}))
				if cs.Status != checkout.Ready || cs.FulfillmentOptionID != "us-express" {
					t.Fatalf("updated: %s %s %+v", cs.Status, cs.FulfillmentOptionID, cs.Messages)
				}
				got := session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": cs.ID}))
				if diff := cmp.Diff(cs, got); diff != "" {
					t.Errorf("get (-update +get):\n%s", diff)
				}
				cs = session(t, call(t, s, "cancel_checkout_session", map[string]any{"checkout_session_id": cs.ID}))
				if cs.Status != checkout.Canceled {
					t.Fatalf("canceled: %s", cs.Status)
				}
				res := call(t, s, "update_checkout_session", map[string]any{"checkout_session_id": cs.ID, "promo_code": ""})
				if !res.IsError || !strings.HasPrefix(text(res), "$.checkout_session_id: ") {
					t.Errorf("update of a canceled session: %s", text(res))
				}
			})

			t.Run("BadInput", func(t *testing.T) {
				base := session(t, call(t, s, "create_checkout_session", map[string]any{
					"items": []map[string]any{{"id": "enamel-camp-mug-cream", "quantity": 1}}, "fulfillment_address": address,
				}))
				line := func(id string, q any) map[string]any { return map[string]any{"id": id, "quantity": q} }
				many := make([]map[string]any, 51)
				for i := range many {
					many[i] = line("enamel-camp-mug-cream", 1)
				}
				cases := []struct {
					name  string
					args  map[string]any
					param string
				}{
					{"ErrEmptyItems", map[string]any{"items": []any{}}, "$.items"},
					{"ErrZeroQuantity", map[string]any{"items": []any{line("enamel-camp-mug-cream", 0)}}, "$.items[0].quantity"},
					{"ErrNegativeQuantity", map[string]any{"items": []any{line("enamel-camp-mug-cream", -3)}}, "$.items[0].quantity"},
					{"ErrMillionQuantity", map[string]any{"items": []any{line("enamel-camp-mug-cream", 1_000_000)}}, "$.items[0].quantity"},
					{"ErrFractionalQuantity", map[string]any{"items": []any{line("enamel-camp-mug-cream", 1.5)}}, "$.items.quantity"},
					{"ErrDuplicateVariant", map[string]any{"items": []any{line("enamel-camp-mug-cream", 1), line("enamel-camp-mug-cream", 2)}}, "$.items[1].id"},
					{"ErrUnknownVariant", map[string]any{"items": []any{line("enamel-camp-mug-cream", 1), line("no-such-variant", 1)}}, "$.items[1].id"},
					{"ErrTooManyLines", map[string]any{"items": many}, "$.items"},
					{"ErrAddressNotAnObject", map[string]any{"fulfillment_address": "1 Market St"}, "$.fulfillment_address"},
					{"ErrAddressTooLong", map[string]any{"fulfillment_address": map[string]any{"city": strings.Repeat("x", 5000)}}, "$.fulfillment_address.city"},
					{"ErrUnknownPromo", map[string]any{"promo_code": "FREEMONEY"}, "$.promo_code"},
					{"ErrBadEmail", map[string]any{"buyer": map[string]any{"email": "not-an-email"}}, "$.buyer.email"},
					{"ErrUnknownSession", map[string]any{"checkout_session_id": "cs_nosuchsession"}, "$.checkout_session_id"},
				}
				for _, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						args := map[string]any{"checkout_session_id": base.ID}
						for k, v := range tc.args {
							args[k] = v
						}
						res := call(t, s, "update_checkout_session", args)
						if !res.IsError || !strings.HasPrefix(text(res), tc.param+": ") {
							t.Errorf("got %q (isError %t), want an error about %s", text(res), res.IsError, tc.param)
						}
						// Nothing was written.
						after := session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": base.ID}))
						if diff := cmp.Diff(base, after); diff != "" {
							t.Errorf("the session changed (-before +after):\n%s", diff)
						}
					})
				}
				res := call(t, s, "create_checkout_session", map[string]any{"items": []any{}})
				if !res.IsError || !strings.HasPrefix(text(res), "$.items: ") {
					t.Errorf("create with no items: %s", text(res))
				}
			})

			t.Run("AddressProblemsAreMessages", func(t *testing.T) {
				bad := map[string]any{"name": "A", "line_one": "1 Rue", "city": "Tokyo", "country": "JP", "postal_code": "100-0001"}
				cs := session(t, call(t, s, "create_checkout_session", map[string]any{
					"items": []map[string]any{{"id": "enamel-camp-mug-cream", "quantity": 1}}, "fulfillment_address": bad,
				}))
				if cs.Status != checkout.NotReady || len(cs.FulfillmentOptions) != 0 {
					t.Fatalf("status %s, options %v", cs.Status, cs.FulfillmentOptions)
				}
				found := false
				for _, m := range cs.Messages {
					found = found || (m.Type == "error" && m.Code == "invalid" && m.Param == "$.fulfillment_address.country")
				}
				if !found {
					t.Errorf("no invalid country message in %+v", cs.Messages)
				}
			})
		})
	}
}
