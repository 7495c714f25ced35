package checkout_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/contract"
	"shop/database/dbtest"
	"shop/orders"
	"shop/payments"
)

// paying is the demo shop with a payment provider: the sandbox unless the
// test stands its own at the Charger seam.
type paying struct {
	co      *checkout.Checkout
	clk     *clock
	db      *gorm.DB
	sandbox *payments.Sandbox
}

func payingShop(t testing.TB, db *gorm.DB, charger checkout.Charger) *paying {
	t.Helper()
	return payingShopWith(t, db, charger, nil)
}

// payingShopWith is payingShop with the demo policy changed by edit (when
// not nil).
func payingShopWith(t testing.TB, db *gorm.DB, charger checkout.Charger, edit func(*checkout.Policy)) *paying {
	t.Helper()
	return payingShopOpts(t, db, &checkout.Options{Charger: charger}, edit)
}

// payingShopOpts is payingShopWith with opts, whose nil Charger is the
// sandbox.
func payingShopOpts(t testing.TB, db *gorm.DB, opts *checkout.Options, edit func(*checkout.Policy)) *paying {
	t.Helper()
	clk := &clock{now: time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)}
	sandbox := payments.NewSandbox(db, &payments.SandboxOptions{Now: clk.Now})
	if opts.Charger == nil {
		opts.Charger = sandbox
	}
	return &paying{co: newCheckoutWith(t, db, clk, opts, edit), clk: clk, db: db, sandbox: sandbox}
}

// newCheckout is the demo shop's checkout on db, its catalog seeded, with
// clk and opts (Now, Orders and ReconcileGrace are set here).
func newCheckout(t testing.TB, db *gorm.DB, clk *clock, opts *checkout.Options) *checkout.Checkout {
	t.Helper()
	return newCheckoutWith(t, db, clk, opts, nil)
}

// newCheckoutWith is newCheckout with the demo policy changed by edit (when
// not nil).
func newCheckoutWith(t testing.TB, db *gorm.DB, clk *clock, opts *checkout.Options, edit func(*checkout.Policy)) *checkout.Checkout {
	t.Helper()
	ctx := context.Background()
	policy, err := checkout.LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(policy)
	}
	cat := catalog.New(db, policy.Currency(), &catalog.Options{Now: clk.Now})
	if _, err := cat.SeedIfEmpty(ctx, os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
		t.Fatal(err)
	}
	key, err := orders.LoadReceiptKey(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	opts.Now, opts.ReconcileGrace = clk.Now, time.Second
	opts.Orders = orders.New(db, &orders.Options{ReceiptKey: key, Now: clk.Now})
	return checkout.New(db, policy, cat, opts)
}

// ready creates a session that is ready for payment.
func (p *paying) ready(t testing.TB) *checkout.Session {
	t.Helper()
	s, err := p.co.Create(context.Background(), checkout.Request{
		Items:   items("enamel-camp-mug-forest-green", 2, "stoneware-coffee-mug-16-oz", 1),
		Address: californian, Buyer: &checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"},
	})
	if err != nil || s.Status != checkout.Ready {
		t.Fatalf("ready session: %v %+v", err, s)
	}
	return s
}

func pay(token string) checkout.PaymentData {
	return checkout.PaymentData{Token: token, Provider: "stripe"}
}

func (p *paying) count(t *testing.T, table string) int64 {
	t.Helper()
	var n int64
	if err := p.db.Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func stock(t *testing.T, db *gorm.DB, variant string) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT stock FROM variants WHERE id = ?", variant).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestComplete(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		before := stock(t, db, "enamel-camp-mug-forest-green")
		s := p.ready(t)
		done, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil {
			t.Fatal(err)
		}
		if done.Status != checkout.Completed || done.Order == nil {
			t.Fatalf("completed: %s %+v", done.Status, done.Messages)
		}
		r := done.Order.Receipt
		if diff := cmp.Diff(s.Totals, r.Totals); diff != "" {
			t.Errorf("receipt totals differ from the session's (-session +receipt):\n%s", diff)
		}
		// The receipt keeps what was bought and its figures; the product's
		// description, for the payment sheet, is the session's alone.
		if diff := cmp.Diff(s.LineItems, r.LineItems, cmpopts.IgnoreFields(contract.LineItem{}, "Description")); diff != "" {
			t.Errorf("receipt lines differ from the session's (-session +receipt):\n%s", diff)
		}
		if r.Email != "ada@example.com" || r.Payment.Mode != "test" || r.Payment.Reference == "" || done.Order.PermalinkURL == "" {
			t.Errorf("receipt %+v", r)
		}
		if got := stock(t, db, "enamel-camp-mug-forest-green"); got != before-2 {
			t.Errorf("stock %d after selling 2 of %d", got, before)
		}
		if n := p.count(t, "stock_holds"); n != 0 {
			t.Errorf("%d holds left after completion", n)
		}

		t.Run("ReplayAnotherToken", func(t *testing.T) {
			again, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa_chargeDeclined")})
			if err != nil {
				t.Fatal(err)
			}
			if again.Order == nil || again.Order.ID != done.Order.ID {
				t.Fatalf("replay answered another order: %+v", again.Order)
			}
			if n := p.count(t, "sandbox_charges"); n != 1 {
				t.Errorf("%d charges after a replay, want 1", n)
			}
		})
		t.Run("ErrUpdateCompleted", func(t *testing.T) {
			if _, err := p.co.Update(ctx, s.ID, checkout.Request{PromoCode: ptr("")}); shop.ErrorCode(err) != shop.Invalid {
				t.Errorf("update of a completed session: %v", err)
			}
		})
	})
}

func TestCompleteDeclines(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		for _, tc := range []struct{ token, code string }{
			{"pm_card_visa_chargeDeclined", "payment_declined"},
			{"pm_card_chargeDeclinedInsufficientFunds", "payment_declined"},
			{"pm_card_authenticationRequired", "requires_3ds"},
		} {
			got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay(tc.token)})
			if err != nil {
				t.Fatalf("%s: %v", tc.token, err)
			}
			if got.Status != checkout.Ready || len(got.Messages) == 0 || got.Messages[0].Code != tc.code || got.Order != nil {
				t.Fatalf("%s: %s %+v", tc.token, got.Status, got.Messages)
			}
		}
		// Another card pays.
		got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil || got.Status != checkout.Completed {
			t.Fatalf("after declines: %v %s", err, got.Status)
		}
		if n := p.count(t, "payment_attempts"); n != 4 {
			t.Errorf("%d attempts, want 4", n)
		}
	})
}

func TestCompleteRefusals(t *testing.T) {
	dbtest.Each(t, testCompleteRefusals)
}

func testCompleteRefusals(t *testing.T, db *gorm.DB) {
	ctx := context.Background()
	p := payingShop(t, db, nil)
	// This session expires: the others are made later, and live on.
	expired := p.ready(t)
	p.clk.Add(checkout.DefaultTTL - time.Minute)
	canceled := p.ready(t)
	if _, err := p.co.Cancel(ctx, canceled.ID); err != nil {
		t.Fatal(err)
	}
	notReady, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1)})
	if err != nil {
		t.Fatal(err)
	}
	noEmail, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian})
	if err != nil {
		t.Fatal(err)
	}
	ready := p.ready(t)
	p.clk.Add(2 * time.Minute)
	cases := []struct {
		name  string
		req   checkout.CompleteRequest
		code  shop.Code
		param string
	}{
		{"ErrCanceled", checkout.CompleteRequest{SessionID: canceled.ID, Payment: pay("pm_card_visa")}, shop.Invalid, "$.checkout_session_id"},
		{"ErrExpired", checkout.CompleteRequest{SessionID: expired.ID, Payment: pay("pm_card_visa")}, shop.Expired, "$.checkout_session_id"},
		{"ErrNotReady", checkout.CompleteRequest{SessionID: notReady.ID, Payment: pay("pm_card_visa")}, shop.Invalid, "$.checkout_session_id"},
		{"ErrNoEmail", checkout.CompleteRequest{SessionID: noEmail.ID, Payment: pay("pm_card_visa")}, shop.Missing, "$.buyer.email"},
		{"ErrOtherProvider", checkout.CompleteRequest{SessionID: ready.ID, Payment: checkout.PaymentData{Token: "tok_1", Provider: "paypal"}}, shop.Invalid, "$.payment_data.provider"},
		{"ErrNoToken", checkout.CompleteRequest{SessionID: ready.ID, Payment: checkout.PaymentData{Provider: "stripe"}}, shop.Missing, "$.payment_data.token"},
		{"ErrUnknownSession", checkout.CompleteRequest{SessionID: "cs_nosuch", Payment: pay("pm_card_visa")}, shop.NotFound, "$.checkout_session_id"},
		{"OK", checkout.CompleteRequest{SessionID: ready.ID, Payment: pay("pm_card_visa")}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.co.Complete(ctx, tc.req)
			var e *shop.Error
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.As(err, &e) || e.Code != tc.code || e.Param != tc.param {
				t.Errorf("got %v, want %s at %s", err, tc.code, tc.param)
			}
		})
	}
	if n := p.count(t, "sandbox_charges"); n != 1 {
		t.Errorf("%d charges, want only the ready session's", n)
	}
}

// liveCharger is a provider in live mode, to check that test payment
// methods are refused there; it never charges.
type liveCharger struct{ calls int }

func (l *liveCharger) Name() string        { return "stripe" }
func (l *liveCharger) Mode() payments.Mode { return payments.ModeLive }
func (l *liveCharger) Charge(context.Context, payments.Request) (*payments.Result, error) {
	l.calls++
	return nil, errors.New("a live charge in a test")
}
func (l *liveCharger) Lookup(context.Context, string) (*payments.Result, bool, error) {
	return nil, false, nil
}

func TestCompleteTestTokenInLiveMode(t *testing.T) {
	live := &liveCharger{}
	p := payingShop(t, dbtest.Open(t, "sqlite"), live)
	s := p.ready(t)
	_, err := p.co.Complete(context.Background(), checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
	if shop.ErrorCode(err) != shop.Invalid || live.calls != 0 {
		t.Errorf("test token in live mode: %v, %d charges", err, live.calls)
	}
}

// TestCompleteConcurrently: 32 calls at once on one session give one order
// and one charge; every caller sees that order or a retryable message.
func TestCompleteConcurrently(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		var wg sync.WaitGroup
		results := make([]*checkout.Session, 32)
		errs := make([]error, 32)
		for i := range results {
			wg.Go(func() {
				results[i], errs[i] = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
			})
		}
		wg.Wait()
		orderIDs := map[string]bool{}
		for i, r := range results {
			switch {
			case errs[i] != nil && shop.ErrorCode(errs[i]) == shop.Conflict:
			case errs[i] != nil:
				t.Fatalf("call %d: %v", i, errs[i])
			case r.Status == checkout.Completed:
				orderIDs[r.Order.ID] = true
			case r.Status == checkout.InProgress:
			default:
				t.Errorf("call %d: status %s", i, r.Status)
			}
		}
		if len(orderIDs) != 1 {
			t.Errorf("callers saw %d orders, want 1", len(orderIDs))
		}
		for table, want := range map[string]int64{"orders": 1, "sandbox_charges": 1, "payment_attempts": 1} {
			if n := p.count(t, table); n != want {
				t.Errorf("%s: %d rows, want %d", table, n, want)
			}
		}
		final, err := p.co.Get(ctx, s.ID)
		if err != nil || final.Status != checkout.Completed {
			t.Fatalf("final: %v %s", err, final.Status)
		}
	})
}

func TestCompletePriceAndStockMoved(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		if err := db.Exec("UPDATE variants SET price = price + 100 WHERE id = ?", "stoneware-coffee-mug-16-oz").Error; err != nil {
			t.Fatal(err)
		}
		got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != checkout.NotReady || got.Messages[0].Code != "price_changed" {
			t.Fatalf("after a price change: %s %+v", got.Status, got.Messages)
		}
		// The buyer sees the new price; an update makes it ready again.
		got, err = p.co.Update(ctx, s.ID, checkout.Request{})
		if err != nil || got.Status != checkout.Ready {
			t.Fatalf("update after a price change: %v %s", err, got.Status)
		}
		if err := db.Exec("UPDATE variants SET stock = 0 WHERE id = ?", "enamel-camp-mug-forest-green").Error; err != nil {
			t.Fatal(err)
		}
		got, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != checkout.NotReady || got.Messages[0].Code != "out_of_stock" {
			t.Fatalf("after stock ran out: %s %+v", got.Status, got.Messages)
		}
		if n := p.count(t, "sandbox_charges"); n != 0 {
			t.Errorf("%d charges, want none", n)
		}
	})
}

// lostAnswer is the sandbox whose answers are lost on the way back: the
// charge happens (or not), the caller hears nothing.
type lostAnswer struct {
	*payments.Sandbox
	charge bool
}

func (l *lostAnswer) Charge(ctx context.Context, r payments.Request) (*payments.Result, error) {
	if l.charge {
		if _, err := l.Sandbox.Charge(ctx, r); err != nil {
			return nil, err
		}
	}
	return nil, payments.ErrUnknownOutcome
}

func TestReconcile(t *testing.T) {
	ctx := context.Background()
	for _, charged := range []bool{true, false} {
		name := map[bool]string{true: "ChargedAnswerLost", false: "NeverReachedProvider"}[charged]
		t.Run(name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				lost := &lostAnswer{charge: charged}
				p := payingShop(t, db, lost)
				lost.Sandbox = p.sandbox
				s := p.ready(t)
				got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
				if err != nil || got.Status != checkout.InProgress {
					t.Fatalf("with the answer lost: %v %s", err, got.Status)
				}
				// Within the grace period the reconciler leaves it alone.
				if n, err := p.co.Reconcile(ctx); err != nil || n != 0 {
					t.Fatalf("reconcile within grace: %d %v", n, err)
				}
				p.clk.Add(2 * time.Second)
				if n, err := p.co.Reconcile(ctx); err != nil || n != 1 {
					t.Fatalf("reconcile: %d %v", n, err)
				}
				got, err = p.co.Get(ctx, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				want, orders := checkout.Ready, int64(0)
				if charged {
					want, orders = checkout.Completed, 1
				}
				if got.Status != want || p.count(t, "orders") != orders {
					t.Fatalf("after reconcile: %s, %d orders; want %s, %d", got.Status, p.count(t, "orders"), want, orders)
				}
				if charged {
					return
				}
				// Never charged: the buyer can pay again, and is charged once.
				again := payingShop(t, db, nil)
				got, err = again.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
				if err != nil || got.Status != checkout.Completed {
					t.Fatalf("paying again: %v %s", err, got.Status)
				}
				if n := p.count(t, "sandbox_charges"); n != 1 {
					t.Errorf("%d charges, want 1", n)
				}
			})
		})
	}
}

// slowCharge is the sandbox charging only when let go, and a provider whose
// lookups lag behind: the case of a charge slower than the reconciler's
// grace period.
type slowCharge struct {
	*payments.Sandbox
	letGo chan struct{}
}

func (s *slowCharge) Charge(ctx context.Context, r payments.Request) (*payments.Result, error) {
	<-s.letGo
	return s.Sandbox.Charge(ctx, r)
}

func (s *slowCharge) Lookup(context.Context, string) (*payments.Result, bool, error) {
	return nil, false, nil
}

// TestOrphanedCharge: a charge that succeeds after the reconciler gave its
// attempt up is recorded as orphaned, no order is written for it, and it is
// refunded in full at once and kept as a surplus payment.
func TestOrphanedCharge(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, "sqlite")
	slow := &slowCharge{letGo: make(chan struct{})}
	p := payingShop(t, db, slow)
	slow.Sandbox = p.sandbox
	s := p.ready(t)
	done := make(chan *checkout.Session, 1)
	go func() {
		got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	for deadline := time.Now().Add(10 * time.Second); p.count(t, "payment_attempts") == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no payment attempt")
		}
	}
	p.clk.Add(2 * time.Second)
	if n, err := p.co.Reconcile(ctx); err != nil || n != 1 {
		t.Fatalf("reconcile gave up %d attempts (%v), want 1", n, err)
	}
	close(slow.letGo)
	<-done
	var status string
	db.Raw("SELECT status FROM payment_attempts").Scan(&status)
	if status != "orphaned" || p.count(t, "orders") != 0 || p.count(t, "sandbox_charges") != 1 {
		t.Errorf("attempt %s, %d orders, %d charges; want orphaned, 0, 1", status, p.count(t, "orders"), p.count(t, "sandbox_charges"))
	}
	// The orphaned attempt keeps the charge's reference and card, for the
	// staff to find the payment the buyer asks about.
	if diff := cmp.Diff([]attemptCard{{Status: "orphaned", Reference: "pi_…", CardBrand: "visa", CardLast4: "4242"}}, attemptCards(t, db, s.ID)); diff != "" {
		t.Errorf("orphaned attempt (-want +got):\n%s", diff)
	}
	if got, _ := p.co.Get(ctx, s.ID); got.Status != checkout.Ready {
		t.Errorf("session %s, want ready_for_payment again", got.Status)
	}
	var surplus struct {
		Status, Reason, RefundReference string
		Amount                          int64
	}
	db.Raw("SELECT status, reason, refund_reference, amount FROM surplus_payments").Scan(&surplus)
	if surplus.Status != "refunded" || surplus.RefundReference == "" || surplus.Amount != s.Totals[len(s.Totals)-1].Amount {
		t.Errorf("surplus payment %+v; want refunded in full", surplus)
	}
	var refunded int64
	db.Raw("SELECT COALESCE(SUM(amount), 0) FROM sandbox_refunds").Scan(&refunded)
	if refunded != surplus.Amount {
		t.Errorf("sandbox refunded %d, want %d", refunded, surplus.Amount)
	}
	if n, err := p.co.Reconcile(ctx); err != nil || n != 0 {
		t.Errorf("reconcile after the refund settled %d (%v), want 0", n, err)
	}
}
