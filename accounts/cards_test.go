package accounts_test

import (
	"context"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/accounts"
	"shop/checkout"
	"shop/database/dbtest"
)

// TestMyPaymentMethods: a linked buyer lists and removes their saved cards
// (scope payments); a removed card is gone from their next session and
// pays nothing; nobody else sees or removes them.
func TestMyPaymentMethods(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ada, bob := ensure(t, db, "ada@example.com"), ensure(t, db, "bob@example.com")
		adaCtx := linked(ada, shop.ScopePayments, shop.ScopeAccount)
		if tl := w.tools["list_my_payment_methods"]; len(tl.Auth.Scopes) != 1 || tl.Auth.Scopes[0] != shop.ScopePayments {
			t.Errorf("list_my_payment_methods Auth = %+v; want scope payments", tl.Auth)
		}
		var got accounts.MyPaymentMethods
		w.mustCall(t, adaCtx, "list_my_payment_methods", struct{}{}, &got)
		if len(got.PaymentMethods) != 0 {
			t.Fatalf("before saving: %+v", got)
		}
		visa, err := w.wallet.Save(context.Background(), ada.ID, "pm_card_visa")
		if err != nil {
			t.Fatal(err)
		}
		amex, err := w.wallet.Save(context.Background(), ada.ID, "pm_card_amex")
		if err != nil {
			t.Fatal(err)
		}
		w.mustCall(t, adaCtx, "list_my_payment_methods", struct{}{}, &got)
		if len(got.PaymentMethods) != 2 || got.PaymentMethods[0].ID != amex.ID || got.PaymentMethods[0].DisplayBrand != "amex" {
			t.Fatalf("listed %+v", got.PaymentMethods)
		}

		if err := w.call(t, context.Background(), "list_my_payment_methods", struct{}{}, nil); shop.ErrorCode(err) != accounts.AccountRequired {
			t.Errorf("a guest listing: %v; want account_required", err)
		}
		if err := w.call(t, linked(ada, accounts.ScopeOrders), "list_my_payment_methods", struct{}{}, nil); shop.ErrorCode(err) != accounts.AccountRequired {
			t.Errorf("without scope payments: %v; want account_required", err)
		}
		err = w.call(t, linked(bob, shop.ScopePayments), "remove_my_payment_method", accounts.PaymentMethodArgs{PaymentMethodID: visa.ID}, nil)
		if shop.ErrorCode(err) != shop.NotFound {
			t.Errorf("bob removing ada's card: %v; want not_found", err)
		}

		w.mustCall(t, adaCtx, "remove_my_payment_method", accounts.PaymentMethodArgs{PaymentMethodID: visa.ID}, &got)
		if len(got.PaymentMethods) != 1 || got.PaymentMethods[0].ID != amex.ID {
			t.Errorf("after removing: %+v", got.PaymentMethods)
		}
		s, err := w.co.Create(adaCtx, checkout.Request{Items: &[]checkout.Item{{ID: "enamel-camp-mug-forest-green", Quantity: 1}}, Address: californian})
		if err != nil {
			t.Fatal(err)
		}
		if m := s.PaymentProvider.ManagedPaymentMethods; len(m) != 1 || m[0].ID != amex.ID {
			t.Errorf("next session offers %+v; want only the amex", m)
		}
		_, err = w.co.Complete(adaCtx, checkout.CompleteRequest{SessionID: s.ID, Payment: checkout.PaymentData{Token: visa.ID, Provider: "stripe"}})
		if e := shop.ErrorCode(err); e != shop.Invalid {
			t.Errorf("paying with the removed card: %v; want invalid $.payment_data.token", err)
		}

		// Paid with the amex, the staff's get_order names the saved card.
		done, err := w.co.Complete(adaCtx, checkout.CompleteRequest{SessionID: s.ID, Payment: checkout.PaymentData{Token: amex.ID, Provider: "stripe"}})
		if err != nil || done.Order == nil {
			t.Fatalf("paying with the saved amex: %v %+v", err, done)
		}
		res, err := w.tools["get_order"].Handle(owner(), []byte(`{"order_id":"`+done.Order.ID+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Text, "with the buyer's saved card amex •••• 8431") {
			t.Errorf("get_order does not name the saved card:\n%s", res.Text)
		}
	})
}
