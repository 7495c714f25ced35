package checkout_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/payments"
)

// buyerAt is a call of a host's user (subject) from a client address.
func buyerAt(subject, addr string) context.Context {
	return shop.WithBuyer(context.Background(), shop.Buyer{Subject: subject, Address: addr})
}

// unreservedSaid reports whether s says its items are not reserved.
func unreservedSaid(s *checkout.Session) bool {
	for _, m := range s.Messages {
		if m.Type == checkout.MessageInfo && strings.HasPrefix(m.Content, "Your items are not reserved") {
			return true
		}
	}
	return false
}

// fullCart is 5 lines of 10 units (the limits per buyer allow it) of the
// variants of ids from the k-th on, round.
func fullCart(ids []string, k int) *[]checkout.Item {
	var out []checkout.Item
	for j := range 5 {
		out = append(out, checkout.Item{ID: ids[(k*5+j)%len(ids)], Quantity: 10})
	}
	return &out
}

// TestRotatingSubjectsHoldAtMostAddressCap is the attack: one client
// address rotates its host user id over 156 calls, each asking for 50
// units. Whatever ids it invents, what it holds stays within the address's
// aggregate, and every session past it is ready for payment, saying its
// items are not reserved. A buyer at another address still holds.
func TestRotatingSubjectsHoldAtMostAddressCap(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		// Past the creation cap (120 an hour) it would be refused sooner.
		co, _ := demoShopWith(t, db, func(p *checkout.Policy) { p.Limits.SessionsPerAddressHour = 1000 })
		ids := inStock(t, db, 40)
		unreserved := 0
		for i := range 156 {
			s, err := co.Create(buyerAt(fmt.Sprintf("rotated-%d", i), "203.0.113.7"),
				checkout.Request{Items: fullCart(ids, i), Address: californian})
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if s.Status != checkout.Ready {
				t.Fatalf("call %d: %s %v; want ready (held or not)", i, s.Status, errorParams(s))
			}
			if unreservedSaid(s) {
				unreserved++
			}
		}
		if held := heldUnits(t, db, ""); held > checkout.DefaultUnitsPerAddress {
			t.Errorf("one address holds %d units; want at most %d", held, checkout.DefaultUnitsPerAddress)
		}
		if unreserved < 150 {
			t.Errorf("%d sessions said their items are not reserved; want every one past the address's aggregate", unreserved)
		}
		s, err := co.Create(buyerAt("real", "198.51.100.4"), checkout.Request{Items: items(ids[0], 2), Address: californian})
		if err != nil || s.Status != checkout.Ready || unreservedSaid(s) || sessionHolds(t, db, s.ID) != 2 {
			t.Fatalf("a buyer elsewhere: %v %+v", err, s)
		}
	})
}

// TestUnverifiedShare: buyers who are not trusted accounts, each at their
// own address, hold at most half of a variant's stock between them; the
// next one, and a fresh linked account, are ready but not reserved, and an
// account that has paid for an order still holds the rest.
func TestUnverifiedShare(t *testing.T) {
	const variant = "cast-iron-skillet-12-in"
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := walletShop(t, db, payments.NewSandbox(db, nil))
		w.paidOnce(t, "ada")
		co := w.co
		if err := db.Exec("UPDATE variants SET stock = 10 WHERE id = ?", variant).Error; err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			s, err := co.Create(buyerAt(fmt.Sprintf("u%d", i), fmt.Sprintf("192.0.2.%d", i+1)),
				checkout.Request{Items: items(variant, 1), Address: californian})
			if err != nil || s.Status != checkout.Ready {
				t.Fatalf("buyer %d: %v %+v", i, err, s)
			}
			if want := i >= 5; unreservedSaid(s) != want {
				t.Errorf("buyer %d: not reserved %v, want %v (held %d)", i, unreservedSaid(s), want, sessionHolds(t, db, s.ID))
			}
		}
		fresh, err := co.Create(accountAt("bob", "192.0.2.1"), checkout.Request{Items: items(variant, 5), Address: californian})
		if err != nil || fresh.Status != checkout.Ready || !unreservedSaid(fresh) || sessionHolds(t, db, fresh.ID) != 0 {
			t.Fatalf("a fresh account: %v %+v; want ready, not reserved", err, fresh)
		}
		s, err := co.Create(accountAt("ada", "192.0.2.1"), checkout.Request{Items: items(variant, 5), Address: californian})
		if err != nil || s.Status != checkout.Ready || unreservedSaid(s) || sessionHolds(t, db, s.ID) != 5 {
			t.Fatalf("an account that paid: %v %+v", err, s)
		}
		if held := heldUnits(t, db, ""); held != 10 {
			t.Errorf("%d units held, want all 10", held)
		}
	})
}

// TestHostAddressBuyersHold: 60 buyers behind one host egress address
// configured as such all hold their carts; without the configuration the
// address's household aggregate stops them at 100 units.
func TestHostAddressBuyersHold(t *testing.T) {
	for _, tc := range []struct {
		name string
		host []checkout.HostAddress
		want int
	}{
		{"Configured", []checkout.HostAddress{{CIDR: "203.0.113.0/24", Units: 5000}}, 60},
		{"NotConfigured", nil, checkout.DefaultUnitsPerAddress / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				co, _ := demoShopWith(t, db, func(p *checkout.Policy) { p.Limits.HostAddresses = tc.host })
				ids := inStock(t, db, 40)
				held := 0
				for i := range 60 {
					s, err := co.Create(buyerAt(fmt.Sprintf("chatgpt-user-%d", i), "203.0.113.9"),
						checkout.Request{Items: items(ids[i%len(ids)], 2), Address: californian})
					if err != nil || s.Status != checkout.Ready {
						t.Fatalf("buyer %d: %v %+v", i, err, s)
					}
					if sessionHolds(t, db, s.ID) == 2 {
						held++
					}
				}
				if held != tc.want {
					t.Errorf("%d of 60 buyers hold their cart, want %d", held, tc.want)
				}
			})
		})
	}
}

// TestCreationCaps: a buyer, and a client address whatever ids it sends,
// create at most the policy's sessions and carts an hour; an hour later
// they may again.
func TestCreationCaps(t *testing.T) {
	caps := func(p *checkout.Policy) { p.Limits.SessionsPerHour, p.Limits.SessionsPerAddressHour = 3, 5 }
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, clk := demoShopWith(t, db, caps)
		create := func(ctx context.Context) error {
			_, err := co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1)})
			return err
		}
		cart := func(ctx context.Context) error {
			_, err := co.CreateCart(ctx, checkout.CartRequest{Items: items("enamel-camp-mug-cream", 1)})
			return err
		}
		for _, mk := range []struct {
			what string
			fn   func(context.Context) error
		}{{"session", create}, {"cart", cart}} {
			for i := range 3 {
				if err := mk.fn(buyerAt("a", "192.0.2.1")); err != nil {
					t.Fatalf("%s %d of buyer a: %v", mk.what, i, err)
				}
			}
			if err := mk.fn(buyerAt("a", "192.0.2.1")); !isCode(err, shop.Unavailable) {
				t.Errorf("4th %s of buyer a in the hour: %v; want unavailable", mk.what, err)
			}
			for _, who := range []string{"b", "c"} {
				if err := mk.fn(buyerAt(who, "192.0.2.1")); err != nil {
					t.Fatalf("%s of buyer %s: %v", mk.what, who, err)
				}
			}
			if err := mk.fn(buyerAt("d", "192.0.2.1")); !isCode(err, shop.Unavailable) {
				t.Errorf("6th %s of the address in the hour: %v; want unavailable", mk.what, err)
			}
			if err := mk.fn(buyerAt("d", "192.0.2.2")); err != nil {
				t.Errorf("%s from another address: %v", mk.what, err)
			}
		}
		clk.Add(time.Hour + time.Second)
		if err := create(buyerAt("a", "192.0.2.1")); err != nil {
			t.Errorf("an hour later: %v", err)
		}
	})
}

// isCode reports whether err is a *shop.Error of code.
func isCode(err error, code shop.Code) bool {
	var e *shop.Error
	return errors.As(err, &e) && e.Code == code
}

// TestLineImagesBounded: a product with the catalog's 10 images shows and
// keeps at most 3 on a session's line.
func TestLineImagesBounded(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, _ := demoShop(t, db)
		var imgs []string
		for i := range 10 {
			imgs = append(imgs, fmt.Sprintf(`"/static/products/photo-%d.svg"`, i))
		}
		if err := db.Exec("UPDATE products SET images = ? WHERE id = (SELECT product_id FROM variants WHERE id = ?)",
			"["+strings.Join(imgs, ",")+"]", "enamel-camp-mug-cream").Error; err != nil {
			t.Fatal(err)
		}
		s, err := co.Create(as("192.0.2.1"), checkout.Request{Items: items("enamel-camp-mug-cream", 1)})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(s.LineItems[0].Images); n != 3 {
			t.Errorf("the line has %d images, want 3", n)
		}
		if got, err := co.Get(context.Background(), s.ID); err != nil || len(got.LineItems[0].Images) != 3 {
			t.Errorf("as kept: %v %+v", err, got)
		}
	})
}
