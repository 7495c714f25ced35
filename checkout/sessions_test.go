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
	"shop/catalog"
	"shop/checkout"
	"shop/database/dbtest"
)

// clock is a settable clock for the tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// demoShop opens the demo merchant's checkout on db, with a clock at a fixed
// Wednesday noon.
func demoShop(t *testing.T, db *gorm.DB) (*checkout.Checkout, *clock) {
	t.Helper()
	return demoShopWith(t, db, nil)
}

// demoShopWith is demoShop with the demo policy changed by edit (when not
// nil).
func demoShopWith(t *testing.T, db *gorm.DB, edit func(*checkout.Policy)) (*checkout.Checkout, *clock) {
	t.Helper()
	policy, err := checkout.LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(policy)
	}
	clk := &clock{now: time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)}
	cat := catalog.New(db, policy.Currency(), &catalog.Options{Now: clk.Now})
	if _, err := cat.SeedIfEmpty(context.Background(), os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
		t.Fatal(err)
	}
	return checkout.New(db, policy, cat, &checkout.Options{Now: clk.Now}), clk
}

var californian = &checkout.Address{
	Name: "Ada Lovelace", LineOne: "1 Market St", City: "San Francisco", State: "CA", Country: "US", PostalCode: "94105",
}

func items(kv ...any) *[]checkout.Item {
	var out []checkout.Item
	for i := 0; i < len(kv); i += 2 {
		out = append(out, checkout.Item{ID: kv[i].(string), Quantity: int64(kv[i+1].(int))})
	}
	return &out
}

func ptr[T any](v T) *T { return &v }

// noShare lifts the bound on the share of a variant's stock unverified
// buyers may hold, for the tests of what the stock alone decides.
func noShare(p *checkout.Policy) { p.Limits.UnverifiedShare = 100 }

func totals(s *checkout.Session) map[checkout.TotalType]int64 {
	out := map[checkout.TotalType]int64{}
	for _, t := range s.Totals {
		out[t.Type] = t.Amount
	}
	return out
}

func errorParams(s *checkout.Session) []string {
	var out []string
	for _, m := range s.Messages {
		if m.Type == checkout.MessageError {
			out = append(out, m.Code+" "+m.Param)
		}
	}
	return out
}

// TestDoneWhen is the acceptance: two products, an address, shipping
// and the demo promotion make a session ready whose figures agree with a hand
// calculation.
func TestDoneWhen(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, _ := demoShop(t, db)
		s, err := co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-forest-green", 2, "stoneware-coffee-mug-16-oz", 1)})
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != checkout.NotReady {
			t.Fatalf("status %s without an address", s.Status)
		}
		if diff := cmp.Diff([]string{"missing $.fulfillment_address"}, errorParams(s)); diff != "" {
			t.Errorf("messages (-want +got):\n%s", diff)
		}
		s, err = co.Update(ctx, s.ID, checkout.Request{Address: californian, OptionID: ptr("us-standard"), PromoCode: ptr("welcome10")})
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != checkout.Ready {
			t.Fatalf("status %s, messages %+v", s.Status, s.Messages)
		}
		// By hand: mugs 2 × 1800 = 3600, 16 oz mug 2600; WELCOME10 takes 10 %
		// of each line: 360 and 260, leaving 3240 + 2340 = 5580. Standard
		// shipping 500 (free only over 7500). California tax 7.25 % on each
		// line, shipping untaxed: 3240 × 0.0725 = 234.9 → 235 and
		// 2340 × 0.0725 = 169.65 → 170, so 405. Total 5580 + 500 + 405 = 6485.
		want := map[checkout.TotalType]int64{
			"items_base_amount": 6200, "items_discount": 620, "subtotal": 5580, "discount": 0,
			"fulfillment": 500, "tax": 405, "total": 6485,
		}
		if diff := cmp.Diff(want, totals(s)); diff != "" {
			t.Errorf("totals (-want +got):\n%s", diff)
		}
		if s.FulfillmentOptionID != "us-standard" || len(s.Links) < 4 || s.PaymentProvider.MerchantID == "" {
			t.Errorf("session %+v", s)
		}
		got, err := co.Get(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s, got); diff != "" {
			t.Errorf("get differs from update (-update +get):\n%s", diff)
		}
	})
}

// TestHoldsLastUnits: 20 buyers at once want the last 5 units; exactly 5
// sessions become ready, the others say out_of_stock; cancel and expiry give
// units back.
func TestHoldsLastUnits(t *testing.T) {
	ctx := context.Background()
	const variant = "cast-iron-skillet-12-in"
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, clk := demoShopWith(t, db, noShare) // the stock alone decides
		if err := db.Exec("UPDATE variants SET stock = 5 WHERE id = ?", variant).Error; err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		sessions := make([]*checkout.Session, 20)
		errs := make([]error, 20)
		for i := range sessions {
			wg.Go(func() {
				sessions[i], errs[i] = co.Create(ctx, checkout.Request{Items: items(variant, 1), Address: californian})
			})
		}
		wg.Wait()
		var ready, short []*checkout.Session
		for i, s := range sessions {
			if errs[i] != nil {
				t.Fatalf("create %d: %v", i, errs[i])
			}
			switch s.Status {
			case checkout.Ready:
				ready = append(ready, s)
			case checkout.NotReady:
				if diff := cmp.Diff([]string{"out_of_stock $.line_items[0].item.quantity"}, errorParams(s)); diff != "" {
					t.Errorf("not ready for another reason (-want +got):\n%s", diff)
				}
				short = append(short, s)
			}
		}
		if len(ready) != 5 || len(short) != 15 {
			t.Fatalf("%d ready, %d out of stock; want 5 and 15", len(ready), len(short))
		}

		// A canceled session's unit goes to the next buyer.
		if s, err := co.Cancel(ctx, ready[0].ID); err != nil || s.Status != checkout.Canceled {
			t.Fatalf("cancel: %v %+v", err, s)
		}
		s, err := co.Update(ctx, short[0].ID, checkout.Request{})
		if err != nil || s.Status != checkout.Ready {
			t.Fatalf("after a cancel, a waiting session is %s (%v)", s.Status, err)
		}
		if s, _ := co.Update(ctx, short[1].ID, checkout.Request{}); s.Status != checkout.NotReady {
			t.Fatalf("a sixth unit was held: %s", s.Status)
		}

		// When the sessions expire, the units return.
		clk.Add(checkout.DefaultTTL + time.Second)
		n, err := co.ExpireDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 20-1 { // all but the canceled one
			t.Errorf("expired %d sessions, want 19", n)
		}
		fresh, err := co.Create(ctx, checkout.Request{Items: items(variant, 5), Address: californian})
		if err != nil || fresh.Status != checkout.Ready {
			t.Fatalf("after expiry: %v %s %v", err, fresh.Status, errorParams(fresh))
		}
		if _, err := co.Update(ctx, ready[1].ID, checkout.Request{}); shop.ErrorCode(err) != shop.Expired {
			t.Errorf("update of an expired session: %v", err)
		}
	})
}

// TestConcurrentUpdates: updates of different fields of one session at once
// all land; none is lost to another's write.
func TestConcurrentUpdates(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, _ := demoShop(t, db)
		s, err := co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1)})
		if err != nil {
			t.Fatal(err)
		}
		reqs := []checkout.Request{
			{Address: californian},
			{PromoCode: ptr("FREESHIP")},
			{Buyer: &checkout.Buyer{Email: "ada@example.com"}},
			{Metadata: map[string]string{"source": "test"}},
			{Items: items("enamel-camp-mug-cream", 2)},
		}
		var wg sync.WaitGroup
		errs := make([]error, len(reqs))
		for i, r := range reqs {
			wg.Go(func() { _, errs[i] = co.Update(ctx, s.ID, r) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil && shop.ErrorCode(err) != shop.Conflict {
				t.Fatalf("update %d: %v", i, err)
			}
		}
		got, err := co.Get(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Every update that did not answer conflict is in the session.
		landed := []bool{
			got.FulfillmentAddress != nil,
			hasInfo(got, "FREESHIP"),
			got.Buyer != nil && got.Buyer.Email == "ada@example.com",
			got.Metadata["source"] == "test",
			len(got.LineItems) == 1 && got.LineItems[0].Item.Quantity == 2,
		}
		for i, ok := range landed {
			if !ok && errs[i] == nil {
				t.Errorf("update %d answered success but is not in the session: %+v", i, got)
			}
		}
		if got.Status != checkout.Ready {
			t.Errorf("status %s: %v", got.Status, errorParams(got))
		}
	})
}

func hasInfo(s *checkout.Session, substr string) bool {
	for _, m := range s.Messages {
		if m.Type == checkout.MessageInfo && strings.Contains(m.Content, substr) {
			return true
		}
	}
	return false
}

// TestShippingOptionChoice: a shipping option the caller sends that is not
// offered is an error naming the ones that are, and stays one until fixed;
// an option chosen before that the address's new zone does not offer is
// replaced by the cheapest, with an info message.
func TestShippingOptionChoice(t *testing.T) {
	ctx := context.Background()
	toronto := &checkout.Address{Name: "Ada Lovelace", LineOne: "1 King St W", City: "Toronto", State: "ON", Country: "CA", PostalCode: "M5H 1A1"}
	optionMessage := func(s *checkout.Session) *checkout.Message {
		for i, m := range s.Messages {
			if m.Param == "$.fulfillment_option_id" {
				return &s.Messages[i]
			}
		}
		return nil
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, _ := demoShop(t, db)
		s, err := co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian, OptionID: ptr("overnight")})
		if err != nil {
			t.Fatal(err)
		}
		refused := func(s *checkout.Session, wanted string, ids ...string) {
			t.Helper()
			m := optionMessage(s)
			if s.Status != checkout.NotReady || s.FulfillmentOptionID != "" || m == nil || m.Type != checkout.MessageError || m.Code != "invalid" {
				t.Fatalf("option %q: %s %q %+v", wanted, s.Status, s.FulfillmentOptionID, s.Messages)
			}
			if diff := cmp.Diff([]string{"invalid $.fulfillment_option_id"}, errorParams(s)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			for _, id := range append(ids, wanted) {
				if !strings.Contains(m.Content, `"`+id+`"`) {
					t.Errorf("message %q does not name %q", m.Content, id)
				}
			}
		}
		refused(s, "overnight", "us-standard", "us-express")
		// It stays refused when something else changes.
		s, err = co.Update(ctx, s.ID, checkout.Request{Buyer: &checkout.Buyer{Email: "ada@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		refused(s, "overnight", "us-standard", "us-express")
		// A valid choice is kept.
		s, err = co.Update(ctx, s.ID, checkout.Request{OptionID: ptr("us-express")})
		if err != nil || s.Status != checkout.Ready || s.FulfillmentOptionID != "us-express" || optionMessage(s) != nil {
			t.Fatalf("us-express: %v %+v", err, s)
		}
		// The address moves to Canada: Express vanished, the cheapest
		// Canadian option replaces it, and the session stays ready.
		s, err = co.Update(ctx, s.ID, checkout.Request{Address: toronto})
		if err != nil {
			t.Fatal(err)
		}
		if m := optionMessage(s); s.Status != checkout.Ready || s.FulfillmentOptionID != "ca-standard" || m == nil || m.Type != checkout.MessageInfo || !strings.Contains(m.Content, "us-express") {
			t.Fatalf("address moved: %s %q %+v", s.Status, s.FulfillmentOptionID, s.Messages)
		}
		s, err = co.Update(ctx, s.ID, checkout.Request{Metadata: map[string]string{"k": "v"}})
		if err != nil || s.Status != checkout.Ready || s.FulfillmentOptionID != "ca-standard" {
			t.Fatalf("after the move: %v %+v", err, s)
		}
		// Sent again for the Canadian address, it is an error.
		s, err = co.Update(ctx, s.ID, checkout.Request{OptionID: ptr("us-express")})
		if err != nil {
			t.Fatal(err)
		}
		refused(s, "us-express", "ca-standard")
		// "" lets the shop choose.
		s, err = co.Update(ctx, s.ID, checkout.Request{OptionID: ptr("")})
		if err != nil || s.Status != checkout.Ready || s.FulfillmentOptionID != "ca-standard" {
			t.Fatalf("no choice: %v %+v", err, s)
		}
		// An option sent before there is an address is judged when it comes.
		s, err = co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), OptionID: ptr("us-express")})
		if err != nil {
			t.Fatal(err)
		}
		s, err = co.Update(ctx, s.ID, checkout.Request{Address: toronto})
		if err != nil {
			t.Fatal(err)
		}
		refused(s, "us-express", "ca-standard")
	})
}
