package checkout_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

// callTool runs a buyer tool's handler on args (marshaled to JSON, or raw
// when a string) and returns the session it answered.
func callTool(t *testing.T, co *checkout.Checkout, name string, args any) (*checkout.Session, error) {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	for _, tool := range co.Tools() {
		if tool.Name != name {
			continue
		}
		res, err := tool.Handle(context.Background(), json.RawMessage(raw))
		if err != nil {
			return nil, err
		}
		s, ok := res.Structured.(*checkout.Session)
		if !ok {
			t.Fatalf("%s answered %T", name, res.Structured)
		}
		return s, nil
	}
	t.Fatalf("no tool %s", name)
	return nil, nil
}

// TestCompleteToolLenient: complete_checkout takes the buyer as hosts send
// it: phone for phone_number, first_name and last_name for name, null, or
// with fields it does not know; unknown fields elsewhere are ignored too.
func TestCompleteToolLenient(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		cases := []struct {
			name  string
			buyer string // the JSON of buyer
			want  checkout.Buyer
		}{
			{"PhoneAndFirstLastName",
				`{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com", "phone": "+1 415 555 0100", "nickname": "ada"}`,
				checkout.Buyer{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", PhoneNumber: "+1 415 555 0100"}},
			{"PhoneNumberWinsOverPhone",
				`{"name": "Ada King", "email": "ada@example.com", "phone_number": "+44 20 7946 0000", "phone": "+1 415 555 0100"}`,
				checkout.Buyer{Name: "Ada King", Email: "ada@example.com", PhoneNumber: "+44 20 7946 0000"}},
			{"NullBuyer", `null`,
				checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"}},
			{"PhoneOnly", `{"phone": "+1 415 555 0100"}`,
				checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com", PhoneNumber: "+1 415 555 0100"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				s := p.ready(t)
				args := `{"checkout_session_id": "` + s.ID + `", "buyer": ` + tc.buyer + `,
					"payment_data": {"token": "pm_card_visa", "provider": "stripe", "wallet": "x"}, "intent": "purchase"}`
				got, err := callTool(t, p.co, "complete_checkout", args)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != checkout.Completed || got.Order == nil {
					t.Fatalf("%s %+v", got.Status, got.Messages)
				}
				if diff := cmp.Diff(&tc.want, got.Buyer); diff != "" {
					t.Errorf("buyer (-want +got):\n%s", diff)
				}
				if got.Order.Receipt.Email != "ada@example.com" {
					t.Errorf("receipt email %q", got.Order.Receipt.Email)
				}
			})
		}
		t.Run("ErrNoPaymentData", func(t *testing.T) {
			s := p.ready(t)
			_, err := callTool(t, p.co, "complete_checkout", map[string]any{"checkout_session_id": s.ID, "buyer": nil})
			var e *shop.Error
			if !errors.As(err, &e) || e.Code != shop.Missing || e.Param != "$.payment_data" {
				t.Errorf("got %v, want missing $.payment_data", err)
			}
		})
	})
}

// TestCompletedSessionTools: update_checkout_session and
// cancel_checkout_session on a completed session answer an error that says
// it is completed, and change nothing.
func TestCompletedSessionTools(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		done, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil || done.Status != checkout.Completed {
			t.Fatalf("complete: %v %+v", err, done)
		}
		before, err := p.co.Get(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"update_checkout_session", map[string]any{"checkout_session_id": s.ID, "items": []map[string]any{{"id": "enamel-camp-mug-cream", "quantity": 5}}}},
			{"update_checkout_session", map[string]any{"checkout_session_id": s.ID, "promo_code": "WELCOME10"}},
			{"cancel_checkout_session", map[string]any{"checkout_session_id": s.ID}},
		} {
			got, err := callTool(t, p.co, tc.tool, tc.args)
			var e *shop.Error
			if !errors.As(err, &e) || e.Code != shop.Invalid || e.Param != "$.checkout_session_id" || !strings.Contains(e.Message, "completed") {
				t.Errorf("%s %v: got %v %+v, want invalid $.checkout_session_id saying it is completed", tc.tool, tc.args, err, got)
			}
		}
		after, err := p.co.Get(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("the completed session changed (-before +after):\n%s", diff)
		}
		if n := p.count(t, "stock_holds"); n != 0 {
			t.Errorf("%d stock holds", n)
		}
	})
}

// TestFiftyLines: a cart of 50 lines, the most a session holds, is taken
// and becomes ready; 51 are refused.
func TestFiftyLines(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		var ids []string
		if err := db.Raw("SELECT id FROM variants WHERE stock >= 1 ORDER BY id LIMIT 51").Scan(&ids).Error; err != nil || len(ids) != 51 {
			t.Fatalf("%d variants in stock (%v), want 51", len(ids), err)
		}
		lines := func(n int) []map[string]any {
			out := make([]map[string]any, n)
			for i := range out {
				out[i] = map[string]any{"id": ids[i], "quantity": 1}
			}
			return out
		}
		address := map[string]any{"name": "Ada Lovelace", "line_one": "1 Market St", "city": "San Francisco", "state": "CA", "country": "US", "postal_code": "94105"}
		s, err := callTool(t, p.co, "create_checkout_session", map[string]any{"items": lines(checkout.MaxLines), "fulfillment_address": address})
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != checkout.Ready || len(s.LineItems) != checkout.MaxLines {
			t.Fatalf("%s, %d lines: %v", s.Status, len(s.LineItems), errorParams(s))
		}
		if n := p.count(t, "stock_holds"); n != checkout.MaxLines {
			t.Errorf("%d holds, want %d", n, checkout.MaxLines)
		}
		_, err = callTool(t, p.co, "create_checkout_session", map[string]any{"items": lines(checkout.MaxLines + 1)})
		var e *shop.Error
		if !errors.As(err, &e) || e.Code != shop.Invalid || e.Param != "$.items" {
			t.Errorf("51 lines: %v", err)
		}
		// Replacing the cart with 50 other lines is taken too.
		s, err = callTool(t, p.co, "update_checkout_session", map[string]any{"checkout_session_id": s.ID, "items": lines(checkout.MaxLines + 1)[1:]})
		if err != nil || s.Status != checkout.Ready || len(s.LineItems) != checkout.MaxLines {
			t.Fatalf("update to 50 other lines: %v %+v", err, s)
		}
	})
}
