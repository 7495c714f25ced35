package checkout_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// holdExpiries are the expiries of the stock holds of a session.
func holdExpiries(t *testing.T, db *gorm.DB, session string) []time.Time {
	t.Helper()
	var out []time.Time
	if err := db.Table("stock_holds").Where("holder = ?", session).Order("variant_id").Pluck("expires_at", &out).Error; err != nil {
		t.Fatal(err)
	}
	for i := range out {
		out[i] = out[i].UTC()
	}
	return out
}

// checkHolds fails unless every hold of s expires with it.
func checkHolds(t *testing.T, db *gorm.DB, s *checkout.Session) {
	t.Helper()
	got := holdExpiries(t, db, s.ID)
	if len(got) == 0 {
		t.Fatalf("session %s holds nothing", s.ID)
	}
	for _, at := range got {
		if !at.Equal(s.ExpiresAt) {
			t.Errorf("a hold expires at %s, the session at %s", at, s.ExpiresAt)
		}
	}
}

// TestUpdateThatChangesNothing: an update that sends nothing, or the values
// the session has, does not move expires_at: an empty update every 29
// minutes no longer keeps a session and its holds alive past the TTL. A
// real change does.
func TestUpdateThatChangesNothing(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		co, clk := demoShop(t, db)
		cart := func() *[]checkout.Item {
			return items("enamel-camp-mug-forest-green", 2, "stoneware-coffee-mug-16-oz", 1)
		}
		buyer := checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"}
		for _, tc := range []struct {
			name   string
			req    checkout.Request
			renews bool
		}{
			{"Empty", checkout.Request{}, false},
			{"SameValues", checkout.Request{Items: cart(), Address: californian, Buyer: &buyer, OptionID: ptr("us-standard"), PromoCode: ptr(""), Metadata: map[string]string{"ref": "a"}}, false},
			{"SameAddressOtherCase", checkout.Request{Address: &checkout.Address{Name: "Ada Lovelace", LineOne: "1 Market St", City: "San Francisco", State: "ca", Country: "us", PostalCode: "94105"}}, false},
			{"OtherQuantity", checkout.Request{Items: items("enamel-camp-mug-forest-green", 3, "stoneware-coffee-mug-16-oz", 1)}, true},
			{"OtherEmail", checkout.Request{Buyer: &checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.org"}}, true},
			{"OtherMetadata", checkout.Request{Metadata: map[string]string{"ref": "b"}}, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s, err := co.Create(ctx, checkout.Request{Items: cart(), Address: californian, Buyer: &buyer, OptionID: ptr("us-standard"), Metadata: map[string]string{"ref": "a"}})
				if err != nil || s.Status != checkout.Ready {
					t.Fatalf("create: %v %+v", err, s)
				}
				created := clk.Now()
				if want := created.Add(checkout.DefaultTTL); !s.ExpiresAt.Equal(want) {
					t.Fatalf("expires at %s, want %s", s.ExpiresAt, want)
				}
				clk.Add(29 * time.Minute)
				got, err := co.Update(ctx, s.ID, tc.req)
				if err != nil {
					t.Fatal(err)
				}
				want := s.ExpiresAt
				if tc.renews {
					want = clk.Now().Add(checkout.DefaultTTL)
				}
				if !got.ExpiresAt.Equal(want) || got.Status != checkout.Ready {
					t.Fatalf("after the update: %s, expires at %s, want %s", got.Status, got.ExpiresAt, want)
				}
				checkHolds(t, db, got)
				if !tc.renews {
					if diff := cmp.Diff(s, got); diff != "" {
						t.Errorf("an update that changes nothing changed the session (-before +after):\n%s", diff)
					}
				}

				// Another 29 minutes: past the TTL unless the update renewed it.
				clk.Add(29 * time.Minute)
				if _, err := co.ExpireDue(ctx); err != nil {
					t.Fatal(err)
				}
				_, err = co.Update(ctx, s.ID, tc.req)
				switch {
				case !tc.renews && shop.ErrorCode(err) != shop.Expired:
					t.Errorf("empty updates kept the session alive past its TTL: %v", err)
				case !tc.renews && len(holdExpiries(t, db, s.ID)) != 0:
					t.Errorf("the expired session still holds stock")
				case tc.renews && err != nil:
					t.Errorf("a real change did not renew the session: %v", err)
				}
				_, _ = co.Cancel(ctx, s.ID)
			})
		}
	})
}

// TestSessionLifetime: a session expires at its creation plus the policy's
// sessions.lifetime_hours, even with real changes every few minutes, and so
// do its holds.
func TestSessionLifetime(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShopWith(t, db, nil, func(p *checkout.Policy) { p.Sessions.LifetimeHours = 2 })
		s := p.ready(t)
		end := p.clk.Now().Add(2 * time.Hour)
		for q := 0; p.clk.Now().Before(end); q++ {
			p.clk.Add(10 * time.Minute)
			got, err := p.co.Update(ctx, s.ID, checkout.Request{Items: items("enamel-camp-mug-forest-green", 1+q%2, "stoneware-coffee-mug-16-oz", 1)})
			if !p.clk.Now().Before(end) {
				if shop.ErrorCode(err) != shop.Expired {
					t.Fatalf("at the end of its lifetime the session took an update: %v", err)
				}
				break
			}
			if err != nil || got.Status != checkout.Ready {
				t.Fatalf("update at %s: %v %+v", p.clk.Now(), err, got)
			}
			want := p.clk.Now().Add(checkout.DefaultTTL)
			if end.Before(want) {
				want = end
			}
			if !got.ExpiresAt.Equal(want) {
				t.Fatalf("updated at %s: expires at %s, want %s", p.clk.Now(), got.ExpiresAt, want)
			}
			checkHolds(t, db, got)
		}
		if n, err := p.co.ExpireDue(ctx); err != nil || n != 1 {
			t.Fatalf("expired %d (%v), want the session", n, err)
		}
		if got, err := p.co.Get(ctx, s.ID); err != nil || got.Status != checkout.Expired {
			t.Errorf("after its lifetime: %v %+v", err, got)
		}
		if n := len(holdExpiries(t, db, s.ID)); n != 0 {
			t.Errorf("%d holds left after the lifetime", n)
		}
	})
}

// TestPaysWhatItShowed: across create, a decline and the payment, with the
// clock moving between them, the session keeps the lines, totals, option,
// delivery window and expiry it was created with, its holds that expiry
// until it is paid, and the order the option with the dates the buyer saw.
func TestPaysWhatItShowed(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		same := func(step string, got *checkout.Session) {
			t.Helper()
			if !got.ExpiresAt.Equal(s.ExpiresAt) {
				t.Errorf("%s: expires at %s, created to expire at %s", step, got.ExpiresAt, s.ExpiresAt)
			}
			if diff := cmp.Diff(s.FulfillmentOptions, got.FulfillmentOptions); diff != "" {
				t.Errorf("%s: options (-created +now):\n%s", step, diff)
			}
			if diff := cmp.Diff(s.LineItems, got.LineItems); diff != "" {
				t.Errorf("%s: lines (-created +now):\n%s", step, diff)
			}
			if diff := cmp.Diff(s.Totals, got.Totals); diff != "" {
				t.Errorf("%s: totals (-created +now):\n%s", step, diff)
			}
		}

		p.clk.Add(7 * time.Minute)
		declined, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa_chargeDeclined")})
		if err != nil || declined.Status != checkout.Ready {
			t.Fatalf("decline: %v %+v", err, declined)
		}
		same("declined", declined)
		checkHolds(t, db, declined)

		p.clk.Add(7 * time.Minute)
		done, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa"), Buyer: &checkout.Buyer{Email: "ada@example.org"}})
		if err != nil || done.Status != checkout.Completed || done.Order == nil {
			t.Fatalf("pay: %v %+v", err, done)
		}
		same("paid", done)
		var chosen *checkout.FulfillmentOption
		for i, o := range s.FulfillmentOptions {
			if o.ID == s.FulfillmentOptionID {
				chosen = &s.FulfillmentOptions[i]
			}
		}
		if diff := cmp.Diff(chosen, done.Order.Receipt.FulfillmentOption); chosen == nil || diff != "" {
			t.Errorf("the order's option (-shown at creation +order):\n%s", diff)
		}
		if diff := cmp.Diff(s.Totals, done.Order.Receipt.Totals); diff != "" {
			t.Errorf("the order's totals (-shown at creation +order):\n%s", diff)
		}
	})
}

// TestPaymentLinkWithinLifetime: a payment link keeps the session's
// figures and delivery window, and holds its stock while the page is open,
// but never past the session's lifetime: the sandbox page closes with the
// session, and a provider's page, which would outlive it, is refused.
func TestPaymentLinkWithinLifetime(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		oneHour := func(p *checkout.Policy) { p.Sessions.LifetimeHours = 1 }
		p := payingShopWith(t, db, nil, oneHour)
		s := p.ready(t)
		end := p.clk.Now().Add(time.Hour)

		p.clk.Add(5 * time.Minute)
		link, err := p.co.CreateLink(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.co.Get(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s.FulfillmentOptions, got.FulfillmentOptions); diff != "" {
			t.Errorf("making the link moved the delivery window (-created +now):\n%s", diff)
		}
		if want := p.clk.Now().Add(33 * time.Minute); !got.ExpiresAt.Equal(want) || !link.ExpiresAt.Equal(want) {
			t.Errorf("with a link: session expires at %s, link at %s; want %s", got.ExpiresAt, link.ExpiresAt, want)
		}
		checkHolds(t, db, got)

		// Near the end of its lifetime the page closes with the session.
		p.clk.Add(25 * time.Minute)
		if _, err := p.co.Update(ctx, s.ID, checkout.Request{Items: items("enamel-camp-mug-forest-green", 1)}); err != nil {
			t.Fatal(err)
		}
		p.clk.Add(20 * time.Minute)
		if link, err = p.co.CreateLink(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ = p.co.Get(ctx, s.ID); !got.ExpiresAt.Equal(end) || !link.ExpiresAt.Equal(end) {
			t.Errorf("near its lifetime's end: session expires at %s, link at %s; want %s", got.ExpiresAt, link.ExpiresAt, end)
		}
		checkHolds(t, db, got)

		// A Stripe Checkout page would stay open past it: refused.
		clk := &clock{now: time.Now().UTC()}
		st := stripetest.New(t).Stripe(payments.StripeOptions{Retries: -1})
		hosted := newCheckoutWith(t, db, clk, &checkout.Options{Charger: st, Linker: st}, oneHour)
		hs, err := hosted.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian, Buyer: &checkout.Buyer{Email: "ada@example.com"}})
		if err != nil || hs.Status != checkout.Ready {
			t.Fatalf("hosted session: %v %+v", err, hs)
		}
		clk.Add(25 * time.Minute)
		if _, err := hosted.Update(ctx, hs.ID, checkout.Request{Items: items("enamel-camp-mug-cream", 2)}); err != nil {
			t.Fatal(err)
		}
		clk.Add(20 * time.Minute)
		if _, err := hosted.CreateLink(ctx, hs.ID); shop.ErrorCode(err) != shop.Invalid {
			t.Errorf("a page outliving the session: %v, want invalid", err)
		}
	})
}
