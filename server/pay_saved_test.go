package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

// newWalletPayShop is newPayShop whose provider keeps saved cards, with
// the account ada.
func newWalletPayShop(t *testing.T, db *gorm.DB) *payShop {
	t.Helper()
	p := startPayShop(t, db, true)
	now := time.Now().UTC()
	if err := db.Exec("INSERT INTO accounts (id, email, created_at, updated_at) VALUES ('ada', 'ada@example.com', ?, ?)", now, now).Error; err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPayPageSavesCard: the sandbox page offers "Save this card for next
// time" to a linked buyer only; ticked, the card is saved and pays; the
// account's next session offers it, on the page too, and it pays that
// session in one post: two charges, two orders.
func TestPayPageSavesCard(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := newWalletPayShop(t, db)
		ada := shop.WithBuyer(context.Background(), shop.Buyer{AccountID: "ada", AccountEmail: "ada@example.com", Scopes: shop.Scopes})

		guest := p.readyFor(t, context.Background())
		_, body := get(t, p.url+"/pay/"+guest.ID+"?t="+p.co.PayToken(guest.ID))
		if strings.Contains(body, "save_card") {
			t.Errorf("a guest's page offers to save the card")
		}
		// A guest's form posting save_card saves nothing.
		p.post(t, guest.ID, url.Values{"card": {"pm_card_visa"}, "save_card": {"1"}, "email": {"ada@example.com"}, "seen": {seenOf(t, body)}})
		if n := p.count(t, "saved_cards"); n != 0 {
			t.Errorf("a guest's payment saved %d cards", n)
		}

		first := p.readyFor(t, ada)
		_, body = get(t, p.url+"/pay/"+first.ID+"?t="+p.co.PayToken(first.ID))
		if !strings.Contains(body, `name="save_card"`) || !strings.Contains(body, "Save this card for next time") {
			t.Fatalf("a linked buyer's page has no save checkbox:\n%s", body)
		}
		status, b := p.post(t, first.ID, url.Values{"card": {"pm_card_visa"}, "save_card": {"1"}, "email": {"ada@example.com"}, "seen": {seenOf(t, body)}})
		if status != http.StatusSeeOther {
			t.Fatalf("pay and save: status %d\n%s", status, b)
		}
		next := p.readyFor(t, ada)
		m := next.PaymentProvider.ManagedPaymentMethods
		if len(m) != 1 || m[0].DisplayLast4 != "4242" {
			t.Fatalf("next session offers %+v; want the saved visa", m)
		}
		_, body = get(t, p.url+"/pay/"+next.ID+"?t="+p.co.PayToken(next.ID))
		if !strings.Contains(body, `value="`+m[0].ID+`"`) || !strings.Contains(body, "Visa •••• 4242") {
			t.Fatalf("the page does not offer the saved card:\n%s", body)
		}
		status, _ = p.post(t, next.ID, url.Values{"card": {m[0].ID}, "email": {"ada@example.com"}, "seen": {seenOf(t, body)}})
		if status != http.StatusSeeOther {
			t.Fatalf("pay with the saved card: status %d", status)
		}
		done, err := p.co.Get(ada, next.ID)
		if err != nil || done.Status != checkout.Completed {
			t.Fatalf("session paid with the saved card: %v %s", err, done.Status)
		}
		for table, want := range map[string]int64{"sandbox_charges": 3, "orders": 3, "saved_cards": 1} {
			if n := p.count(t, table); n != want {
				t.Errorf("%s: %d rows; want %d", table, n, want)
			}
		}
	})
}
