package accounts_test

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/accounts"
	"shop/catalog"
	"shop/checkout"
	"shop/contract"
	"shop/database/dbtest"
	"shop/mcptest"
	"shop/orders"
	"shop/payments"
)

// world is the demo shop with accounts: checkout, orders, the staff's
// administration and the accounts' data, wired as cmd/shop wires them.
type world struct {
	db     *gorm.DB
	co     *checkout.Checkout
	ords   *orders.Orders
	admin  *orders.Admin
	data   *accounts.Data
	tools  map[string]shop.Tool
	wallet *payments.Wallet
}

func newWorld(t *testing.T, db *gorm.DB) *world {
	t.Helper()
	ctx := context.Background()
	policy, err := checkout.LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.New(db, policy.Currency(), nil)
	if _, err := cat.SeedIfEmpty(ctx, os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
		t.Fatal(err)
	}
	w := &world{db: db, ords: orders.New(db, &orders.Options{PaymentAttempts: checkout.PaymentAttempts}), tools: map[string]shop.Tool{}}
	sandbox := payments.NewSandbox(db, nil)
	w.wallet = payments.NewWallet(db, sandbox)
	w.admin = orders.NewAdmin(w.ords, cat, sandbox)
	w.co = checkout.New(db, policy, cat, &checkout.Options{Orders: w.ords, Charger: sandbox, Wallet: w.wallet,
		AccountAddress: func(ctx context.Context, id string) (*checkout.Address, error) { return w.data.DefaultAddress(ctx, id) },
		SaveAddress: func(ctx context.Context, tx *gorm.DB, id string, a checkout.Address) error {
			return w.data.SaveOrderAddress(ctx, tx, id, a)
		}})
	w.data = accounts.NewData(db, w.ords, accounts.DataOptions{CheckAddress: w.co.CheckAddress, Wallet: w.wallet,
		EndSessions: w.co.EndAccountSessions})
	for _, tl := range append(append(w.data.Tools(), w.data.AdminTools()...), w.admin.Tools()...) {
		w.tools[tl.Name] = tl
	}
	return w
}

// linked is ctx carrying the linked buyer of account a with scopes (both
// account tools' scopes when none are named).
func linked(a accounts.Account, scopes ...string) context.Context {
	if scopes == nil {
		scopes = []string{accounts.ScopeOrders, accounts.ScopeAccount}
	}
	return shop.WithBuyer(context.Background(), shop.Buyer{AccountID: a.ID, AccountEmail: a.Email, Scopes: scopes})
}

func owner() context.Context {
	return shop.WithActor(context.Background(), shop.Actor{Role: shop.Owner, Label: "test"})
}

// call runs tool name with args, checks its structured content against the
// tool's outputSchema and decodes it into out (when not nil); it returns
// the tool's error.
func (w *world) call(t *testing.T, ctx context.Context, name string, args any, out any) error {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	tool := w.tools[name]
	res, err := tool.Handle(ctx, raw)
	if err != nil {
		return err
	}
	schema, err := mcptest.Compile(tool.OutputSchema)
	if err == nil {
		err = mcptest.Validate(schema, res.Structured)
	}
	if err != nil {
		t.Errorf("%s: %v", name, err)
	}
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero()
		b, err := json.Marshal(res.Structured)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return nil
}

func (w *world) mustCall(t *testing.T, ctx context.Context, name string, args any, out any) {
	t.Helper()
	if err := w.call(t, ctx, name, args, out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// buy makes and pays a session in ctx; buyer and address may be nil (a
// linked buyer's defaults then apply).
func (w *world) buy(t *testing.T, ctx context.Context, buyer *checkout.Buyer, addr *checkout.Address) *contract.Order {
	t.Helper()
	s, err := w.co.Create(ctx, checkout.Request{Items: &[]checkout.Item{{ID: "enamel-camp-mug-forest-green", Quantity: 1}}, Buyer: buyer, Address: addr})
	if err != nil || s.Status != checkout.Ready {
		t.Fatalf("session: %v %+v", err, s)
	}
	done, err := w.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: checkout.PaymentData{Token: "pm_card_visa", Provider: "stripe"}})
	if err != nil || done.Order == nil {
		t.Fatalf("complete: %v %+v", err, done)
	}
	return done.Order
}

var californian = &checkout.Address{Name: "Ada Lovelace", LineOne: "1 Market St", City: "San Francisco", State: "CA", Country: "US", PostalCode: "94105"}

func ensure(t *testing.T, db *gorm.DB, email string) accounts.Account {
	t.Helper()
	a, err := accounts.Ensure(context.Background(), db, email)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func orderIDs(list []contract.Order) []string {
	var ids []string
	for _, o := range list {
		ids = append(ids, o.ID)
	}
	return ids
}

// TestMyOrders: a linked buyer sees the orders their account's sessions
// made and the guest orders placed with their verified email, never
// another's; their sessions start with their email and default address and
// their orders record the account.
func TestMyOrders(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		guest := w.buy(t, context.Background(), &checkout.Buyer{Email: "Ada@Example.com"}, californian) // before any account
		other := w.buy(t, context.Background(), &checkout.Buyer{Email: "carol@example.com"}, californian)
		ada, bob := ensure(t, db, "ada@example.com"), ensure(t, db, "bob@example.com")

		w.mustCall(t, linked(bob), "add_my_address", map[string]any{"address": map[string]any{"name": "Bob", "line_one": "2 Elm St",
			"city": "Portland", "state": "or", "country": "us", "postal_code": "97201"}}, nil)
		bobs := w.buy(t, linked(bob), nil, nil) // email and address from the account
		if r := bobs.Receipt; r.Email != "bob@example.com" || r.FulfillmentAddress == nil || r.FulfillmentAddress.City != "Portland" || r.FulfillmentAddress.State != "OR" {
			t.Fatalf("a linked buyer's session did not start with the account's email and default address: %+v %+v", r.Email, r.FulfillmentAddress)
		}
		// Given another email, the order still belongs to the account.
		bobs2 := w.buy(t, linked(bob), &checkout.Buyer{Email: "bob.work@example.com"}, californian)
		if bobs2.Receipt.Email != "bob.work@example.com" || bobs2.Receipt.FulfillmentAddress.City != "San Francisco" {
			t.Fatalf("what the buyer gave was replaced: %+v", bobs2.Receipt)
		}

		var mine accounts.MyOrders
		w.mustCall(t, linked(ada), "list_my_orders", nil, &mine)
		if got := orderIDs(mine.Orders); len(got) != 1 || got[0] != guest.ID {
			t.Errorf("Ada's orders = %v, want her guest order %s only", got, guest.ID)
		}
		w.mustCall(t, linked(bob), "list_my_orders", map[string]any{"limit": 1}, &mine)
		if got := orderIDs(mine.Orders); len(got) != 1 || got[0] != bobs2.ID || mine.NextCursor == "" {
			t.Fatalf("Bob's first page = %v (next %q), want his newest %s and a cursor", got, mine.NextCursor, bobs2.ID)
		}
		w.mustCall(t, linked(bob), "list_my_orders", map[string]any{"limit": 1, "cursor": mine.NextCursor}, &mine)
		if got := orderIDs(mine.Orders); len(got) != 1 || got[0] != bobs.ID || mine.NextCursor != "" {
			t.Fatalf("Bob's second page = %v (next %q), want %s and no cursor", got, mine.NextCursor, bobs.ID)
		}
		if mine.Orders[0].PermalinkURL == "" || len(mine.Orders[0].Receipt.LineItems) != 1 {
			t.Errorf("an order of list_my_orders lacks its receipt link or lines: %+v", mine.Orders[0])
		}

		var one accounts.MyOrder
		w.mustCall(t, linked(ada), "get_my_order", map[string]any{"order_id": guest.ID}, &one)
		for _, id := range []string{bobs.ID, other.ID} {
			if err := w.call(t, linked(ada), "get_my_order", map[string]any{"order_id": id}, nil); shop.ErrorCode(err) != shop.NotFound {
				t.Errorf("Ada's get_my_order of another's order %s: %v, want not_found", id, err)
			}
		}
		if err := w.call(t, linked(ada), "list_my_orders", map[string]any{"limit": 51}, nil); shop.ErrorCode(err) != shop.Invalid {
			t.Errorf("limit 51: %v, want invalid", err)
		}

		// The staff see which orders came from an account, and filter by it.
		var detail orders.OrderDetailResult
		w.mustCall(t, owner(), "get_order", map[string]any{"order_id": bobs.ID}, &detail)
		if detail.Order.AccountID != bob.ID {
			t.Errorf("admin get_order account_id = %q, want %s", detail.Order.AccountID, bob.ID)
		}
		w.mustCall(t, owner(), "get_order", map[string]any{"order_id": guest.ID}, &detail)
		if detail.Order.AccountID != "" {
			t.Errorf("a guest order's account_id = %q, want none", detail.Order.AccountID)
		}
		var list orders.OrderList
		w.mustCall(t, owner(), "list_orders", map[string]any{"account_id": bob.ID}, &list)
		if len(list.Orders) != 2 || list.Orders[0].ID != bobs2.ID || list.Orders[1].ID != bobs.ID || list.Orders[0].AccountID != bob.ID {
			t.Errorf("list_orders account_id=%s: %+v, want Bob's two orders", bob.ID, list.Orders)
		}
	})
}

// TestTrackingOnReceipts: once staff ship an order, the buyer's receipt
// (get_order, the receipt link, get_my_order) shows the parcel's tracking.
func TestTrackingOnReceipts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		ord := w.buy(t, ctx, &checkout.Buyer{Email: "ada@example.com"}, californian)
		if got, err := w.ords.Get(ctx, ord.ID, "ada@example.com"); err != nil || len(got.Receipt.Tracking) != 0 {
			t.Fatalf("before shipping: %v %+v", err, got)
		}
		w.mustCall(t, owner(), "fulfill_order", map[string]any{"order_id": ord.ID, "carrier": "UPS", "tracking_number": "1Z999",
			"tracking_url": "https://ups.example/track/1Z999"}, nil)
		want := []contract.Tracking{{Carrier: "UPS", TrackingNumber: "1Z999", TrackingURL: "https://ups.example/track/1Z999"}}
		check := func(where string, r contract.Receipt) {
			t.Helper()
			if len(r.Tracking) != 1 || r.Tracking[0].ShippedAt.IsZero() {
				t.Fatalf("%s: tracking %+v, want %+v", where, r.Tracking, want)
			}
			got := r.Tracking[0]
			got.ShippedAt = want[0].ShippedAt
			if got != want[0] {
				t.Errorf("%s: tracking %+v, want %+v", where, got, want[0])
			}
		}
		got, err := w.ords.Get(ctx, ord.ID, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		check("get_order", got.Receipt)
		if !strings.Contains(orders.Summary(got, ""), "UPS, tracking number 1Z999") {
			t.Errorf("get_order's text lacks the tracking: %s", orders.Summary(got, ""))
		}
		_, query, _ := strings.Cut(got.PermalinkURL, "?")
		token := strings.TrimPrefix(query, "t=")
		byLink, err := w.ords.ByPermalink(ctx, ord.ID, token)
		if err != nil {
			t.Fatalf("receipt link %s: %v", got.PermalinkURL, err)
		}
		check("receipt link", byLink.Receipt)
		var one accounts.MyOrder
		w.mustCall(t, linked(ensure(t, db, "ada@example.com")), "get_my_order", map[string]any{"order_id": ord.ID}, &one)
		check("get_my_order", one.Order.Receipt)
	})
}
