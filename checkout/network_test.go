package checkout_test

import (
	"fmt"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

// The /64s of one IPv6 /48, and a /64 of another.
var (
	sameNetwork  = []string{"2001:db8:1:1::/64", "2001:db8:1:2::/64", "2001:db8:1:3::/64"}
	otherNetwork = "2001:db8:2:1::/64"
)

// TestNetworkTierHolds: every /64 of a /48 holds within its own aggregate,
// and all of them together within network_multiple times it; the /48's
// next session is ready but not reserved, while a /64 of another /48
// still holds.
func TestNetworkTierHolds(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, _ := demoShopWith(t, db, func(p *checkout.Policy) { p.Limits.NetworkMultiple = 2 })
		ids := inStock(t, db, 40)
		k := 0
		create := func(addr string) *checkout.Session {
			t.Helper()
			k++
			s, err := co.Create(buyerAt(fmt.Sprintf("u%d", k), addr), checkout.Request{Items: fullCart(ids, k), Address: californian})
			if err != nil || s.Status != checkout.Ready {
				t.Fatalf("session %d from %s: %v %+v", k, addr, err, s)
			}
			return s
		}
		for _, addr := range sameNetwork[:2] {
			for range 2 {
				if s := create(addr); unreservedSaid(s) {
					t.Fatalf("a session within %s's aggregate is not reserved", addr)
				}
			}
		}
		if s := create(sameNetwork[2]); !unreservedSaid(s) || sessionHolds(t, db, s.ID) != 0 {
			t.Errorf("a third /64 of the /48 holds %d units; want none past the /48's %d", sessionHolds(t, db, s.ID), 2*checkout.DefaultUnitsPerAddress)
		}
		if held := heldUnits(t, db, ""); held != 2*checkout.DefaultUnitsPerAddress {
			t.Errorf("the /48 holds %d units; want %d", held, 2*checkout.DefaultUnitsPerAddress)
		}
		if s := create(otherNetwork); unreservedSaid(s) || sessionHolds(t, db, s.ID) != 50 {
			t.Errorf("a /64 of another /48 holds %d units; want 50", sessionHolds(t, db, s.ID))
		}
	})
}

// TestNetworkTierCreations: the hourly caps on sessions and carts per
// address hold per /48 at network_multiple times; another /48 is not
// touched.
func TestNetworkTierCreations(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, _ := demoShopWith(t, db, func(p *checkout.Policy) {
			p.Limits.SessionsPerAddressHour, p.Limits.NetworkMultiple = 2, 2
		})
		k := 0
		for _, tc := range []struct {
			what   string
			create func(addr string) error
		}{
			{"sessions", func(addr string) error {
				_, err := co.Create(buyerAt(fmt.Sprintf("s%d", k), addr), checkout.Request{Items: items("enamel-camp-mug-cream", 1)})
				return err
			}},
			{"carts", func(addr string) error {
				_, err := co.CreateCart(buyerAt(fmt.Sprintf("c%d", k), addr), checkout.CartRequest{Items: items("enamel-camp-mug-cream", 1)})
				return err
			}},
		} {
			t.Run(tc.what, func(t *testing.T) {
				made := func(addr string, n int) int {
					ok := 0
					for range n {
						k++
						if err := tc.create(addr); err == nil {
							ok++
						} else if shop.ErrorCode(err) != shop.Unavailable {
							t.Fatalf("%s from %s: %v", tc.what, addr, err)
						}
					}
					return ok
				}
				if n := made(sameNetwork[0], 3); n != 2 {
					t.Errorf("one /64 made %d %s; want its cap of 2", n, tc.what)
				}
				if n := made(sameNetwork[1], 2) + made(sameNetwork[2], 2); n != 2 {
					t.Errorf("two more /64s of the /48 made %d %s; want the 2 left of the /48's 4", n, tc.what)
				}
				if n := made(otherNetwork, 2); n != 2 {
					t.Errorf("a /64 of another /48 made %d %s; want 2", n, tc.what)
				}
			})
		}
	})
}

// TestNetworkTierPayments: the hourly cap on payment attempts per address
// holds per /48 at network_multiple times.
func TestNetworkTierPayments(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShopWith(t, db, nil, func(pol *checkout.Policy) {
			pol.Limits.PaymentsPerAddressHour, pol.Limits.NetworkMultiple = 1, 2
		})
		payFrom := func(i int, addr string) error {
			ctx := buyerAt(fmt.Sprintf("payer%d", i), addr)
			s, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian,
				Buyer: &checkout.Buyer{Email: "ada@example.com"}})
			if err != nil || s.Status != checkout.Ready {
				t.Fatalf("session from %s: %v %+v", addr, err, s)
			}
			_, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
			return err
		}
		for i, addr := range sameNetwork {
			err := payFrom(i, addr)
			if want := i < 2; (err == nil) != want {
				t.Errorf("a payment from the /48's %d-th /64: %v; want it taken %v (the /48's cap is 2)", i+1, err, want)
			}
			if err != nil && shop.ErrorCode(err) != shop.Unavailable {
				t.Errorf("refused with %v; want unavailable", err)
			}
		}
		if err := payFrom(9, otherNetwork); err != nil {
			t.Errorf("a payment from another /48: %v", err)
		}
	})
}
