package checkout_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

// TestPaymentLinkSandbox: without a provider that hosts pages, a link is the
// shop's own page under a signed token, open at least half an hour, with the
// session's stock held a little longer; the page pays through Complete.
func TestPaymentLinkSandbox(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s := p.ready(t)
		link, err := p.co.CreateLink(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(link.URL)
		if err != nil || u.Path != "/pay/"+s.ID || link.Provider != "sandbox" {
			t.Fatalf("link %+v (%v)", link, err)
		}
		token := u.Query().Get("t")
		other := p.ready(t)
		for _, tc := range []struct {
			id, token string
			want      bool
		}{
			{s.ID, token, true},
			{other.ID, token, false},
			{s.ID, token + "A", false},
			{s.ID, strings.ToUpper(token), false},
			{s.ID, "", false},
		} {
			if got := p.co.ValidPayToken(tc.id, tc.token); got != tc.want {
				t.Errorf("ValidPayToken(%s, %q) = %v, want %v", tc.id, tc.token, got, tc.want)
			}
		}
		if min := p.clk.Now().Add(33 * time.Minute); link.ExpiresAt.Before(min) {
			t.Errorf("link open until %s, want at least %s", link.ExpiresAt, min)
		}
		var holds []time.Time
		if err := db.Table("stock_holds").Where("holder = ?", s.ID).Pluck("expires_at", &holds).Error; err != nil || len(holds) == 0 {
			t.Fatalf("holds %v (%v)", holds, err)
		}
		for _, until := range holds {
			if until.Before(link.ExpiresAt) {
				t.Errorf("stock held until %s, before the link closes at %s", until, link.ExpiresAt)
			}
		}

		done, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
		if err != nil || done.Status != checkout.Completed {
			t.Fatalf("pay on the page: %v %+v", err, done)
		}
		if _, err := p.co.CreateLink(ctx, s.ID); shop.ErrorCode(err) != shop.Invalid {
			t.Errorf("link for a completed session: %v, want invalid", err)
		}
	})
}

func TestPaymentLinkRefusals(t *testing.T) {
	ctx := context.Background()
	p := payingShop(t, dbtest.Open(t, "sqlite"), nil)
	notReady, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Buyer: &checkout.Buyer{Email: "ada@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	noEmail, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 1), Address: californian})
	if err != nil || noEmail.Status != checkout.Ready {
		t.Fatalf("%v %+v", err, noEmail)
	}
	for _, tc := range []struct {
		name, id string
		code     shop.Code
		param    string
	}{
		{"NotReady", notReady.ID, shop.Invalid, "$.checkout_session_id"},
		{"NoEmail", noEmail.ID, shop.Missing, "$.buyer.email"},
		{"Unknown", "cs_nosuchsession", shop.NotFound, "$.checkout_session_id"},
		{"Empty", "", shop.Missing, "$.checkout_session_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.co.CreateLink(ctx, tc.id)
			var e *shop.Error
			if !errors.As(err, &e) || e.Code != tc.code || e.Param != tc.param {
				t.Errorf("CreateLink: %v, want %s at %s", err, tc.code, tc.param)
			}
		})
	}
}

// TestCancelPayment: leaving the page keeps the cart and says so once, until
// the session next changes.
func TestCancelPayment(t *testing.T) {
	ctx := context.Background()
	p := payingShop(t, dbtest.Open(t, "sqlite"), nil)
	s := p.ready(t)
	canceled := func(s *checkout.Session) int {
		n := 0
		for _, m := range s.Messages {
			if m.Code == checkout.PaymentCanceled && m.Type == checkout.MessageInfo {
				n++
			}
		}
		return n
	}
	for range 2 {
		got, err := p.co.CancelPayment(ctx, s.ID)
		if err != nil || got.Status != checkout.Ready || canceled(got) != 1 {
			t.Fatalf("after cancel: %v %s %+v", err, got.Status, got.Messages)
		}
	}
	if _, err := p.co.CreateLink(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := p.co.Get(ctx, s.ID); canceled(got) != 0 {
		t.Errorf("a new link keeps the old cancel message: %+v", got.Messages)
	}
}
