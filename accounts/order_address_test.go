package accounts_test

import (
	"context"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/database/dbtest"
)

// TestOrderAddressRemembered: a linked buyer's first order's address
// becomes their default (save_address is true by default while they have
// none), their next session starts with it and says save_address false;
// save_address true keeps another address, not as the default; a guest may
// not send it.
func TestOrderAddressRemembered(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := linked(ensure(t, db, "ada@example.com"))
		mug := &[]checkout.Item{{ID: "enamel-camp-mug-forest-green", Quantity: 1}}

		first, err := w.co.Create(ctx, checkout.Request{Items: mug, Address: californian})
		if err != nil {
			t.Fatal(err)
		}
		if first.SaveAddress == nil || !*first.SaveAddress {
			t.Fatalf("first session's save_address = %v, want true (the account has no address)", first.SaveAddress)
		}
		pay(t, w, ctx, first.ID)
		def, err := w.data.DefaultAddress(context.Background(), shop.BuyerFrom(ctx).AccountID)
		if err != nil || def == nil || *def != *californian {
			t.Fatalf("default after the first order = %+v, %v; want %+v", def, err, californian)
		}

		next, err := w.co.Create(ctx, checkout.Request{Items: mug})
		if err != nil {
			t.Fatal(err)
		}
		if next.FulfillmentAddress == nil || *next.FulfillmentAddress != *californian {
			t.Fatalf("the next session starts with %+v, want the saved %+v", next.FulfillmentAddress, californian)
		}
		if next.SaveAddress == nil || *next.SaveAddress {
			t.Fatalf("next session's save_address = %v, want false (a default is saved)", next.SaveAddress)
		}
		office := checkout.Address{Name: "Ada Lovelace", LineOne: "2 Elm St", City: "Portland", State: "OR", Country: "US", PostalCode: "97201"}
		yes := true
		upd, err := w.co.Update(ctx, next.ID, checkout.Request{Address: &office, SaveAddress: &yes})
		if err != nil || upd.SaveAddress == nil || !*upd.SaveAddress {
			t.Fatalf("update save_address: %v %+v", err, upd)
		}
		pay(t, w, ctx, next.ID)
		saved, err := w.data.Addresses(context.Background(), shop.BuyerFrom(ctx).AccountID)
		if err != nil || len(saved) != 2 || !saved[0].Default || saved[1].Default || saved[1].Address != office {
			t.Fatalf("addresses = %+v, %v; want the first the default and the office beside it", saved, err)
		}

		guest, err := w.co.Create(context.Background(), checkout.Request{Items: mug, Buyer: &checkout.Buyer{Email: "g@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		if guest.SaveAddress != nil {
			t.Errorf("a guest's session shows save_address %v", *guest.SaveAddress)
		}
		if _, err := w.co.Update(context.Background(), guest.ID, checkout.Request{SaveAddress: &yes}); shop.ErrorCode(err) != shop.Invalid {
			t.Errorf("a guest's save_address: %v, want invalid", err)
		}
	})
}

func pay(t *testing.T, w *world, ctx context.Context, id string) {
	t.Helper()
	done, err := w.co.Complete(ctx, checkout.CompleteRequest{SessionID: id, Payment: checkout.PaymentData{Token: "pm_card_visa", Provider: "stripe"}})
	if err != nil || done.Order == nil {
		t.Fatalf("complete: %v %+v", err, done)
	}
}
