package checkout_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/checkout"
	"shop/database/dbtest"
)

// storedSession is a checkout_sessions row as text, the way the columns hold it.
type storedSession struct {
	Items, Buyer, Address, Metadata, Priced string
}

func readStored(t *testing.T, db *gorm.DB, id string) storedSession {
	t.Helper()
	var s storedSession
	if err := db.Raw("SELECT items, buyer, address, metadata, priced FROM checkout_sessions WHERE id = ?", id).Scan(&s).Error; err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStoredText: a session's structured columns hold JSON text (” for an
// absent buyer, address or metadata), as they always have, and a row written
// as text by hand (by an older version of the shop) reads back as the
// session it is.
func TestStoredText(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := payingShop(t, db, nil)
		s, err := p.co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-cream", 2)})
		if err != nil {
			t.Fatal(err)
		}
		got := readStored(t, db, s.ID)
		if got.Items != `[{"id":"enamel-camp-mug-cream","quantity":2}]` || got.Buyer != "" || got.Address != "" || got.Metadata != "" {
			t.Errorf("stored input columns %+v", got)
		}
		if !strings.HasPrefix(got.Priced, `{"line_items":[{`) {
			t.Errorf("stored priced %.80s…", got.Priced)
		}

		ready := p.ready(t)
		stored := readStored(t, db, ready.ID)
		if !strings.HasPrefix(stored.Buyer, `{"name":"Ada Lovelace"`) || !strings.HasPrefix(stored.Address, "{") {
			t.Errorf("stored buyer %q, address %q", stored.Buyer, stored.Address)
		}
		// The same row, copied by SQL as text under another id: read as
		// the same session.
		err = db.Exec(`INSERT INTO checkout_sessions (id, status, version, currency, items, buyer, address, option_id, promo_code, metadata, priced, total, order_id, expires_at, created_at, updated_at, buyer_key, buyer_email)
			SELECT 'cs_copy', status, version, currency, items, buyer, address, option_id, promo_code, metadata, priced, total, 'ord_copy', expires_at, created_at, updated_at, buyer_key, buyer_email
			FROM checkout_sessions WHERE id = ?`, ready.ID).Error
		if err != nil {
			t.Fatal(err)
		}
		copied, err := p.co.Get(ctx, "cs_copy")
		if err != nil {
			t.Fatal(err)
		}
		again, err := p.co.Get(ctx, ready.ID)
		if err != nil {
			t.Fatal(err)
		}
		copied.ID = again.ID
		if diff := cmp.Diff(again, copied); diff != "" {
			t.Errorf("a row written as text reads as another session (-want +got):\n%s", diff)
		}
	})
}
