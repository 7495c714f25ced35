package orders_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/contract"
	"shop/database/dbtest"
	"shop/money"
	"shop/orders"
)

var (
	usd       = money.MustLookup("usd")
	readStaff = shop.Actor{Role: shop.Viewer, Label: "t"}
	day0      = time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
)

// readDesk is an admin over a fresh database whose clock tests set.
type readDesk struct {
	db    *gorm.DB
	o     *orders.Orders
	admin *orders.Admin
	now   time.Time
	n     int
	// channel is the endpoint the next placed orders came through ("": mcp).
	channel string
}

func newReadDesk(t *testing.T, db *gorm.DB) *readDesk {
	d := &readDesk{db: db, now: day0}
	d.o = orders.New(db, &orders.Options{Now: func() time.Time { return d.now }, PaymentAttempts: checkout.PaymentAttempts})
	d.admin = orders.NewAdmin(d.o, catalog.New(db, usd, nil), nil)
	return d
}

// place creates an order (3 units, 52.10 USD) by email and name, then sets
// its creation time and status as the test needs.
func (d *readDesk) place(t *testing.T, email, name string, at time.Time, status orders.Status) *contract.Order {
	t.Helper()
	d.n++
	in := sample(fmt.Sprintf("cs_read_%d", d.n))
	in.Buyer = &contract.Buyer{Name: name, Email: email}
	in.Channel = d.channel
	addSession(t, d.db, in.SessionID)
	ord, err := d.o.Create(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	d.exec(t, "UPDATE orders SET created_at = ?, status = ? WHERE id = ?", at, status, ord.ID)
	return ord
}

func (d *readDesk) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if err := d.db.Exec(sql, args...).Error; err != nil {
		t.Fatal(err)
	}
}

func (d *readDesk) refund(t *testing.T, orderID string, amount int64, status string, at time.Time) {
	t.Helper()
	d.n++
	d.exec(t, `INSERT INTO refunds (id, order_id, amount, reason, idempotency_key, status, reference, actor, created_at, updated_at)
		VALUES (?, ?, ?, 'damaged', ?, ?, ?, 'owner:t', ?, ?)`, fmt.Sprintf("ref_%d", d.n), orderID, amount, fmt.Sprintf("key_%d", d.n),
		status, fmt.Sprintf("re_%d", d.n), at, at)
}

// run calls an admin tool as actor (no actor when nil).
func (d *readDesk) run(t *testing.T, actor *shop.Actor, name, args string) (*shop.Result, error) {
	t.Helper()
	ctx := context.Background()
	if actor != nil {
		ctx = shop.WithActor(ctx, *actor)
	}
	for _, tl := range d.admin.Tools() {
		if tl.Name == name {
			return tl.Handle(ctx, json.RawMessage(args))
		}
	}
	t.Fatalf("no admin tool %s", name)
	return nil, nil
}

func runAs[T any](t *testing.T, d *readDesk, name, args string) T {
	t.Helper()
	res, err := d.run(t, &readStaff, name, args)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	return res.Structured.(T)
}

// refusedAs checks that a call fails with code on param.
func refusedAs(t *testing.T, err error, code shop.Code, param string) {
	t.Helper()
	if e := refusal(err); e.Code != code || e.Param != param {
		t.Errorf("error %v (code %q param %q); want code %s param %q", err, e.Code, e.Param, code, param)
	}
}

func TestReadToolsDeclared(t *testing.T) {
	tools := orders.NewAdmin(newOrders(nil), nil, nil).Tools()
	var names []string
	for _, tl := range tools[:4] {
		names = append(names, tl.Name)
		var schema map[string]any
		if err := json.Unmarshal(tl.InputSchema, &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %s: %v", tl.Name, tl.InputSchema, err)
		}
		if !tl.ReadOnly || !tl.Idempotent || tl.Destructive || !strings.Contains(tl.Description, "viewer") ||
			!strings.Contains(tl.Description, "forbidden") || tl.Title == "" {
			t.Errorf("%s: %+v; want a read-only idempotent viewer tool that names its errors", tl.Name, tl)
		}
	}
	if diff := cmp.Diff([]string{"list_orders", "get_order", "sales_report", "list_audit_events"}, names); diff != "" {
		t.Errorf("read tools (-want +got):\n%s", diff)
	}
	var list struct {
		Properties struct {
			Status struct {
				Enum []string `json:"enum"`
			} `json:"status"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(tools[0].InputSchema, &list)
	if diff := cmp.Diff([]string{"confirmed", "partially_shipped", "shipped", "delivered", "canceled", "refunded"}, list.Properties.Status.Enum); diff != "" {
		t.Errorf("list_orders schema lacks the status enum (-want +got):\n%s\n%s", diff, tools[0].InputSchema)
	}
}

func TestReadToolRoles(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		d := newReadDesk(t, db)
		ord := d.place(t, "jane@example.com", "Jane", day0, orders.StatusConfirmed)
		args := map[string]string{"list_orders": `{}`, "get_order": `{"order_id": "` + ord.ID + `"}`, "sales_report": `{}`, "list_audit_events": `{}`}
		for name, a := range args {
			for _, actor := range []*shop.Actor{nil, {Role: "guest", Label: "t"}, {Role: shop.Viewer, Label: "t"},
				{Role: shop.Support, Label: "t"}, {Role: shop.Owner, Label: "t"}} {
				res, err := d.run(t, actor, name, a)
				if actor == nil || actor.Role == "guest" {
					if refusedAs(t, err, shop.Forbidden, ""); res != nil {
						t.Errorf("%s as %v answered %v", name, actor, res)
					}
				} else if err != nil || res == nil || res.Text == "" {
					t.Errorf("%s as %v: %v, %v", name, actor, res, err)
				}
			}
		}
	})
}

func TestListOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		d := newReadDesk(t, db)
		byNumber := map[int64]*contract.Order{}
		for _, o := range []struct {
			email, name, status string
			at                  time.Duration
		}{
			{"jane@example.com", "Jane Doe", "confirmed", time.Hour},                                 // 1001
			{"bob@example.org", "Bob Stone", "shipped", 2 * time.Hour},                               // 1002
			{"ann_lee@example.com", "Ann Lee", "canceled", 24 * time.Hour},                           // 1003
			{"JANE@Example.com", "Jane Roe", "refunded", 24 * time.Hour},                             // 1004, same time as 1003
			{"zed@shop.test", "100% Cotton Fan", "partially_shipped", 48*time.Hour + 30*time.Minute}, // 1005
			{"mary@example.net", `Mary "Mo" O'Brien`, "confirmed", 72 * time.Hour},                   // 1006
		} {
			ord := d.place(t, o.email, o.name, day0.Add(o.at), orders.Status(o.status))
			ord.Receipt.CreatedAt = day0.Add(o.at)
			byNumber[ord.Number] = ord
		}
		d.exec(t, "UPDATE orders SET refunded = 5210 WHERE number = 1004")
		// newest lists numbers newest first, ties by id descending.
		newest := func(numbers ...int64) []int64 {
			slices.SortFunc(numbers, func(a, b int64) int {
				oa, ob := byNumber[a], byNumber[b]
				if c := ob.Receipt.CreatedAt.Compare(oa.Receipt.CreatedAt); c != 0 {
					return c
				}
				return strings.Compare(ob.ID, oa.ID)
			})
			return numbers
		}
		all := newest(1001, 1002, 1003, 1004, 1005, 1006)
		cases := []struct {
			name, args string
			want       []int64
		}{
			{"All", `{}`, all},
			{"Status", `{"status": "refunded"}`, []int64{1004}},
			{"Email", `{"email": " JANE@example.COM "}`, newest(1001, 1004)},
			{"EmailIsExact", `{"email": "jane@example"}`, nil},
			{"Number", `{"text": "1003"}`, []int64{1003}},
			{"HashNumber", `{"text": " #1002 "}`, []int64{1002}},
			{"UnknownNumber", `{"text": "9999"}`, nil},
			{"EmailPart", `{"text": "Example.COM"}`, newest(1001, 1003, 1004)},
			{"NamePart", `{"text": "DOE"}`, []int64{1001}},
			{"NameOrEmail", `{"text": "jane"}`, newest(1001, 1004)},
			{"PercentIsLiteral", `{"text": "%"}`, []int64{1005}},
			{"UnderscoreIsLiteral", `{"text": "_"}`, []int64{1003}},
			{"QuoteInName", `{"text": "\"mo\" o'b"}`, []int64{1006}},
			{"FromDate", `{"created_from": "2025-10-02"}`, newest(1003, 1004, 1005, 1006)},
			{"ToDate", `{"created_to": "2025-10-02"}`, newest(1001, 1002)},
			{"FromOffset", `{"created_from": "2025-10-02T01:00:00+01:00"}`, newest(1003, 1004, 1005, 1006)},
			{"ToExclusive", `{"created_to": "2025-10-03T00:30:00Z"}`, newest(1001, 1002, 1003, 1004)},
			{"ToSubMicrosecond", `{"created_to": "2025-10-03T00:30:00.0000001Z"}`, newest(1001, 1002, 1003, 1004, 1005)},
			{"Combined", `{"status": "confirmed", "created_from": "2025-10-02", "text": "mary"}`, []int64{1006}},
			{"Limit", `{"limit": 2}`, all[:2]},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var got []int64
				for _, o := range runAs[orders.OrderList](t, d, "list_orders", tc.args).Orders {
					got = append(got, o.Number)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("list_orders(%s) (-want +got):\n%s", tc.args, diff)
				}
			})
		}
		list := runAs[orders.OrderList](t, d, "list_orders", `{"status": "refunded"}`)
		wantSummary := orders.OrderSummary{ID: byNumber[1004].ID, Number: 1004, Status: "refunded", Email: "jane@example.com",
			Total: usd.Price(5210), Refunded: usd.Price(5210), CreatedAt: day0.Add(24 * time.Hour), Items: 3, Channel: "mcp"}
		if diff := cmp.Diff(orders.OrderList{Orders: []orders.OrderSummary{wantSummary}}, list); diff != "" {
			t.Errorf("summary (-want +got):\n%s", diff)
		}
		refused := []struct{ args, param string }{
			{`{"status": "paid"}`, "$.status"},
			{`{"email": "` + strings.Repeat("a", 250) + `@example.com"}`, "$.email"},
			{`{"text": "` + strings.Repeat("a", 201) + `"}`, "$.text"},
			{`{"created_from": "yesterday"}`, "$.created_from"},
			{`{"created_to": "2025-10-02T25:00:00Z"}`, "$.created_to"},
			{`{"created_from": "2025-10-02", "created_to": "2025-10-02"}`, "$.created_to"},
			{`{"limit": 0}`, "$.limit"},
			{`{"limit": 101}`, "$.limit"},
			{`{"limit": "ten"}`, "$.limit"},
		}
		for _, r := range refused {
			_, err := d.run(t, &readStaff, "list_orders", r.args)
			refusedAs(t, err, shop.Invalid, r.param)
		}
	})
}

// pages follows next_cursor from the first page of a listing with filters
// args (a JSON object's members) and limit, and returns every id.
func pages[T any](t *testing.T, d *readDesk, tool, args string, limit int, ids func(T) ([]string, string)) []string {
	t.Helper()
	var all []string
	cursor := ""
	for range 100 {
		call := fmt.Sprintf(`{%s"limit": %d, "cursor": %q}`, args, limit, cursor)
		got, next := ids(runAs[T](t, d, tool, call))
		if len(got) > limit || (next != "" && len(got) != limit) {
			t.Fatalf("%s(%s): %d rows, next %q", tool, call, len(got), next)
		}
		all = append(all, got...)
		if cursor = next; cursor == "" {
			return all
		}
	}
	t.Fatalf("%s: no last page", tool)
	return nil
}

func orderIDs(l orders.OrderList) ([]string, string) {
	var ids []string
	for _, o := range l.Orders {
		ids = append(ids, o.ID)
	}
	return ids, l.NextCursor
}

func eventIDs(l orders.AuditList) ([]string, string) {
	var ids []string
	for _, e := range l.Events {
		ids = append(ids, e.ID)
	}
	return ids, l.NextCursor
}

func TestListOrdersPaging(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		d := newReadDesk(t, db)
		for i := range 7 {
			email := []string{"a@example.com", "b@example.com"}[i%2]
			d.place(t, email, "N", day0.Add(time.Duration(i/3)*time.Hour), orders.StatusConfirmed) // three share a time
		}
		for _, filter := range []string{``, `"email": "a@example.com", `, `"created_from": "2025-10-01T01:00:00Z", `} {
			want, _ := orderIDs(runAs[orders.OrderList](t, d, "list_orders", "{"+filter+`"limit": 100}`))
			for limit := 1; limit <= 4; limit++ {
				if diff := cmp.Diff(want, pages(t, d, "list_orders", filter, limit, orderIDs)); diff != "" {
					t.Errorf("pages of %d with {%s} (-one listing +pages):\n%s", limit, filter, diff)
				}
			}
		}
		first := runAs[orders.OrderList](t, d, "list_orders", `{"limit": 2}`)
		events := runAs[orders.AuditList](t, d, "list_audit_events", `{"limit": 2}`)
		for _, args := range []string{
			`{"cursor": "garbage!"}`,
			`{"cursor": "eyJ2IjoxfQ"}`,
			`{"cursor": "` + strings.Repeat("A", 400) + `"}`,
			`{"cursor": "` + first.NextCursor + `", "email": "a@example.com"}`,
			`{"cursor": "` + first.NextCursor + `", "created_to": "2026-01-01"}`,
			`{"cursor": "` + events.NextCursor + `"}`,
		} {
			_, err := d.run(t, &readStaff, "list_orders", args)
			refusedAs(t, err, shop.Invalid, "$.cursor")
		}
		_, err := d.run(t, &readStaff, "list_audit_events", `{"cursor": "`+first.NextCursor+`"}`)
		refusedAs(t, err, shop.Invalid, "$.cursor")
		if _, err := d.run(t, &readStaff, "list_orders", `{"cursor": "`+first.NextCursor+`", "limit": 5}`); err != nil {
			t.Errorf("a cursor with another limit: %v", err)
		}
	})
}

func TestAdminGetOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		d := newReadDesk(t, db)
		d.channel = "acp"
		ord := d.place(t, "jane@example.com", "Jane Doe", day0, orders.StatusPartiallyShipped)
		at := func(m int) time.Time { return day0.Add(time.Duration(m) * time.Minute) }
		d.exec(t, "UPDATE orders SET refunded = 700 WHERE id = ?", ord.ID)
		d.exec(t, "UPDATE order_lines SET fulfilled = 2, restocked = 0 WHERE order_id = ? AND position = 0", ord.ID)
		d.exec(t, "UPDATE order_lines SET restocked = 1 WHERE order_id = ? AND position = 1", ord.ID)
		d.refund(t, ord.ID, 500, "succeeded", at(3))
		d.refund(t, ord.ID, 200, "pending", at(4))
		d.exec(t, `INSERT INTO fulfilments (id, order_id, carrier, tracking_number, tracking_url, lines, actor, created_at)
			VALUES ('ful_1', ?, 'UPS', '1Z999', 'https://ups.example/1Z999', '[{"line_id":"li_1","quantity":2}]', 'support:t', ?)`, ord.ID, at(5))
		d.exec(t, "INSERT INTO order_notes (id, order_id, actor, note, created_at) VALUES ('note_1', ?, 'support:t', 'gift wrap', ?)", ord.ID, at(6))
		// The payment attempts of the order's session, as checkout keeps
		// them: the token cleared on settling, the card kept.
		const attempt = `INSERT INTO payment_attempts (id, session_id, attempt, idempotency_key, provider, mode, token, amount, currency,
			status, reference, decline_code, message, card_brand, card_last4, created_at, updated_at) VALUES (?, ?, ?, ?, 'stripe', 'test', '', 5210, 'usd', ?, ?, ?, ?, ?, ?, ?, ?)`
		d.exec(t, attempt, "pa_2", ord.CheckoutSessionID, 2, "k_2", "succeeded", "pi_123", "", "", "mastercard", "4444", at(-1), at(-1))
		d.exec(t, attempt, "pa_1", ord.CheckoutSessionID, 1, "k_1", "declined", "pi_122", "insufficient_funds", "Your card has insufficient funds.", "visa", "9995", at(-2), at(-2))
		d.exec(t, attempt, "pa_0", ord.CheckoutSessionID, 0, "k_0", "requires_action", "pi_121", "", "Your card needs 3D Secure.", "visa", "3184", at(-3), at(-3))
		d.exec(t, attempt, "pa_3", ord.CheckoutSessionID, 3, "k_3", "orphaned", "pi_124", "", "", "", "", at(-1), at(0))
		// Payments no order took (paid twice), each with its refund, as
		// checkout keeps them; another session's is not this order's.
		const surplus = `INSERT INTO surplus_payments (id, session_id, provider, reference, amount, currency, reason, status, refund_reference, message,
			created_at, updated_at) VALUES (?, ?, 'stripe', ?, 5210, 'usd', 'the session was already paid', ?, ?, ?, ?, ?)`
		d.exec(t, surplus, "sp_2", ord.CheckoutSessionID, "pi_126", "failed", "", "charge already refunded", at(8), at(9))
		d.exec(t, surplus, "sp_1", ord.CheckoutSessionID, "pi_125", "refunded", "re_9", "succeeded", at(7), at(8))
		addSession(t, db, "cs_other")
		d.exec(t, surplus, "sp_3", "cs_other", "pi_127", "pending", "", "", at(7), at(7))
		for i, action := range []string{"refund_order", "fulfill_order"} {
			d.now = at(10 + i)
			err := d.o.Audit(ctx, nil, orders.Event{Actor: "owner:t", Action: action, OrderID: ord.ID, Arguments: map[string]int{"n": i}, After: "x"})
			if err != nil {
				t.Fatal(err)
			}
		}
		d.now = at(20)
		if err := d.o.Audit(ctx, nil, orders.Event{Actor: "owner:t", Action: "refund_order", OrderID: "ord_other"}); err != nil {
			t.Fatal(err)
		}

		res, err := d.run(t, &readStaff, "get_order", `{"order_id": " `+ord.ID+` "}`)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Structured.(orders.OrderDetailResult).Order
		wantOrder := *ord
		wantOrder.Status, wantOrder.Receipt.Status, wantOrder.Receipt.CreatedAt = "partially_shipped", "partially_shipped", day0
		wantOrder.Receipt.Tracking = []contract.Tracking{{Carrier: "UPS", TrackingNumber: "1Z999", TrackingURL: "https://ups.example/1Z999",
			ShippedAt: got.Fulfilments[0].CreatedAt}}
		if diff := cmp.Diff(wantOrder, got.Order); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
		wantRest := orders.OrderDetail{
			Refunded: usd.Price(700), Channel: "acp",
			Lines: []orders.LineProgress{{ID: "li_1", VariantID: "mug-slate", Name: "Enamel mug, slate", Quantity: 2, Fulfilled: 2},
				{ID: "li_2", VariantID: "tee-m", Name: "T-shirt, M", Quantity: 1, Restocked: 1}},
			PaymentAttempts: []orders.PaymentAttemptRecord{
				{ID: "pa_0", Attempt: 0, Status: "requires_action", Amount: usd.Price(5210), Provider: "stripe", Mode: "test", Reference: "pi_121",
					Message: "Your card needs 3D Secure.", CardBrand: "visa", CardLast4: "3184", CreatedAt: at(-3), UpdatedAt: at(-3)},
				{ID: "pa_1", Attempt: 1, Status: "declined", Amount: usd.Price(5210), Provider: "stripe", Mode: "test", Reference: "pi_122",
					DeclineCode: "insufficient_funds", Message: "Your card has insufficient funds.", CardBrand: "visa", CardLast4: "9995", CreatedAt: at(-2), UpdatedAt: at(-2)},
				{ID: "pa_2", Attempt: 2, Status: "succeeded", Amount: usd.Price(5210), Provider: "stripe", Mode: "test", Reference: "pi_123",
					CardBrand: "mastercard", CardLast4: "4444", CreatedAt: at(-1), UpdatedAt: at(-1)},
				{ID: "pa_3", Attempt: 3, Status: "orphaned", Amount: usd.Price(5210), Provider: "stripe", Mode: "test", Reference: "pi_124",
					CreatedAt: at(-1), UpdatedAt: at(0)}},
			PaymentAttemptsTotal: 4,
			SurplusPayments: []orders.SurplusPaymentRecord{
				{ID: "sp_1", Amount: usd.Price(5210), Provider: "stripe", Reference: "pi_125", Reason: "the session was already paid",
					Refund: orders.SurplusRefund{Status: "refunded", Reference: "re_9", Message: "succeeded"}, CreatedAt: at(7), UpdatedAt: at(8)},
				{ID: "sp_2", Amount: usd.Price(5210), Provider: "stripe", Reference: "pi_126", Reason: "the session was already paid",
					Refund: orders.SurplusRefund{Status: "failed", Message: "charge already refunded"}, CreatedAt: at(8), UpdatedAt: at(9)}},
			Refunds: []orders.RefundRecord{
				{ID: "ref_2", Amount: usd.Price(500), Reason: "damaged", Status: "succeeded", Reference: "re_2", Actor: "owner:t", CreatedAt: at(3)},
				{ID: "ref_3", Amount: usd.Price(200), Reason: "damaged", Status: "pending", Reference: "re_3", Actor: "owner:t", CreatedAt: at(4)}},
			Fulfilments: []orders.FulfilmentRecord{{ID: "ful_1", Carrier: "UPS", TrackingNumber: "1Z999", TrackingURL: "https://ups.example/1Z999",
				Lines: json.RawMessage(`[{"line_id":"li_1","quantity":2}]`), Actor: "support:t", CreatedAt: at(5)}},
			Notes:  []orders.NoteRecord{{ID: "note_1", Note: "gift wrap", Actor: "support:t", CreatedAt: at(6)}},
			Emails: []orders.EmailRecord{}, // this shop sends none
		}
		got.Order, wantRest.AuditTrail = contract.Order{}, got.AuditTrail
		if diff := cmp.Diff(wantRest, got); diff != "" {
			t.Errorf("detail (-want +got):\n%s", diff)
		}
		var trail []string
		for _, e := range got.AuditTrail {
			trail = append(trail, fmt.Sprintf("%s %s %s %s %s", e.At.Format(time.RFC3339), e.Action, e.Actor, e.Arguments, e.After))
		}
		wantTrail := []string{"2025-10-01T00:00:00Z order.created checkout " + `{"payment":{"provider":"stripe","mode":"test","reference":"pi_123","status":""}}`,
			`2025-10-01T00:10:00Z refund_order owner:t {"n":0} "x"`, `2025-10-01T00:11:00Z fulfill_order owner:t {"n":1} "x"`}
		wantTrail[0] += " " + string(got.AuditTrail[0].After) // the receipt, compared above
		if diff := cmp.Diff(wantTrail, trail); diff != "" {
			t.Errorf("audit trail (-want +got):\n%s", diff)
		}
		for _, s := range []string{"Order 1001", "Refunded $7.00", "Line li_1 (Enamel mug, slate): 2 ordered, 2 fulfilled", "UPS 1Z999", "gift wrap", "fulfill_order by owner:t",
			"Payment attempt 1 declined (insufficient_funds): $52.10 with visa •••• 9995 (stripe test pi_122).",
			"Payment attempt 2 succeeded: $52.10 with mastercard •••• 4444 (stripe test pi_123).",
			"Payment attempt 0 requires action: $52.10 with visa •••• 3184 (stripe test pi_121).",
			"Payment attempt 3 orphaned: $52.10 (stripe test pi_124).",
			"Surplus payment sp_1 of $52.10 (stripe pi_125): the session was already paid; refund refunded (re_9).",
			"Surplus payment sp_2 of $52.10 (stripe pi_126): the session was already paid; refund failed: charge already refunded; refund it by hand."} {
			if !strings.Contains(res.Text, s) {
				t.Errorf("text %q lacks %q", res.Text, s)
			}
		}
		for _, r := range []struct {
			args  string
			code  shop.Code
			param string
		}{
			{`{"order_id": "ord_` + strings.Repeat("a", 26) + `"}`, shop.NotFound, "$.order_id"},
			{`{}`, shop.Missing, "$.order_id"},
			{`{"order_id": "1001"}`, shop.Invalid, "$.order_id"},
			{`{"order_id": 1001}`, shop.Invalid, "$.order_id"},
		} {
			_, err := d.run(t, &readStaff, "get_order", r.args)
			refusedAs(t, err, r.code, r.param)
		}
	})
}

func TestSalesReport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		d := newReadDesk(t, db)
		micro := time.Microsecond
		place := func(at time.Time, total int64, status orders.Status) string {
			ord := d.place(t, "b@example.com", "B", at, status)
			d.exec(t, "UPDATE orders SET total = ? WHERE id = ?", total, ord.ID)
			return ord.ID
		}
		a := place(day0, 1000, "confirmed")
		b := place(day0.Add(24*time.Hour-micro), 2500, "canceled") // counted: gross is what was charged
		c := place(day0.Add(36*time.Hour), 4000, "refunded")
		before := place(day0.Add(-micro), 700, "confirmed")
		place(day0.Add(72*time.Hour), 900, "confirmed")
		d.refund(t, b, 2500, "succeeded", day0.Add(32*time.Hour))
		d.refund(t, c, 300, "pending", day0.Add(40*time.Hour))
		d.refund(t, c, 1000, "succeeded", day0.Add(58*time.Hour))
		d.refund(t, a, 100, "failed", day0.Add(50*time.Hour))
		d.refund(t, before, 50, "succeeded", day0.Add(-14*time.Hour))
		d.refund(t, c, 200, "succeeded", day0.Add(72*time.Hour))
		fig := func(n, gross, refunds int64) orders.SalesFigures {
			return orders.SalesFigures{Orders: n, Gross: usd.Price(gross), Refunds: usd.Price(refunds), Net: usd.Price(gross - refunds)}
		}
		want := &orders.SalesReport{Currency: "usd", From: "2025-10-01", To: "2025-10-03", Days: []orders.SalesDay{
			{Date: "2025-10-01", SalesFigures: fig(2, 3500, 0)},
			{Date: "2025-10-02", SalesFigures: fig(1, 4000, 2500)},
			{Date: "2025-10-03", SalesFigures: fig(0, 0, 1000)},
		}, Totals: fig(3, 7500, 3500)}
		res, err := d.run(t, &readStaff, "sales_report", `{"from": "2025-10-01", "to": "2025-10-03"}`)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, res.Structured); diff != "" {
			t.Errorf("sales_report (-want +got):\n%s", diff)
		}
		if !strings.Contains(res.Text, "2025-10-03: 0 orders, gross $0.00, refunds $10.00, net -$10.00") {
			t.Errorf("text %q", res.Text)
		}
		d.now = day0.Add(2*24*time.Hour + 15*time.Hour) // 2025-10-03 15:00
		for _, r := range []struct {
			args, from, to string
			days, orders   int
			gross, refunds int64
		}{
			{`{}`, "2025-09-27", "2025-10-03", 7, 4, 8200, 3550},
			{`{"from": "2025-10-02"}`, "2025-10-02", "2025-10-03", 2, 1, 4000, 3500},
			{`{"to": "2025-10-01"}`, "2025-09-25", "2025-10-01", 7, 3, 4200, 50},
			{`{"from": "2024-01-01", "to": "2024-12-31"}`, "2024-01-01", "2024-12-31", 366, 0, 0, 0},
		} {
			got := runAs[*orders.SalesReport](t, d, "sales_report", r.args)
			if got.From != r.from || got.To != r.to || len(got.Days) != r.days || got.Totals != fig(int64(r.orders), r.gross, r.refunds) {
				t.Errorf("sales_report(%s) = %s..%s, %d days, totals %+v", r.args, got.From, got.To, len(got.Days), got.Totals)
			}
		}
		for _, r := range []struct{ args, param string }{
			{`{"from": "2025-10-03", "to": "2025-10-02"}`, "$.to"},
			{`{"from": "2025-01-01", "to": "2026-01-02"}`, "$.from"},
			{`{"from": "2025-13-01"}`, "$.from"},
			{`{"to": "10/01/2025"}`, "$.to"},
			{`{"to": "2025-10-01T00:00:00Z"}`, "$.to"},
		} {
			_, err := d.run(t, &readStaff, "sales_report", r.args)
			refusedAs(t, err, shop.Invalid, r.param)
		}
	})
}

func TestListAuditEvents(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		d := newReadDesk(t, db)
		x := d.place(t, "x@example.com", "X", day0, "confirmed").ID // order.created at day0
		y := d.place(t, "y@example.com", "Y", day0, "confirmed").ID
		type ev struct {
			min           int
			actor, action string
			order         string
		}
		for _, e := range []ev{
			{1, "owner:aaa", "refund_order", x}, {2, "support:bbb", "add_order_note", x}, {3, "support:bbb", "fulfill_order", y},
			{4, "owner:aaa", "adjust_inventory", ""}, {5, "owner:aaa", "refund_order", y}, {5, "owner:aaa", "cancel_order", y},
		} {
			d.now = day0.Add(time.Duration(e.min) * time.Minute)
			err := d.o.Audit(ctx, nil, orders.Event{Actor: e.actor, Action: e.action, OrderID: e.order, Arguments: map[string]any{"m": e.min}})
			if err != nil {
				t.Fatal(err)
			}
		}
		all := runAs[orders.AuditList](t, d, "list_audit_events", `{"limit": 100}`).Events
		if len(all) != 8 {
			t.Fatalf("%d events, want 8", len(all))
		}
		for i := 1; i < len(all); i++ {
			if p, e := all[i-1], all[i]; p.At.Before(e.At) || (p.At.Equal(e.At) && p.ID < e.ID) {
				t.Errorf("events %d and %d out of order: %v %s, %v %s", i-1, i, p.At, p.ID, e.At, e.ID)
			}
		}
		if e := all[len(all)-1]; e.Before != nil || e.Action != "order.created" || !strings.Contains(string(e.After), `"order_id"`) {
			t.Errorf("oldest event %+v; want order.created with a receipt after and a null before", e)
		}
		if e := all[0]; string(e.Arguments) != `{"m":5}` || e.After != nil {
			t.Errorf("newest event arguments %s, after %s", e.Arguments, e.After)
		}
		cases := []struct {
			name, args string
			keep       func(orders.AuditEntry) bool
		}{
			{"Order", `"order_id": "` + x + `", `, func(e orders.AuditEntry) bool { return e.OrderID == x }},
			{"Actor", `"actor": "owner:aaa", `, func(e orders.AuditEntry) bool { return e.Actor == "owner:aaa" }},
			{"Tool", `"tool": "refund_order", `, func(e orders.AuditEntry) bool { return e.Action == "refund_order" }},
			{"From", `"from": "2025-10-01T00:03:00Z", `, func(e orders.AuditEntry) bool { return !e.At.Before(day0.Add(3 * time.Minute)) }},
			{"To", `"to": "2025-10-01T00:03:00Z", `, func(e orders.AuditEntry) bool { return e.At.Before(day0.Add(3 * time.Minute)) }},
			{"Day", `"from": "2025-10-01", "to": "2025-10-02", `, func(orders.AuditEntry) bool { return true }},
			{"NextDay", `"from": "2025-10-02", `, func(orders.AuditEntry) bool { return false }},
			{"Combined", `"order_id": "` + y + `", "actor": "owner:aaa", "from": "2025-10-01T00:05:00+00:00", `,
				func(e orders.AuditEntry) bool { return e.OrderID == y && e.Actor == "owner:aaa" }},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var want []string
				for _, e := range all {
					if tc.keep(e) {
						want = append(want, e.ID)
					}
				}
				if len(want) == 0 && tc.name != "NextDay" {
					t.Fatal("the case keeps no event")
				}
				for _, limit := range []int{1, 2, 50} {
					if diff := cmp.Diff(want, pages(t, d, "list_audit_events", tc.args, limit, eventIDs)); diff != "" {
						t.Errorf("limit %d (-want +got):\n%s", limit, diff)
					}
				}
			})
		}
		res, err := d.run(t, &readStaff, "list_audit_events", `{"limit": 3}`)
		if err != nil {
			t.Fatal(err)
		}
		first := res.Structured.(orders.AuditList)
		if len(first.Events) != 3 || first.NextCursor == "" || strings.Count(res.Text, "\n") != 3 {
			t.Errorf("first page %+v: %s", first, res.Text)
		}
		for _, r := range []struct{ args, param string }{
			{`{"order_id": "1001"}`, "$.order_id"},
			{`{"actor": "` + strings.Repeat("a", 101) + `"}`, "$.actor"},
			{`{"tool": "` + strings.Repeat("a", 65) + `"}`, "$.tool"},
			{`{"from": "now"}`, "$.from"},
			{`{"from": "2025-10-02", "to": "2025-10-01"}`, "$.to"},
			{`{"limit": 1000}`, "$.limit"},
			{`{"cursor": "` + first.NextCursor + `", "tool": "refund_order"}`, "$.cursor"},
			{`{"cursor": "%%%"}`, "$.cursor"},
		} {
			_, err := d.run(t, &readStaff, "list_audit_events", r.args)
			refusedAs(t, err, shop.Invalid, r.param)
		}
	})
}
