package orders_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/contract"
	"shop/database/dbtest"
	"shop/orders"
	"shop/payments"
)

// staffShop is the demo shop with orders paid in the sandbox and the staff's
// administration over them.
type staffShop struct {
	db    *gorm.DB
	co    *checkout.Checkout
	admin *orders.Admin
	ret   *orders.Returns
	ords  *orders.Orders
	now   time.Time
	mu    sync.Mutex
}

func (s *staffShop) clock() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

func (s *staffShop) advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(d)
}

// newStaffShop opens the demo shop on db, paid in the sandbox; refunds go
// to refunder, or to the sandbox when none is given.
func newStaffShop(t *testing.T, db *gorm.DB, refunder ...orders.Refunder) *staffShop {
	t.Helper()
	var r orders.Refunder
	if len(refunder) > 0 {
		r = refunder[0]
	}
	return newStaffShopWith(t, db, nil, r)
}

// newStaffShopWith opens the demo shop on db, charging through charger and
// refunding through refunder; either is the sandbox when nil. emails, when
// given, has the orders email their buyers.
func newStaffShopWith(t *testing.T, db *gorm.DB, charger checkout.Charger, refunder orders.Refunder, emails ...*orders.Emails) *staffShop {
	t.Helper()
	ctx := context.Background()
	s := &staffShop{db: db, now: time.Now().UTC()}
	policy, err := checkout.LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.New(db, policy.Currency(), &catalog.Options{Now: s.clock})
	if _, err := cat.SeedIfEmpty(ctx, os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
		t.Fatal(err)
	}
	sandbox := payments.NewSandbox(db, &payments.SandboxOptions{Now: s.clock})
	if charger == nil {
		charger = sandbox
	}
	if refunder == nil {
		refunder = sandbox
	}
	opts := &orders.Options{Now: s.clock, PaymentAttempts: checkout.PaymentAttempts}
	if len(emails) > 0 {
		opts.Emails = emails[0]
	}
	o := orders.New(db, opts)
	s.co = checkout.New(db, policy, cat, &checkout.Options{Now: s.clock, Charger: charger, Orders: o})
	s.admin = orders.NewAdmin(o, cat, refunder)
	s.ret, s.ords = orders.NewReturns(s.admin, policy.Returns), o
	return s
}

// order places a paid order of n mugs and returns it.
func (s *staffShop) order(t *testing.T, n int) *contract.Order {
	t.Helper()
	done, err := s.pay(t, n, "pm_card_visa")
	if err != nil || done.Order == nil {
		t.Fatalf("order: %v %+v", err, done)
	}
	return done.Order
}

// pay checks out n mugs and pays with token.
func (s *staffShop) pay(t *testing.T, n int, token string) (*checkout.Session, error) {
	t.Helper()
	ctx := context.Background()
	cs, err := s.co.Create(ctx, checkout.Request{
		Items:   &[]checkout.Item{{ID: "enamel-camp-mug-cream", Quantity: int64(n)}},
		Address: &checkout.Address{Name: "Ada", LineOne: "1 Market St", City: "San Francisco", State: "CA", Country: "US", PostalCode: "94105"},
		Buyer:   &checkout.Buyer{Email: "ada@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s.co.Complete(ctx, checkout.CompleteRequest{SessionID: cs.ID, Payment: checkout.PaymentData{Token: token, Provider: "stripe"}})
}

// paid is what an order charged.
func paid(ord *contract.Order) int64 { return ord.Receipt.Totals[len(ord.Receipt.Totals)-1].Amount }

// status is an order's status as get_order shows it.
func (s *staffShop) status(t *testing.T, orderID string) orders.Status {
	t.Helper()
	got, err := s.call(t, viewer, "get_order", map[string]any{"order_id": orderID})
	if err != nil {
		t.Fatal(err)
	}
	order, _ := got["order"].(map[string]any)
	st, _ := order["status"].(string)
	return orders.Status(st)
}

var (
	owner   = shop.Actor{Role: shop.Owner, Label: "own1"}
	owner2  = shop.Actor{Role: shop.Owner, Label: "own2"}
	support = shop.Actor{Role: shop.Support, Label: "sup1"}
	viewer  = shop.Actor{Role: shop.Viewer, Label: "view1"}
)

// call runs an admin tool as actor.
func (s *staffShop) call(t *testing.T, actor shop.Actor, tool string, args map[string]any) (map[string]any, error) {
	t.Helper()
	return callTool(t, shop.WithActor(context.Background(), actor), append(s.admin.Tools(), s.ret.AdminTools()...), tool, args)
}

// callTool runs the tool named tool of tools in ctx and decodes its
// structured content.
func callTool(t *testing.T, ctx context.Context, tools []shop.Tool, tool string, args map[string]any) (map[string]any, error) {
	t.Helper()
	for _, tl := range tools {
		if tl.Name != tool {
			continue
		}
		raw, _ := json.Marshal(args)
		res, err := tl.Handle(ctx, raw)
		if err != nil {
			return nil, err
		}
		b, _ := json.Marshal(res.Structured)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return out, nil
	}
	t.Fatalf("no tool %s", tool)
	return nil, nil
}

// twoStep previews then confirms an action as actor.
func (s *staffShop) twoStep(t *testing.T, actor shop.Actor, tool string, args map[string]any) (map[string]any, error) {
	t.Helper()
	prev, err := s.call(t, actor, tool, args)
	if err != nil {
		return nil, err
	}
	args["confirm"] = prev["confirm"]
	defer delete(args, "confirm")
	return s.call(t, actor, tool, args)
}

func code(err error) shop.Code { return shop.ErrorCode(err) }

func stockOf(t *testing.T, db *gorm.DB, variant string) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT stock FROM variants WHERE id = ?", variant).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRoles(t *testing.T) {
	dbtest.Each(t, testRoles)
}

func testRoles(t *testing.T, db *gorm.DB) {
	s := newStaffShop(t, db)
	ord := s.order(t, 1)
	need := map[string]shop.Role{
		"list_orders": shop.Viewer, "get_order": shop.Viewer, "sales_report": shop.Viewer, "list_audit_events": shop.Viewer,
		"fulfill_order": shop.Support, "add_order_note": shop.Support,
		"refund_order": shop.Owner, "cancel_order": shop.Owner, "adjust_inventory": shop.Owner,
	}
	args := map[string]map[string]any{
		"get_order":        {"order_id": ord.ID},
		"fulfill_order":    {"order_id": ord.ID, "carrier": "USPS", "tracking_number": "9400"},
		"add_order_note":   {"order_id": ord.ID, "note": "Gift wrap, please."},
		"refund_order":     {"order_id": ord.ID, "amount": 1, "reason": "test"},
		"cancel_order":     {"order_id": ord.ID, "reason": "test"},
		"adjust_inventory": {"variant_id": "enamel-camp-mug-cream", "add": 1, "reason": "test"},
	}
	if len(s.admin.Tools()) != len(need) {
		t.Fatalf("%d admin tools, want %d", len(s.admin.Tools()), len(need))
	}
	for tool, role := range need {
		for _, actor := range []shop.Actor{viewer, support, owner} {
			t.Run(tool+"/"+string(actor.Role), func(t *testing.T) {
				a := args[tool]
				if a == nil {
					a = map[string]any{}
				}
				_, err := s.call(t, actor, tool, a)
				forbidden := code(err) == shop.Forbidden
				if forbidden == actor.Role.Allows(role) {
					t.Errorf("%s as %s: %v (needs %s)", tool, actor.Role, err, role)
				}
			})
		}
	}
	t.Run("ErrNoActor", func(t *testing.T) {
		raw := json.RawMessage(`{}`)
		_, err := s.admin.Tools()[0].Handle(context.Background(), raw)
		if code(err) != shop.Forbidden {
			t.Errorf("no actor: %v", err)
		}
	})
}

func TestTwoStep(t *testing.T) {
	dbtest.Each(t, testTwoStep)
}

func testTwoStep(t *testing.T, db *gorm.DB) {
	s := newStaffShop(t, db)
	ord := s.order(t, 2)
	args := map[string]any{"order_id": ord.ID, "amount": 100, "reason": "scratched"}
	prev, err := s.call(t, owner, "refund_order", args)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := prev["confirm"].(string)
	if !strings.HasPrefix(token, "cfm_") || prev["preview"] == nil {
		t.Fatalf("preview %+v", prev)
	}
	var refunds int64
	s.db.Raw("SELECT COUNT(*) FROM refunds").Scan(&refunds)
	if refunds != 0 {
		t.Fatal("a preview refunded")
	}
	confirmWith := func(actor shop.Actor, tok string, a map[string]any) error {
		c := map[string]any{}
		for k, v := range a {
			c[k] = v
		}
		c["confirm"] = tok
		_, err := s.call(t, actor, "refund_order", c)
		return err
	}
	cases := []struct {
		name   string
		actor  shop.Actor
		token  string
		args   map[string]any
		reason string
	}{
		{"ErrOtherArguments", owner, token, map[string]any{"order_id": ord.ID, "amount": 101, "reason": "scratched"}, "other arguments"},
		{"ErrOtherActor", owner2, token, args, "another staff member"},
		{"ErrOtherTool", owner, token, nil, "is for refund_order"},
		{"ErrUnknownToken", owner, "cfm_nonsense", args, "not issued"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.args == nil {
				_, err = s.call(t, tc.actor, "adjust_inventory", map[string]any{"variant_id": "enamel-camp-mug-cream", "add": 1, "reason": "x", "confirm": tc.token})
			} else {
				err = confirmWith(tc.actor, tc.token, tc.args)
			}
			var e *shop.Error
			if !errors.As(err, &e) || e.Param != "$.confirm" || !strings.Contains(e.Message, tc.reason) {
				t.Errorf("got %v, want a $.confirm error saying %q", err, tc.reason)
			}
		})
	}
	if err := confirmWith(owner, token, args); err != nil {
		t.Fatalf("the right confirmation: %v", err)
	}
	if err := confirmWith(owner, token, args); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("reuse: %v", err)
	}
	late, err := s.call(t, owner, "refund_order", args)
	if err != nil {
		t.Fatal(err)
	}
	s.advance(orders.ConfirmTTL + time.Second)
	if err := confirmWith(owner, late["confirm"].(string), args); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("late: %v", err)
	}
}

func TestRefunds(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newStaffShop(t, db)
		ord := s.order(t, 2)
		total := ord.Receipt.Totals[len(ord.Receipt.Totals)-1].Amount
		before := stockOf(t, db, "enamel-camp-mug-cream")
		// Three partial refunds summing to the total; one cent more is refused.
		parts := []int64{total / 3, total / 3, total - 2*(total/3)}
		for i, p := range parts {
			a := map[string]any{"order_id": ord.ID, "amount": p, "reason": "partial"}
			if i == 0 {
				a["restock"] = []map[string]any{{"line_id": ord.Receipt.LineItems[0].ID, "quantity": 1}}
			}
			if _, err := s.twoStep(t, owner, "refund_order", a); err != nil {
				t.Fatalf("refund %d of %d: %v", i+1, p, err)
			}
		}
		if _, err := s.call(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": 1, "reason": "one cent more"}); code(err) != shop.Invalid {
			t.Errorf("a cent past the total: %v", err)
		}
		if got := stockOf(t, db, "enamel-camp-mug-cream"); got != before+1 {
			t.Errorf("stock %d after restocking 1 of %d", got, before)
		}
		if st := s.status(t, ord.ID); st != orders.StatusRefunded {
			t.Errorf("get_order shows the order %q after refunds summing to its total, want %q", st, orders.StatusRefunded)
		}
		// The buyer's receipt lists each refund with its amount, and their sum.
		rec, err := orders.New(db, nil).Get(context.Background(), ord.ID, ord.Receipt.Email)
		if err != nil {
			t.Fatal(err)
		}
		var amounts []int64
		for _, r := range rec.Receipt.Refunds {
			amounts = append(amounts, r.Amount)
		}
		slices.Sort(amounts) // the test's clock stands still: the three share a time
		if want := slices.Sorted(slices.Values(parts)); !slices.Equal(amounts, want) || rec.Receipt.RefundedAmount != total {
			t.Errorf("receipt refunds %v (sum %d), want %v (sum %d)", amounts, rec.Receipt.RefundedAmount, parts, total)
		}
		var charged, refunded int64
		db.Raw("SELECT amount FROM sandbox_charges").Scan(&charged)
		db.Raw("SELECT COALESCE(SUM(amount), 0) FROM sandbox_refunds").Scan(&refunded)
		if charged != total || refunded != total {
			t.Errorf("provider: charged %d, refunded %d; want %d each", charged, refunded, total)
		}
	})
}

// yesRefunder refunds whatever it is asked, as no real provider would: so
// only the shop's own bookkeeping stands between an order and an
// over-refund.
type yesRefunder struct {
	mu     sync.Mutex
	amount int64
}

func (y *yesRefunder) Name() string { return "sandbox" }

func (y *yesRefunder) Refund(_ context.Context, r payments.RefundRequest) (*payments.Refund, error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.amount += r.Amount
	return &payments.Refund{Reference: "re_yes_" + r.IdempotencyKey, Amount: r.Amount, Status: "succeeded"}, nil
}

// TestConcurrentRefunds: refunds at once never exceed what was paid, by the
// shop's own account, whatever the provider would allow.
func TestConcurrentRefunds(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		yes := &yesRefunder{}
		s := newStaffShop(t, db, yes)
		ord := s.order(t, 1)
		total := ord.Receipt.Totals[len(ord.Receipt.Totals)-1].Amount
		piece := total/4 + 1 // four of these are more than the total
		tokens := make([]string, 8)
		for i := range tokens {
			prev, err := s.call(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": piece, "reason": "race"})
			if err != nil {
				t.Fatal(err)
			}
			tokens[i] = prev["confirm"].(string)
		}
		var wg sync.WaitGroup
		for _, tok := range tokens {
			wg.Go(func() {
				_, _ = s.call(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": piece, "reason": "race", "confirm": tok})
			})
		}
		wg.Wait()
		var recorded int64
		refunded := yes.amount
		db.Raw("SELECT refunded FROM orders WHERE id = ?", ord.ID).Scan(&recorded)
		if refunded > total || refunded != 3*piece || recorded != refunded {
			t.Errorf("refunded %d at the provider, %d on the order; total %d, piece %d", refunded, recorded, total, piece)
		}
	})
}

func TestCancelAndFulfil(t *testing.T) {
	dbtest.Each(t, testCancelAndFulfil)
}

func testCancelAndFulfil(t *testing.T, db *gorm.DB) {
	s := newStaffShop(t, db)
	before := stockOf(t, s.db, "enamel-camp-mug-cream")
	canceled := s.order(t, 3)
	if got := stockOf(t, s.db, "enamel-camp-mug-cream"); got != before-3 {
		t.Fatalf("stock %d after selling 3 of %d", got, before)
	}
	if _, err := s.twoStep(t, owner, "cancel_order", map[string]any{"order_id": canceled.ID, "reason": "buyer asked"}); err != nil {
		t.Fatal(err)
	}
	if got := stockOf(t, s.db, "enamel-camp-mug-cream"); got != before {
		t.Errorf("stock %d after cancel with restock, want %d", got, before)
	}
	if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": canceled.ID, "carrier": "USPS", "tracking_number": "1"}); code(err) != shop.Invalid || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("fulfilling a canceled order: %v", err)
	}

	shipped := s.order(t, 2)
	line := shipped.Receipt.LineItems[0].ID
	out, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": shipped.ID, "carrier": "USPS", "tracking_number": "9400-1",
		"lines": []map[string]any{{"line_id": line, "quantity": 1}}})
	if err != nil || out["status"] != string(orders.StatusPartiallyShipped) {
		t.Fatalf("first parcel: %v %v", err, out)
	}
	if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": shipped.ID, "carrier": "USPS", "tracking_number": "9400-2",
		"lines": []map[string]any{{"line_id": line, "quantity": 2}}}); code(err) != shop.Invalid {
		t.Errorf("over-shipping: %v", err)
	}
	out, err = s.call(t, support, "fulfill_order", map[string]any{"order_id": shipped.ID, "carrier": "UPS", "tracking_number": "1Z"})
	if err != nil || out["status"] != string(orders.StatusShipped) {
		t.Fatalf("second parcel: %v %v", err, out)
	}
	if _, err := s.call(t, owner, "cancel_order", map[string]any{"order_id": shipped.ID, "reason": "too late"}); code(err) != shop.Invalid || !strings.Contains(err.Error(), "shipped") {
		t.Errorf("canceling a shipped order: %v", err)
	}
	if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": canceled.ID, "delivered": true}); code(err) != shop.Invalid ||
		!strings.Contains(err.Error(), "is canceled") {
		t.Errorf("delivering a canceled order: %v; want invalid, naming its state", err)
	}
	if out, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": shipped.ID, "delivered": true}); err != nil || out["status"] != string(orders.StatusDelivered) {
		t.Fatalf("delivered: %v %v", err, out)
	}
	if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": shipped.ID, "carrier": "UPS", "tracking_number": "1Z2"}); code(err) != shop.Invalid || !strings.Contains(err.Error(), "delivered") {
		t.Errorf("shipping a delivered order: %v", err)
	}
	// Every change is in the audit log, with its actor.
	var actions []string
	s.db.Raw("SELECT action FROM audit_events WHERE order_id = ? ORDER BY at, id", shipped.ID).Scan(&actions)
	if strings.Count(strings.Join(actions, ","), "fulfill_order") != 3 {
		t.Errorf("audit of the shipped order: %v", actions)
	}
	var actors []string
	s.db.Raw("SELECT DISTINCT actor FROM audit_events WHERE action = 'fulfill_order'").Scan(&actors)
	if len(actors) != 1 || actors[0] != support.String() {
		t.Errorf("fulfilments audited as %v, want %s", actors, support)
	}
}

func TestAdjustInventory(t *testing.T) {
	dbtest.Each(t, testAdjustInventory)
}

func testAdjustInventory(t *testing.T, db *gorm.DB) {
	s := newStaffShop(t, db)
	if _, err := s.twoStep(t, owner, "adjust_inventory", map[string]any{"variant_id": "enamel-camp-mug-cream", "set": 7, "reason": "count"}); err != nil {
		t.Fatal(err)
	}
	if got := stockOf(t, s.db, "enamel-camp-mug-cream"); got != 7 {
		t.Errorf("stock %d, want 7", got)
	}
	if _, err := s.call(t, owner, "adjust_inventory", map[string]any{"variant_id": "enamel-camp-mug-cream", "add": -8, "reason": "broken"}); code(err) != shop.Invalid {
		t.Errorf("below zero: %v", err)
	}
	if _, err := s.call(t, owner, "adjust_inventory", map[string]any{"variant_id": "no-such-variant", "add": 1, "reason": "x"}); code(err) != shop.NotFound {
		t.Errorf("unknown variant: %v", err)
	}
	if _, err := s.call(t, owner, "adjust_inventory", map[string]any{"variant_id": "enamel-camp-mug-cream", "add": 1, "set": 3, "reason": "x"}); code(err) != shop.Invalid {
		t.Errorf("both set and add: %v", err)
	}
}
