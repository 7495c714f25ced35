package checkout_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/orders"
	"shop/payments"
)

// welcomeLimit sets WELCOME10's usage limit (10000 in the demo policy).
func welcomeLimit(limit int) func(*checkout.Policy) {
	return func(p *checkout.Policy) {
		promo, ok := p.Promotion("WELCOME10")
		if !ok {
			panic("the demo policy has no WELCOME10")
		}
		promo.UsageLimit = &limit
	}
}

// welcomeUses is the uses of WELCOME10 taken.
func welcomeUses(t *testing.T, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT COALESCE(SUM(used), 0) FROM promotion_uses WHERE code = ?", "WELCOME10").Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// withWelcome creates a session of variant × quantity with WELCOME10 that
// is ready for payment.
func (p *paying) withWelcome(t *testing.T, variant string, quantity int) *checkout.Session {
	t.Helper()
	s, err := p.co.Create(context.Background(), checkout.Request{
		Items: items(variant, quantity), Address: californian,
		Buyer: &checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"}, PromoCode: ptr("WELCOME10"),
	})
	if err != nil || s.Status != checkout.Ready {
		t.Fatalf("ready session: %v %+v", err, s)
	}
	return s
}

func promoMessage(s *checkout.Session) *checkout.Message {
	for i, m := range s.Messages {
		if m.Param == "$.promo_code" {
			return &s.Messages[i]
		}
	}
	return nil
}

// TestPromoUsageLimit: only orders the promotion applied to use it up; a
// declined payment gives its use back; a session whose promotion ran out
// since it was priced is refused before it is charged, saying so.
func TestPromoUsageLimit(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShopWith(t, db, nil, welcomeLimit(1))
		charges := func() int64 { return p.count(t, "sandbox_charges") }

		// One mug ($18) is below WELCOME10's $25: it does not apply, and the
		// order made does not count.
		small := p.withWelcome(t, "enamel-camp-mug-cream", 1)
		if totals(small)[checkout.TotalItemsDiscount] != 0 || promoMessage(small) == nil || promoMessage(small).Type != checkout.MessageInfo {
			t.Fatalf("below the minimum: totals %v, messages %+v", totals(small), small.Messages)
		}
		done, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: small.ID, Payment: pay("pm_card_visa")})
		if err != nil || done.Status != checkout.Completed {
			t.Fatalf("complete below the minimum: %v %+v", err, done)
		}
		if n := welcomeUses(t, db); n != 0 {
			t.Fatalf("%d uses after an order the code did not apply to, want 0", n)
		}

		// Two mugs ($36): it applies, to this session and to another.
		s := p.withWelcome(t, "enamel-camp-mug-forest-green", 2)
		other := p.withWelcome(t, "enamel-camp-mug-cream", 2)
		for _, x := range []*checkout.Session{s, other} {
			if totals(x)[checkout.TotalItemsDiscount] == 0 {
				t.Fatalf("WELCOME10 not applied: %+v", x.Messages)
			}
		}
		// A declined payment gives its use back.
		got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa_chargeDeclined")})
		if err != nil || got.Status != checkout.Ready || got.Messages[0].Code != "payment_declined" {
			t.Fatalf("declined: %v %+v", err, got)
		}
		if n := welcomeUses(t, db); n != 0 {
			t.Fatalf("%d uses after a decline, want 0", n)
		}
		if totals(got)[checkout.TotalItemsDiscount] == 0 {
			t.Fatalf("after a decline the code no longer applies: %+v", got.Messages)
		}
		// Another card pays, with the discount: the one use is taken.
		got, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil || got.Status != checkout.Completed {
			t.Fatalf("pay after a decline: %v %+v", err, got)
		}
		if d := totals(got)[checkout.TotalItemsDiscount]; d == 0 || got.Order.Receipt.Totals[1].Amount != d {
			t.Errorf("order without the discount: %+v", got.Order.Receipt.Totals)
		}
		if n := welcomeUses(t, db); n != 1 {
			t.Fatalf("%d uses after the order, want 1", n)
		}

		// The other session was priced with the code: it is refused, with
		// nothing charged, and says the code is used up.
		before := charges()
		got, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: other.ID, Payment: pay("pm_card_visa")})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != checkout.NotReady || len(got.Messages) == 0 {
			t.Fatalf("used up: %s %+v", got.Status, got.Messages)
		}
		if m := got.Messages[0]; m.Type != checkout.MessageError || m.Code != "invalid" || m.Param != "$.promo_code" || !strings.Contains(m.Content, "used up") {
			t.Errorf("used up: first message %+v", m)
		}
		if charges() != before || totals(got)[checkout.TotalItemsDiscount] != 0 {
			t.Errorf("used up: %d charges (was %d), totals %v", charges(), before, totals(got))
		}
		// Looked at again, it pays the full price; the use count stays.
		got, err = p.co.Update(ctx, other.ID, checkout.Request{})
		if err != nil || got.Status != checkout.Ready || !strings.Contains(promoMessage(got).Content, "used up") {
			t.Fatalf("update after used up: %v %+v", err, got)
		}
		got, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: other.ID, Payment: pay("pm_card_visa")})
		if err != nil || got.Status != checkout.Completed || totals(got)[checkout.TotalItemsDiscount] != 0 {
			t.Fatalf("full price: %v %+v", err, got)
		}
		if n := welcomeUses(t, db); n != 1 {
			t.Errorf("%d uses, want 1", n)
		}
	})
}

// TestPromoUsageLimitConcurrently: the last use of a code, paid for by many
// sessions at once, goes to one order; the others are refused before any
// charge, saying the code is used up.
func TestPromoUsageLimitConcurrently(t *testing.T) {
	ctx := context.Background()
	const n = 8
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShopWith(t, db, nil, welcomeLimit(1))
		sessions := make([]*checkout.Session, n)
		for i := range sessions {
			sessions[i] = p.withWelcome(t, "enamel-camp-mug-cream", 2)
		}
		results := make([]*checkout.Session, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range sessions {
			wg.Go(func() {
				results[i], errs[i] = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: sessions[i].ID, Payment: pay("pm_card_visa")})
			})
		}
		wg.Wait()
		completed, refused := 0, 0
		for i, r := range results {
			switch {
			case errs[i] != nil && shop.ErrorCode(errs[i]) == shop.Conflict:
				refused++ // answered with a message to try again; nothing charged (counted below)
			case errs[i] != nil:
				t.Fatalf("call %d: %v", i, errs[i])
			case r.Status == checkout.Completed:
				completed++
				if totals(r)[checkout.TotalItemsDiscount] == 0 {
					t.Errorf("call %d: the order has no discount", i)
				}
			case r.Status == checkout.NotReady && len(r.Messages) > 0 && r.Messages[0].Param == "$.promo_code" &&
				r.Messages[0].Type == checkout.MessageError && strings.Contains(r.Messages[0].Content, "used up"):
				refused++
			default:
				t.Errorf("call %d: %s %+v", i, r.Status, r.Messages)
			}
		}
		if completed != 1 || refused != n-1 {
			t.Errorf("%d completed, %d refused; want 1 and %d", completed, refused, n-1)
		}
		for table, want := range map[string]int64{"orders": 1, "sandbox_charges": 1, "payment_attempts": 1} {
			if got := p.count(t, table); got != want {
				t.Errorf("%s: %d rows, want %d", table, got, want)
			}
		}
		if got := welcomeUses(t, db); got != 1 {
			t.Errorf("%d uses, want 1", got)
		}
	})
}

// TestPromoUseInFlight: a payment in flight holds its use of the code
// (taken before the provider is called); when the reconciler gives the
// attempt up, the use comes back.
func TestPromoUseInFlight(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		lost := &lostAnswer{charge: false}
		p := payingShopWith(t, db, lost, welcomeLimit(1))
		lost.Sandbox = p.sandbox
		s := p.withWelcome(t, "enamel-camp-mug-cream", 2)
		got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil || got.Status != checkout.InProgress {
			t.Fatalf("answer lost: %v %+v", err, got)
		}
		if n := welcomeUses(t, db); n != 1 {
			t.Fatalf("%d uses while the payment is in flight, want 1", n)
		}
		// Meanwhile another session cannot have the code.
		other, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-forest-green", 2), Address: californian, PromoCode: ptr("WELCOME10")})
		if err != nil || totals(other)[checkout.TotalItemsDiscount] != 0 || !strings.Contains(promoMessage(other).Content, "used up") {
			t.Fatalf("while in flight: %v %+v", err, other)
		}
		p.clk.Add(2 * time.Second)
		if n, err := p.co.Reconcile(ctx); err != nil || n != 1 {
			t.Fatalf("reconcile: %d %v", n, err)
		}
		got, err = p.co.Get(ctx, s.ID)
		if err != nil || got.Status != checkout.Ready || totals(got)[checkout.TotalItemsDiscount] == 0 {
			t.Fatalf("given up: %v %+v", err, got)
		}
		if n := welcomeUses(t, db); n != 0 {
			t.Errorf("%d uses after the attempt was given up, want 0", n)
		}
	})
}

// recordingCharger passes charges on to a provider and keeps the requests.
type recordingCharger struct {
	checkout.Charger
	mu   sync.Mutex
	reqs []payments.Request
}

func (r *recordingCharger) Charge(ctx context.Context, req payments.Request) (*payments.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Charger.Charge(ctx, req)
}

func (r *recordingCharger) requests() []payments.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]payments.Request(nil), r.reqs...)
}

// TestOrderIDInMetadata: every charge of a session carries the session's id
// and the id its order will have; the order is made under that id, whether
// the caller's call or the reconciler settles it.
func TestOrderIDInMetadata(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Run("DeclinedThenPaid", func(t *testing.T) {
			rec := &recordingCharger{}
			p := payingShop(t, db, rec)
			rec.Charger = p.sandbox
			s := p.ready(t)
			if _, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa_chargeDeclined")}); err != nil {
				t.Fatal(err)
			}
			done, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
			if err != nil || done.Order == nil {
				t.Fatalf("complete: %v %+v", err, done)
			}
			reqs := rec.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d charges, want 2", len(reqs))
			}
			for i, r := range reqs {
				if r.Metadata["order_id"] != done.Order.ID || r.Metadata["checkout_session_id"] != s.ID || r.Metadata["idempotency_key"] != r.IdempotencyKey {
					t.Errorf("charge %d metadata %v; want order_id %s, checkout_session_id %s", i, r.Metadata, done.Order.ID, s.ID)
				}
			}
			if !orders.ValidID(done.Order.ID) {
				t.Errorf("order id %q", done.Order.ID)
			}
		})
		t.Run("Reconciled", func(t *testing.T) {
			rec := &recordingCharger{}
			lost := &lostAnswer{charge: true}
			p := payingShop(t, db, rec)
			lost.Sandbox, rec.Charger = p.sandbox, lost
			s := p.ready(t)
			got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
			if err != nil || got.Status != checkout.InProgress {
				t.Fatalf("answer lost: %v %+v", err, got)
			}
			p.clk.Add(2 * time.Second)
			if _, err := p.co.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			done, err := p.co.Get(ctx, s.ID)
			if err != nil || done.Order == nil {
				t.Fatalf("after reconcile: %v %+v", err, done)
			}
			if reqs := rec.requests(); len(reqs) != 1 || reqs[0].Metadata["order_id"] != done.Order.ID {
				t.Errorf("charges %+v; want one with order_id %s", reqs, done.Order.ID)
			}
		})
	})
}

// TestPromoUsesBackfill: migration 00008 counts the orders made before it
// that a promotion applied to (a line discount, an order discount, free
// shipping), not those whose code did not apply.
func TestPromoUsesBackfill(t *testing.T) {
	ctx := context.Background()
	sql, err := os.ReadFile("../migrations/00008_promotion_uses_order_ids.sql")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(sql), "INSERT INTO promotion_uses")
	end := strings.Index(string(sql)[start:], ";")
	if start < 0 || end < 0 {
		t.Fatal("no backfill in migration 00008")
	}
	backfill := string(sql)[start : start+end]
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		for _, c := range []struct {
			code    string
			variant string
			qty     int
		}{
			{"WELCOME10", "enamel-camp-mug-cream", 2},       // 10 % off the items
			{"WELCOME10", "enamel-camp-mug-cream", 1},       // below $25: not applied
			{"SAVE5", "enamel-camp-mug-forest-green", 3},    // $5 off the order
			{"FREESHIP", "enamel-camp-mug-forest-green", 2}, // free shipping
			{"SAVE5", "enamel-camp-mug-cream", 1},           // below $40: not applied
		} {
			s, err := p.co.Create(ctx, checkout.Request{Items: items(c.variant, c.qty), Address: californian,
				Buyer: &checkout.Buyer{Email: "ada@example.com"}, PromoCode: ptr(c.code), OptionID: ptr("us-standard")})
			if err != nil || s.Status != checkout.Ready {
				t.Fatalf("%s: %v %+v", c.code, err, s)
			}
			if _, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Exec("DELETE FROM promotion_uses").Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(backfill).Error; err != nil {
			t.Fatalf("backfill: %v", err)
		}
		var rows []struct {
			Code string
			Used int64
		}
		if err := db.Raw("SELECT code, used FROM promotion_uses ORDER BY code").Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, r := range rows {
			got[r.Code] = r.Used
		}
		if diff := cmp.Diff(map[string]int64{"FREESHIP": 1, "SAVE5": 1, "WELCOME10": 1}, got); diff != "" {
			t.Errorf("uses counted (-want +got):\n%s", diff)
		}
	})
}
