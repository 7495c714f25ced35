package checkout_test

import (
	"context"
	"fmt"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/payments"
)

// accountAt is a call of a linked account from a client address.
func accountAt(account, addr string) context.Context {
	return shop.WithBuyer(context.Background(), shop.Buyer{AccountID: account, AccountEmail: account + "@example.com",
		Scopes: []string{shop.ScopePayments}, Address: addr})
}

// paidOnce makes account a buyer with a paid order.
func (w *wallets) paidOnce(t *testing.T, account string) {
	t.Helper()
	s := w.readyAs(t, account)
	if done, err := w.co.Complete(linkedAs(account), checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err != nil || done.Status != checkout.Completed {
		t.Fatalf("%s pays: %v %+v", account, err, done)
	}
}

// cartOf is a cart of lines of 10 units of the variants ids[from:to].
func cartOf(ids []string, from, to int) *[]checkout.Item {
	var out []checkout.Item
	for _, id := range ids[from:to] {
		out = append(out, checkout.Item{ID: id, Quantity: 10})
	}
	return &out
}

// TestFreshAccountsHoldAsGuests is issue 54's hoarding by accounts: three
// fresh accounts from one address asking for 150 units together hold at
// most the address's aggregate (the last is ready but not reserved), and a
// fresh account alone has a guest's limit in all. ada, who has paid for an
// order, is counted by account: from the same address she holds 150 units
// (within units_per_account).
func TestFreshAccountsHoldAsGuests(t *testing.T) {
	const addr = "203.0.113.9"
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := walletShop(t, db, payments.NewSandbox(db, nil))
		ids := inStock(t, db, 40)
		if len(ids) < 30 {
			t.Fatalf("%d variants with 40 in stock; want 30", len(ids))
		}
		unreserved := 0
		for i := range 3 {
			s, err := w.co.Create(accountAt(fmt.Sprintf("fresh%d", i), addr), checkout.Request{Items: fullCart(ids, i), Address: californian})
			if err != nil || s.Status != checkout.Ready {
				t.Fatalf("fresh account %d: %v %+v", i, err, s)
			}
			if unreservedSaid(s) {
				unreserved++
			}
		}
		if held := heldUnits(t, db, ""); held > checkout.DefaultUnitsPerAddress {
			t.Errorf("three fresh accounts at one address hold %d units; want at most %d", held, checkout.DefaultUnitsPerAddress)
		}
		if unreserved != 1 {
			t.Errorf("%d sessions said their items are not reserved; want the last", unreserved)
		}
		alone, err := w.co.Create(accountAt("fresh-alone", "198.51.100.7"), checkout.Request{Items: cartOf(ids, 15, 30), Address: californian})
		if err != nil || alone.Status != checkout.NotReady || sessionHolds(t, db, alone.ID) != 0 {
			t.Fatalf("a fresh account asking for 150 units: %v %+v; want a guest's limit in all", err, alone)
		}

		w.paidOnce(t, "ada")
		s, err := w.co.Create(accountAt("ada", addr), checkout.Request{Items: cartOf(ids, 15, 30), Address: californian})
		if err != nil || s.Status != checkout.Ready || unreservedSaid(s) {
			t.Fatalf("ada, who paid, asking for 150 units: %v %+v", err, s)
		}
		if held := sessionHolds(t, db, s.ID); held != 150 {
			t.Errorf("ada holds %d units; want 150", held)
		}
	})
}
