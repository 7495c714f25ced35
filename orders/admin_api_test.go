package orders_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
	"shop/orders"
)

// TestStaffAPI runs the staff's actions through their Go API, with typed
// values: each two-step action previews, then does it with the token; a
// token the API issued confirms the tool's call of the same arguments too.
func TestStaffAPI(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		ctx := shop.WithActor(context.Background(), owner)
		ord := s.order(t, 2)

		note, _, err := s.admin.AddNote(ctx, orders.NoteArgs{OrderID: ord.ID, Note: "Gift wrap."})
		if err != nil || !strings.HasPrefix(note.NoteID, "note_") {
			t.Fatalf("AddNote: %+v %v", note, err)
		}

		amount := int64(100)
		refund := orders.RefundArgs{OrderID: ord.ID, Amount: &amount, TwoStep: orders.TwoStep{Reason: "scratched"}}
		prev, text, err := s.admin.Refund(ctx, refund)
		if err != nil || prev.Preview == nil || prev.Refund != nil || !strings.HasPrefix(prev.Preview.Confirm, "cfm_") || prev.Preview.Preview.Amount.Amount != amount {
			t.Fatalf("Refund preview: %+v %q %v", prev, text, err)
		}
		refund.Confirm = prev.Preview.Confirm
		done, _, err := s.admin.Refund(ctx, refund)
		if err != nil || done.Refund == nil || done.Refund.Status != "succeeded" || done.Refund.Amount.Amount != amount {
			t.Fatalf("Refund: %+v %v", done, err)
		}

		// A preview of the API, confirmed by the tool with the same arguments.
		refund.Confirm = ""
		prev, _, err = s.admin.Refund(ctx, refund)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.call(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": amount, "reason": "scratched", "confirm": prev.Preview.Confirm})
		if err != nil || out["status"] != "succeeded" {
			t.Fatalf("the tool's confirmation of the API's preview: %v %v", out, err)
		}

		add := int64(3)
		adjust := orders.AdjustArgs{VariantID: "enamel-camp-mug-cream", Add: &add, TwoStep: orders.TwoStep{Reason: "found a box"}}
		before := stockOf(t, db, "enamel-camp-mug-cream")
		ap, _, err := s.admin.AdjustInventory(ctx, adjust)
		if err != nil || ap.Preview == nil || ap.Preview.Preview.After != before+add || stockOf(t, db, "enamel-camp-mug-cream") != before {
			t.Fatalf("AdjustInventory preview: %+v %v", ap, err)
		}
		adjust.Confirm = ap.Preview.Confirm
		if ad, _, err := s.admin.AdjustInventory(ctx, adjust); err != nil || ad.Adjusted == nil || stockOf(t, db, "enamel-camp-mug-cream") != before+add {
			t.Fatalf("AdjustInventory: %+v %v", ad, err)
		}

		other := s.order(t, 1)
		cancel := orders.CancelArgs{OrderID: other.ID, TwoStep: orders.TwoStep{Reason: "changed their mind"}}
		cp, _, err := s.admin.Cancel(ctx, cancel)
		if err != nil || cp.Preview == nil || cp.Preview.Preview.Refund.Amount != paid(other) {
			t.Fatalf("Cancel preview: %+v %v", cp, err)
		}
		cancel.Confirm = cp.Preview.Confirm
		if cd, _, err := s.admin.Cancel(ctx, cancel); err != nil || cd.Refund == nil || cd.Refund.Status != "succeeded" || s.status(t, other.ID) != orders.StatusCanceled {
			t.Fatalf("Cancel: %+v %v", cd, err)
		}

		third := s.order(t, 1)
		sent, _, err := s.admin.Fulfill(ctx, orders.FulfillArgs{OrderID: third.ID, Carrier: "USPS", TrackingNumber: "9400"})
		if err != nil || sent.Shipped == nil || sent.Shipped.Status != string(orders.StatusShipped) {
			t.Fatalf("Fulfill: %+v %v", sent, err)
		}
		if got, _, err := s.admin.Fulfill(ctx, orders.FulfillArgs{OrderID: third.ID, Delivered: true}); err != nil || got.Delivered == nil {
			t.Fatalf("Fulfill delivered: %+v %v", got, err)
		}
		if _, _, err := s.admin.Refund(shop.WithActor(context.Background(), support), refund); code(err) != shop.Forbidden {
			t.Errorf("a support token's refund: %v", err)
		}
	})
}

// TestAdminOutputs: every admin tool's structured content, previews and
// outcomes alike, follows the outputSchema it declares.
func TestAdminOutputs(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		ctx := shop.WithActor(context.Background(), owner)
		ord, other, third := s.order(t, 2), s.order(t, 1), s.order(t, 1)
		tools := map[string]shop.Tool{}
		for _, tl := range s.admin.Tools() {
			tools[tl.Name] = tl
		}
		run := func(name string, args map[string]any) map[string]any {
			t.Helper()
			tl := tools[name]
			raw, _ := json.Marshal(args)
			res, err := tl.Handle(ctx, raw)
			if err != nil {
				t.Fatalf("%s %s: %v", name, raw, err)
			}
			b, _ := json.Marshal(res.Structured)
			doc, err := sjs.UnmarshalJSON(bytes.NewReader(tl.OutputSchema))
			if err != nil {
				t.Fatal(err)
			}
			c := sjs.NewCompiler()
			_ = c.AddResource("out.json", doc)
			schema, err := c.Compile("out.json")
			if err != nil {
				t.Fatalf("%s: outputSchema: %v", name, err)
			}
			inst, _ := sjs.UnmarshalJSON(bytes.NewReader(b))
			if err := schema.Validate(inst); err != nil {
				t.Errorf("%s: %s does not follow its outputSchema: %v", name, b, err)
			}
			var out map[string]any
			_ = json.Unmarshal(b, &out)
			return out
		}
		twoStep := func(name string, args map[string]any) {
			t.Helper()
			prev := run(name, args)
			args["confirm"] = prev["confirm"]
			run(name, args)
		}
		run("add_order_note", map[string]any{"order_id": ord.ID, "note": "Call first."})
		twoStep("refund_order", map[string]any{"order_id": ord.ID, "amount": 50, "reason": "dent"})
		twoStep("cancel_order", map[string]any{"order_id": other.ID, "reason": "duplicate"})
		twoStep("cancel_order", map[string]any{"order_id": s.order(t, 1).ID, "reason": "duplicate", "refund": false})
		twoStep("adjust_inventory", map[string]any{"variant_id": "enamel-camp-mug-cream", "set": 40, "reason": "count"})
		run("fulfill_order", map[string]any{"order_id": third.ID, "carrier": "UPS", "tracking_number": "1Z"})
		run("fulfill_order", map[string]any{"order_id": third.ID, "delivered": true})
		run("list_orders", map[string]any{})
		run("get_order", map[string]any{"order_id": ord.ID})
		run("sales_report", map[string]any{})
		run("list_audit_events", map[string]any{"order_id": ord.ID})
	})
}
