package checkout_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/contract"
	"shop/database/dbtest"
)

// withTestPromos adds to the demo policy a code that ended (OLD5) and a
// second percent_off code (TAKE20), which does not combine with WELCOME10.
func withTestPromos(p *checkout.Policy) {
	p.Promotions = append(p.Promotions,
		checkout.Promotion{Code: "OLD5", Kind: checkout.AmountOff, Amount: 500, EndsAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		checkout.Promotion{Code: "TAKE20", Title: "20% off", Kind: checkout.PercentOff, Percent: decimal.RequireFromString("20")})
}

// TestPromoCodes: codes replace, match case-insensitively, one of each kind
// applies, and each code that does not is named with why, while the session
// is made.
func TestPromoCodes(t *testing.T) {
	type rejected struct {
		Index  int
		Reason contract.DiscountRejection
	}
	tests := []struct {
		name     string
		codes    []string
		applied  []string // codes, in order
		amounts  []int64
		rejected []rejected
	}{
		{"unknown", []string{"NOPE"}, nil, nil, []rejected{{0, contract.DiscountInvalid}}},
		{"malformed", []string{"no pe!"}, nil, nil, []rejected{{0, contract.DiscountInvalid}}},
		{"expired", []string{"old5"}, nil, nil, []rejected{{0, contract.DiscountExpired}}},
		{"two valid", []string{"welcome10", "FreeShip"}, []string{"WELCOME10", "FREESHIP"}, []int64{540, 500}, nil},
		{"the same twice", []string{"WELCOME10", "welcome10"}, []string{"WELCOME10"}, []int64{540}, []rejected{{1, contract.DiscountAlreadyApplied}}},
		{"not combinable", []string{"WELCOME10", "TAKE20"}, []string{"WELCOME10"}, []int64{540}, []rejected{{1, contract.DiscountCombination}}},
		{"percent and amount", []string{"WELCOME10", "SAVE5", "NOPE"}, []string{"WELCOME10", "SAVE5"}, []int64{540, 500}, []rejected{{2, contract.DiscountInvalid}}},
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c, _ := demoShopWith(t, db, withTestPromos)
		ctx := context.Background()
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s, err := c.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-forest-green", 3), Address: californian, PromoCodes: &tc.codes})
				if err != nil {
					t.Fatal(err)
				}
				d := s.Discounts
				var gotApplied []string
				var gotAmounts []int64
				for _, a := range d.Applied {
					gotApplied, gotAmounts = append(gotApplied, a.Code), append(gotAmounts, a.Amount)
					var sum int64
					for _, al := range a.Allocations {
						sum += al.Amount
					}
					if sum != a.Amount || a.Title == "" || a.Title == a.Code {
						t.Errorf("applied %+v: allocations sum to %d, title %q", a, sum, a.Title)
					}
				}
				var gotRejected []rejected
				for _, r := range d.Rejected {
					gotRejected = append(gotRejected, rejected{r.Index, r.Reason})
					if r.Content == "" {
						t.Errorf("rejected %+v says nothing", r)
					}
				}
				if diff := cmp.Diff(tc.applied, gotApplied); diff != "" {
					t.Errorf("applied (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.amounts, gotAmounts); diff != "" {
					t.Errorf("amounts (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.rejected, gotRejected); diff != "" {
					t.Errorf("rejected (-want +got):\n%s", diff)
				}
				if len(d.Codes) != len(tc.codes) {
					t.Errorf("codes %q, sent %q", d.Codes, tc.codes)
				}
			})
		}

		// codes: [] clears them; /mcp's promo_code keeps refusing an unknown code.
		s, err := c.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-forest-green", 3), PromoCodes: &[]string{"WELCOME10"}})
		if err != nil {
			t.Fatal(err)
		}
		s, err = c.Update(ctx, s.ID, checkout.Request{PromoCodes: &[]string{}})
		if err != nil || len(s.Discounts.Codes) != 0 || len(s.Discounts.Applied) != 0 || s.LineItems[0].Discount != 0 {
			t.Errorf("codes: [] left %+v (%v)", s.Discounts, err)
		}
		if _, err := c.Update(ctx, s.ID, checkout.Request{PromoCode: ptr("NOPE")}); shop.ErrorCode(err) != shop.Invalid {
			t.Errorf("promo_code NOPE: %v", err)
		}
		tooMany := make([]string, 11)
		for i := range tooMany {
			tooMany[i] = "SAVE5"
		}
		if _, err := c.Update(ctx, s.ID, checkout.Request{PromoCodes: &tooMany}); shop.ErrorCode(err) != shop.Invalid {
			t.Errorf("11 codes: %v", err)
		}
	})
}

// TestCartConvertedTwice: agents converting one cart at once get one
// checkout, and again while it is incomplete; once it ends, a new one.
func TestCartConvertedTwice(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c, _ := demoShop(t, db)
		ctx := context.Background()
		cart, err := c.CreateCart(ctx, checkout.CartRequest{Items: items("enamel-camp-mug-forest-green", 2), PromoCodes: &[]string{"welcome10", "nope"}})
		if err != nil {
			t.Fatal(err)
		}
		const n = 4
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				s, err := c.CreateFromCart(ctx, cart.ID, checkout.Request{Address: californian})
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = s.ID
			})
		}
		wg.Wait()
		for _, id := range ids[1:] {
			if id != ids[0] {
				t.Fatalf("one cart converted at once gave checkouts %q", ids)
			}
		}
		s, err := c.CreateFromCart(ctx, cart.ID, checkout.Request{})
		if err != nil || s.ID != ids[0] {
			t.Fatalf("converted again: %v %v, want %s", s, err, ids[0])
		}
		if got := s.Discounts.Codes; len(got) != 2 || len(s.Discounts.Applied) != 1 || len(s.Discounts.Rejected) != 1 {
			t.Errorf("the cart's codes carried forward as %+v", s.Discounts)
		}
		var open int64
		if err := db.Raw("SELECT COUNT(*) FROM checkout_sessions WHERE status NOT IN ('canceled', 'expired')").Scan(&open).Error; err != nil {
			t.Fatal(err)
		}
		if open != 1 {
			t.Errorf("%d sessions left open by one cart, want 1", open)
		}
		if _, err := c.Cancel(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		if again, err := c.CreateFromCart(ctx, cart.ID, checkout.Request{}); err != nil || again.ID == s.ID {
			t.Errorf("converted after its checkout ended: %v %v", again, err)
		}
	})
}

// TestPromoCodesUses: a session paid with two codes that apply takes a use
// of each, and a declined payment gives both back.
func TestPromoCodesUses(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShopWith(t, db, nil, func(pol *checkout.Policy) {
			for _, code := range []string{"WELCOME10", "FREESHIP"} {
				promo, _ := pol.Promotion(code)
				promo.UsageLimit = ptr(5)
			}
		})
		uses := func() map[string]int64 {
			var rows []struct {
				Code string
				Used int64
			}
			if err := db.Raw("SELECT code, used FROM promotion_uses").Scan(&rows).Error; err != nil {
				t.Fatal(err)
			}
			out := map[string]int64{}
			for _, r := range rows {
				out[r.Code] = r.Used
			}
			return out
		}
		s, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-forest-green", 3), Address: californian,
			Buyer: &checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"}, PromoCodes: &[]string{"freeship", "welcome10"}})
		if err != nil || s.Status != checkout.Ready || len(s.Discounts.Applied) != 2 {
			t.Fatalf("ready session with two codes: %v %+v", err, s)
		}
		if _, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa_chargeDeclined")}); err != nil {
			t.Fatal(err)
		}
		if got := uses(); got["WELCOME10"] != 0 || got["FREESHIP"] != 0 {
			t.Errorf("after a decline: uses %v, want none", got)
		}
		done, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil || done.Status != checkout.Completed {
			t.Fatalf("paid: %v %+v", err, done)
		}
		if got := uses(); got["WELCOME10"] != 1 || got["FREESHIP"] != 1 {
			t.Errorf("after the order: uses %v, want one of each", got)
		}
	})
}
