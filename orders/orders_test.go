package orders_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/contract"
	"shop/database/dbtest"
	"shop/orders"
)

var clock = time.Date(2025, 10, 1, 12, 30, 0, 123456789, time.UTC)

const publicURL = "https://shop.example.com"

func newOrders(db *gorm.DB) *orders.Orders {
	return orders.New(db, &orders.Options{
		PublicURL:  publicURL + "/",
		ReceiptKey: []byte(strings.Repeat("k", 32)),
		Now:        func() time.Time { return clock },
		// get_order reads payment attempts through checkout, as production wiring does.
		PaymentAttempts: checkout.PaymentAttempts,
	})
}

// addSession writes the checkout session an order refers to.
func addSession(t testing.TB, db *gorm.DB, id string) {
	t.Helper()
	err := db.Exec(`INSERT INTO checkout_sessions (id, status, version, currency, items, priced, total, expires_at, created_at, updated_at)
		VALUES (?, 'in_progress', 1, 'usd', '[]', '{}', 0, ?, ?, ?)`, id, clock, clock, clock).Error
	if err != nil {
		t.Fatal(err)
	}
}

// sample is a priced order whose figures keep the contract's identities.
func sample(session string) orders.NewOrder {
	day := time.Date(2025, 10, 6, 0, 0, 0, 0, time.UTC)
	return orders.NewOrder{
		SessionID: session,
		Buyer:     &contract.Buyer{Name: "Jane Doe", Email: "Jane@Example.com"},
		Address: &contract.Address{Name: "Jane Doe", LineOne: "1 Main St", City: "Springfield", State: "IL",
			Country: "US", PostalCode: "62701"},
		FulfillmentOption: &contract.FulfillmentOption{Type: "shipping", ID: "standard", Title: "Standard", Subtitle: "3–5 business days",
			Carrier: "USPS", EarliestDeliveryTime: day, LatestDeliveryTime: day.Add(48 * time.Hour), Subtotal: 500, Tax: 40, Total: 540},
		LineItems: []contract.LineItem{
			{ID: "li_1", Item: contract.Item{ID: "mug-slate", Quantity: 2}, Name: "Enamel mug, slate", Images: []string{publicURL + "/static/mug.svg"},
				UnitAmount: 1250, BaseAmount: 2500, Discount: 250, Subtotal: 2250, Tax: 180, Total: 2430},
			{ID: "li_2", Item: contract.Item{ID: "tee-m", Quantity: 1}, Name: "T-shirt, M",
				UnitAmount: 2000, BaseAmount: 2000, Subtotal: 2000, Tax: 200, Total: 2200},
		},
		Totals: []contract.Total{
			{Type: contract.TotalItemsBase, DisplayText: "Items", Amount: 4500},
			{Type: contract.TotalItemsDiscount, DisplayText: "Item discounts", Amount: 250},
			{Type: contract.TotalSubtotal, DisplayText: "Subtotal", Amount: 4250},
			{Type: contract.TotalFulfillment, DisplayText: "Shipping", Amount: 540},
			{Type: contract.TotalTax, DisplayText: "Tax", Amount: 420},
			{Type: contract.TotalTotal, DisplayText: "Total", Amount: 5210},
		},
		Links:    []contract.Link{{Type: "terms_of_use", URL: publicURL + "/static/legal/terms.html"}},
		Currency: "usd",
		Total:    5210,
		Payment:  contract.Payment{Provider: "stripe", Mode: "test", Reference: "pi_123"},
		Display:  contract.Display{TaxName: contract.TaxSales},
	}
}

// want is the order Create should store for in.
func want(in orders.NewOrder, id string, number int64) *contract.Order {
	email := in.Email
	if email == "" {
		email = in.Buyer.Email
	}
	lines := slices.Clone(in.LineItems)
	for i := range lines {
		if lines[i].Images == nil {
			lines[i].Images = []string{}
		}
	}
	return &contract.Order{
		ID: id, CheckoutSessionID: in.SessionID, Number: number, Status: "confirmed",
		Receipt: contract.Receipt{
			OrderID: id, Number: number, Status: "confirmed", CreatedAt: clock.Truncate(time.Microsecond),
			Email: strings.ToLower(strings.TrimSpace(email)), Currency: in.Currency, LineItems: lines,
			FulfillmentAddress: in.Address, FulfillmentOption: in.FulfillmentOption, Totals: in.Totals, Links: in.Links,
			Payment: contract.Payment{Provider: in.Payment.Provider, Mode: in.Payment.Mode, Reference: in.Payment.Reference, Status: "succeeded"},
			Display: in.Display,
		},
	}
}

func create(t testing.TB, o *orders.Orders, db *gorm.DB, in orders.NewOrder) *contract.Order {
	t.Helper()
	var ord *contract.Order
	err := db.Transaction(func(tx *gorm.DB) error {
		var err error
		ord, err = o.Create(context.Background(), tx, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ord
}

func count(t testing.TB, db *gorm.DB, query string) int64 {
	t.Helper()
	var n int64
	if err := db.Raw(query).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateReadBack(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		o := newOrders(db)
		second := sample("cs_2")
		second.Buyer, second.Email = nil, "  Bob@Example.org "
		second.LineItems = second.LineItems[1:]
		second.LineItems[0].Images = nil
		second.FulfillmentOption, second.Address, second.Links = nil, nil, nil
		for i, in := range []orders.NewOrder{sample("cs_1"), second} {
			addSession(t, db, in.SessionID)
			created := create(t, o, db, in)
			w := want(in, created.ID, int64(1001+i))
			if w.Receipt.Links == nil {
				w.Receipt.Links = []contract.Link{}
			}
			w.PermalinkURL = o.PermalinkURL(created.ID)
			if diff := cmp.Diff(w, created); diff != "" {
				t.Errorf("Create(%s) (-want +got):\n%s", in.SessionID, diff)
			}
			if !strings.HasPrefix(created.PermalinkURL, publicURL+"/orders/"+created.ID+"?t=") || !orders.ValidID(created.ID) || len(created.ID) != len("ord_")+35 {
				t.Errorf("id %q, permalink %q", created.ID, created.PermalinkURL)
			}
			token := created.PermalinkURL[strings.Index(created.PermalinkURL, "?t=")+3:]
			reads := map[string]func() (*contract.Order, error){
				"BySession":   func() (*contract.Order, error) { return o.BySession(ctx, nil, in.SessionID) },
				"Get":         func() (*contract.Order, error) { return o.Get(ctx, created.ID, strings.ToUpper(w.Receipt.Email)+" ") },
				"ByPermalink": func() (*contract.Order, error) { return o.ByPermalink(ctx, created.ID, token) },
			}
			for name, read := range reads {
				got, err := read()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if diff := cmp.Diff(created, got); diff != "" {
					t.Errorf("%s (-created +read):\n%s", name, diff)
				}
			}
			if n := count(t, db, fmt.Sprintf("SELECT COUNT(*) FROM audit_events WHERE action = 'order.created' AND actor = 'checkout' AND order_id = '%s' AND session_id = '%s'", created.ID, in.SessionID)); n != 1 {
				t.Errorf("%d order.created audit events, want 1", n)
			}
		}
		if n := count(t, db, "SELECT COUNT(*) FROM audit_events WHERE after LIKE '%?t=%'"); n != 0 {
			t.Errorf("%d audit events keep a receipt token", n)
		}
		if got, err := o.BySession(ctx, nil, "cs_none"); got != nil || err != nil {
			t.Errorf("BySession(unknown) = %v, %v; want nil, nil", got, err)
		}
	})
}

func TestCreateRefuses(t *testing.T) {
	bad := func(f func(*orders.NewOrder)) orders.NewOrder { in := sample("cs_1"); f(&in); return in }
	cases := map[string]orders.NewOrder{
		"NoSession":       bad(func(in *orders.NewOrder) { in.SessionID = "" }),
		"NoEmail":         bad(func(in *orders.NewOrder) { in.Buyer = nil }),
		"UnknownCurrency": bad(func(in *orders.NewOrder) { in.Currency = "xxx" }),
		"NoLines":         bad(func(in *orders.NewOrder) { in.LineItems = nil }),
		"TotalMismatch":   bad(func(in *orders.NewOrder) { in.Total = 1 }),
		"ZeroQuantity":    bad(func(in *orders.NewOrder) { in.LineItems[0].Item.Quantity = 0 }),
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		o := newOrders(db)
		addSession(t, db, "cs_1")
		for name, in := range cases {
			if _, err := o.Create(context.Background(), nil, in); err == nil {
				t.Errorf("%s: Create succeeded", name)
			}
		}
		if n := count(t, db, "SELECT COUNT(*) FROM orders"); n != 0 {
			t.Errorf("%d orders written", n)
		}
	})
}

func TestCreateConcurrent(t *testing.T) {
	const n = 20
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		o := newOrders(db)
		for i := range n {
			addSession(t, db, fmt.Sprintf("cs_%d", i))
		}
		numbers := make([]int64, n)
		ids := map[string]bool{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				err := db.Transaction(func(tx *gorm.DB) error {
					ord, err := o.Create(context.Background(), tx, sample(fmt.Sprintf("cs_%d", i)))
					if err == nil {
						numbers[i] = ord.Number
						mu.Lock()
						ids[ord.ID] = true
						mu.Unlock()
					}
					return err
				})
				if err != nil {
					t.Errorf("Create %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		slices.Sort(numbers)
		var wantNumbers []int64
		for i := range n {
			wantNumbers = append(wantNumbers, int64(1001+i))
		}
		if diff := cmp.Diff(wantNumbers, numbers); diff != "" {
			t.Errorf("order numbers (-want +got):\n%s", diff)
		}
		if len(ids) != n {
			t.Errorf("%d distinct ids, want %d", len(ids), n)
		}
	})
}

func TestCreateTwice(t *testing.T) {
	counts := func(t *testing.T, db *gorm.DB) map[string]int64 {
		return map[string]int64{
			"orders":      count(t, db, "SELECT COUNT(*) FROM orders"),
			"order_lines": count(t, db, "SELECT COUNT(*) FROM order_lines"),
			"audit":       count(t, db, "SELECT COUNT(*) FROM audit_events"),
			"counter":     count(t, db, "SELECT value FROM counters WHERE name = 'order_number'"),
		}
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		o := newOrders(db)
		t.Run("Sequential", func(t *testing.T) {
			addSession(t, db, "cs_1")
			first := create(t, o, db, sample("cs_1"))
			before := counts(t, db)
			err := db.Transaction(func(tx *gorm.DB) error {
				again := sample("cs_1")
				again.Payment.Reference = "pi_other"
				if _, err := o.Create(ctx, tx, again); !errors.Is(err, orders.ErrExists) {
					t.Errorf("second Create: %v, want ErrExists", err)
				}
				// The caller's transaction is still usable and finds the first order.
				got, err := o.BySession(ctx, tx, "cs_1")
				if err != nil {
					return err
				}
				if diff := cmp.Diff(first, got); diff != "" {
					t.Errorf("BySession after ErrExists (-first +got):\n%s", diff)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, counts(t, db)); diff != "" {
				t.Errorf("rows after a refused second Create (-before +after):\n%s", diff)
			}
		})
		t.Run("Racing", func(t *testing.T) {
			// A holds its order uncommitted while B starts: on PostgreSQL, B's
			// first check sees nothing and its insert hits the unique session;
			// on SQLite, B waits for the write lock and its check sees A's order.
			addSession(t, db, "cs_2")
			before := counts(t, db)
			started := make(chan struct{})
			var errB error
			var wg sync.WaitGroup
			errA := db.Transaction(func(tx *gorm.DB) error {
				if _, err := o.Create(ctx, tx, sample("cs_2")); err != nil {
					return err
				}
				wg.Go(func() {
					close(started)
					errB = db.Transaction(func(tx *gorm.DB) error {
						_, err := o.Create(ctx, tx, sample("cs_2"))
						if !errors.Is(err, orders.ErrExists) {
							return fmt.Errorf("second Create: %v, want ErrExists", err)
						}
						got, err := o.BySession(ctx, tx, "cs_2")
						if err == nil && got == nil {
							err = errors.New("BySession found no order after ErrExists")
						}
						return err
					})
				})
				<-started
				time.Sleep(100 * time.Millisecond) // let B reach its insert
				return nil
			})
			wg.Wait()
			if errA != nil || errB != nil {
				t.Fatalf("first: %v; second: %v", errA, errB)
			}
			wantAfter := map[string]int64{"orders": before["orders"] + 1, "order_lines": before["order_lines"] + 2,
				"audit": before["audit"] + 1, "counter": before["counter"] + 1}
			if diff := cmp.Diff(wantAfter, counts(t, db)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	})
}

// refusal is what a caller learns from an error.
func refusal(err error) *shop.Error {
	var e *shop.Error
	if !errors.As(err, &e) {
		return &shop.Error{Message: fmt.Sprintf("not a *shop.Error: %v", err)}
	}
	return e
}

func TestGet(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		o := newOrders(db)
		addSession(t, db, "cs_1")
		ord := create(t, o, db, sample("cs_1"))
		unknown := "ord_" + strings.Repeat("a", 26)
		_, wrongEmail := o.Get(ctx, ord.ID, "someone@example.com")
		_, unknownID := o.Get(ctx, unknown, "jane@example.com")
		if wrongEmail == nil || unknownID == nil {
			t.Fatalf("errors %v, %v; want not_found twice", wrongEmail, unknownID)
		}
		if diff := cmp.Diff(refusal(wrongEmail), refusal(unknownID)); diff != "" {
			t.Errorf("wrong email and unknown id answer differently (-wrong email +unknown id):\n%s", diff)
		}
		cases := []struct {
			name, id, email string
			code            shop.Code
			param           string
		}{
			{"OK", ord.ID, "jane@example.com", "", ""},
			{"OKCaseAndSpaces", " " + ord.ID, "  JANE@example.COM\t", "", ""},
			{"WrongEmail", ord.ID, "jane@example.org", shop.NotFound, ""},
			{"UnknownID", unknown, "jane@example.com", shop.NotFound, ""},
			{"MissingID", "", "jane@example.com", shop.Missing, "$.order_id"},
			{"InvalidID", "ord_ABC", "jane@example.com", shop.Invalid, "$.order_id"},
			{"SessionIDAsOrderID", "cs_1", "jane@example.com", shop.Invalid, "$.order_id"},
			{"MissingEmail", ord.ID, "  ", shop.Missing, "$.email"},
			{"InvalidEmail", ord.ID, "jane", shop.Invalid, "$.email"},
			{"EmailWithSpace", ord.ID, "jane doe@example.com", shop.Invalid, "$.email"},
			{"LongEmail", ord.ID, strings.Repeat("a", 250) + "@example.com", shop.Invalid, "$.email"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got, err := o.Get(ctx, tc.id, tc.email)
				if tc.code == "" {
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(ord, got); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
					return
				}
				e := refusal(err)
				if got != nil || e.Code != tc.code || e.Param != tc.param {
					t.Errorf("Get = %v, %v; want code %s param %q", got, err, tc.code, tc.param)
				}
			})
		}
	})
}

func TestAudit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		o := newOrders(db)
		e := orders.Event{Actor: "owner:alice", Action: "order.noted", OrderID: "ord_x", SessionID: "cs_x",
			Arguments: map[string]string{"note": "gift"}, Before: nil, After: []int{1, 2}}
		if err := o.Audit(ctx, nil, e); err != nil {
			t.Fatal(err)
		}
		var got struct{ Actor, Action, OrderID, SessionID, Arguments, Before, After string }
		if err := db.Raw("SELECT actor, action, order_id, session_id, arguments, before, after FROM audit_events").Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		wantRow := struct{ Actor, Action, OrderID, SessionID, Arguments, Before, After string }{
			"owner:alice", "order.noted", "ord_x", "cs_x", `{"note":"gift"}`, "", "[1,2]"}
		if diff := cmp.Diff(wantRow, got); diff != "" {
			t.Errorf("audit row (-want +got):\n%s", diff)
		}
		if err := o.Audit(ctx, nil, orders.Event{Action: "x"}); err == nil {
			t.Error("an event without an actor was written")
		}
		if err := o.Audit(ctx, nil, orders.Event{Actor: "a", Action: "x", After: func() {}}); err == nil {
			t.Error("an event that is not JSON was written")
		}
	})
}

// TestValidID: an order id is "ord_" and 35 characters of [a-z2-7] (its
// time, then 130 random bits), or 26 for the orders made before ids carried
// their time; nothing else.
func TestValidID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{orders.NewID(), true},
		{"ord_" + strings.Repeat("a", 26), true},
		{"ord_" + strings.Repeat("a", 35), true},
		{"ord_" + strings.Repeat("a", 25), false},
		{"ord_" + strings.Repeat("a", 27), false},
		{"ord_" + strings.Repeat("a", 34), false},
		{"ord_" + strings.Repeat("a", 36), false},
		{"ord_" + strings.Repeat("1", 35), false},
		{"cs_" + strings.Repeat("a", 35), false},
	} {
		if got := orders.ValidID(tc.id); got != tc.want {
			t.Errorf("ValidID(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}
