package checkout_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

// TestDeclineLock: after five declines a session refuses more card
// payments, telling the buyer to use another card later or the payment
// page, without an attempt; fifteen minutes on, another card pays.
func TestDeclineLock(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		for i := range checkout.DefaultDeclinesBeforeLock {
			got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa_chargeDeclined")})
			if err != nil || got.Status != checkout.Ready {
				t.Fatalf("decline %d: %v %+v", i, err, got)
			}
		}
		_, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if !isCode(err, shop.PaymentDeclined) || !strings.Contains(err.Error(), "another card in 15 minutes") ||
			!strings.Contains(err.Error(), "payment page") {
			t.Fatalf("6th payment: %v; want payment_declined saying to use another card later or the payment page", err)
		}
		if n := p.count(t, "payment_attempts"); n != 5 {
			t.Errorf("%d attempts, want the 5 declined", n)
		}
		p.clk.Add(15*time.Minute + time.Second)
		got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil || got.Status != checkout.Completed {
			t.Fatalf("after the lock: %v %+v", err, got)
		}
	})
}

// TestPaymentCaps: the card payments of one buyer's sessions, and of one
// address's whatever the buyer ids, are capped per hour.
func TestPaymentCaps(t *testing.T) {
	caps := func(p *checkout.Policy) { p.Limits.PaymentsPerHour, p.Limits.PaymentsPerAddressHour = 3, 5 }
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShopWith(t, db, nil, caps)
		session := func(ctx context.Context) string {
			s, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian,
				Buyer: &checkout.Buyer{Email: "ada@example.com"}})
			if err != nil || s.Status != checkout.Ready {
				t.Fatalf("session: %v %+v", err, s)
			}
			return s.ID
		}
		decline := func(ctx context.Context, id string) error {
			_, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: id, Payment: pay("pm_card_visa_chargeDeclined")})
			return err
		}
		a := buyerAt("a", "192.0.2.1")
		one, two := session(a), session(a)
		for i := range 3 {
			if err := decline(a, []string{one, two}[i%2]); err != nil {
				t.Fatalf("payment %d of buyer a: %v", i, err)
			}
		}
		if err := decline(a, two); !isCode(err, shop.Unavailable) {
			t.Errorf("4th payment of buyer a in the hour: %v; want unavailable", err)
		}
		for i := range 2 {
			b := buyerAt(fmt.Sprintf("b%d", i), "192.0.2.1")
			if err := decline(b, session(b)); err != nil {
				t.Fatalf("payment of buyer b%d: %v", i, err)
			}
		}
		c := buyerAt("c", "192.0.2.1")
		if err := decline(c, session(c)); !isCode(err, shop.Unavailable) {
			t.Errorf("6th payment from the address in the hour: %v; want unavailable", err)
		}
		d := buyerAt("d", "192.0.2.2")
		if err := decline(d, session(d)); err != nil {
			t.Errorf("a payment from another address: %v", err)
		}
		p.clk.Add(time.Hour + time.Second)
		if err := decline(a, session(a)); err != nil {
			t.Errorf("an hour later: %v", err)
		}
	})
}

// TestUnreservedIsPaid: a session whose items the share did not let it
// hold is ready and pays while the stock is there; once another buyer took
// the last unit, paying it charges nothing and says out_of_stock.
func TestUnreservedIsPaid(t *testing.T) {
	const variant = "cast-iron-skillet-12-in"
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		if err := db.Exec("UPDATE variants SET stock = 2 WHERE id = ?", variant).Error; err != nil {
			t.Fatal(err)
		}
		open := func(who string) *checkout.Session {
			s, err := p.co.Create(buyerAt(who, "192.0.2."+who[1:]), checkout.Request{Items: items(variant, 1), Address: californian,
				Buyer: &checkout.Buyer{Email: who + "@example.com"}})
			if err != nil || s.Status != checkout.Ready {
				t.Fatalf("%s: %v %+v", who, err, s)
			}
			return s
		}
		a, b, c := open("u1"), open("u2"), open("u3") // the share of 2 units is 1: a holds it
		if sessionHolds(t, db, a.ID) != 1 || !unreservedSaid(b) || !unreservedSaid(c) {
			t.Fatalf("holds: a %d, b not reserved %v, c %v", sessionHolds(t, db, a.ID), unreservedSaid(b), unreservedSaid(c))
		}
		if got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: b.ID, Payment: pay("pm_card_visa")}); err != nil || got.Status != checkout.Completed {
			t.Fatalf("b pays: %v %+v", err, got)
		}
		// One unit left, a holds it: c's payment finds none.
		got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: c.ID, Payment: pay("pm_card_visa")})
		if err != nil || got.Status != checkout.NotReady || !slices.Contains(errorParams(got), "out_of_stock $.line_items[0].item.quantity") {
			t.Fatalf("c pays with no unit left: %v %+v", err, got)
		}
		if n := p.count(t, "payment_attempts"); n != 1 {
			t.Errorf("%d attempts, want b's alone", n)
		}
	})
}
