package orders_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop"
	"shop/database"
	"shop/database/dbtest"
	"shop/orders"
)

func TestGetOrderTool(t *testing.T) {
	db := dbtest.Open(t, database.SQLite)
	o := newOrders(db)
	addSession(t, db, "cs_1")
	ord := create(t, o, db, sample("cs_1"))

	tools := o.Tools()
	if len(tools) != 1 || tools[0].Name != "get_order" || !tools[0].ReadOnly || !tools[0].Idempotent || tools[0].Destructive {
		t.Fatalf("tools %+v; want get_order, read-only and idempotent", tools)
	}
	var schema struct {
		Properties map[string]struct {
			Pattern   string
			MaxLength int
		}
		Required []string
	}
	if err := json.Unmarshal(tools[0].InputSchema, &schema); err != nil {
		t.Fatalf("input schema: %v", err)
	}
	if diff := cmp.Diff([]string{"order_id", "email"}, schema.Required); diff != "" || schema.Properties["email"].MaxLength == 0 {
		t.Errorf("schema %+v: want order_id and email required and bounded", schema)
	}
	handle := tools[0].Handle

	okArgs := `{"order_id": "` + ord.ID + `", "email": " JANE@example.com "}`
	cases := []struct {
		name, args string
		code       shop.Code
		param      string
	}{
		{"OK", okArgs, "", ""},
		{"OKWithUnknownFields", `{"order_id": "` + ord.ID + `", "email": "jane@example.com", "locale": "en"}`, "", ""},
		{"WrongEmail", `{"order_id": "` + ord.ID + `", "email": "mallory@example.com"}`, shop.NotFound, ""},
		{"UnknownOrder", `{"order_id": "ord_` + strings.Repeat("c", 26) + `", "email": "jane@example.com"}`, shop.NotFound, ""},
		{"OrderIDNotAString", `{"order_id": 1001, "email": "jane@example.com"}`, shop.Invalid, "$.order_id"},
		{"EmailNotAString", `{"order_id": "` + ord.ID + `", "email": true}`, shop.Invalid, "$.email"},
		{"NotAnObject", `["` + ord.ID + `"]`, shop.Invalid, "$"},
		{"NoArguments", ``, shop.Missing, "$.order_id"},
		{"MissingOrderID", `{"email": "jane@example.com"}`, shop.Missing, "$.order_id"},
		{"MissingEmail", `{"order_id": "` + ord.ID + `"}`, shop.Missing, "$.email"},
		{"InvalidOrderID", `{"order_id": "1001", "email": "jane@example.com"}`, shop.Invalid, "$.order_id"},
		{"InvalidEmail", `{"order_id": "` + ord.ID + `", "email": "jane"}`, shop.Invalid, "$.email"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := handle(context.Background(), json.RawMessage(tc.args))
			if tc.code != "" {
				e := refusal(err)
				if res != nil || e.Code != tc.code || e.Param != tc.param {
					t.Errorf("get_order(%s) = %v, %v; want code %s param %q", tc.args, res, err, tc.code, tc.param)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(orders.ReceiptResult{Order: ord.Receipt}, res.Structured); diff != "" {
				t.Errorf("structured content (-want +got):\n%s", diff)
			}
			for _, s := range []string{"Order 1001", ord.ID, "confirmed", "2 × Enamel mug, slate ($22.50)", "Standard by USPS",
				"Springfield, IL 62701", "Sales tax $4.20, Total $52.10.", "Payment succeeded (test mode)", ord.PermalinkURL} {
				if !strings.Contains(res.Text, s) {
					t.Errorf("text %q lacks %q", res.Text, s)
				}
			}
			if strings.Contains(res.Text, "pi_123") || strings.Contains(res.Text, "stripe") {
				t.Errorf("text %q shows the provider's internals", res.Text)
			}
			if strings.Contains(res.Text, "\n") {
				t.Errorf("text %q is more than one paragraph", res.Text)
			}
			// The structured content is the contract's {order: Receipt}.
			b, err := json.Marshal(res.Structured)
			if err != nil {
				t.Fatal(err)
			}
			var wire map[string]map[string]any
			if err := json.Unmarshal(b, &wire); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"order_id", "number", "status", "created_at", "email", "line_items", "fulfillment_address",
				"fulfillment_option", "totals", "payment", "links"} {
				if _, ok := wire["order"][k]; !ok {
					t.Errorf("structured content lacks order.%s: %s", k, b)
				}
			}
		})
	}
}
