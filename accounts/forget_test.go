package accounts_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/accounts"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// TestDeleteForgetsSavedCards: the buyer's deletion of their account
// deletes their customer at the payment provider (the sandbox), so their
// saved card is detached there and charging it is refused.
func TestDeleteForgetsSavedCards(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ada := ensure(t, db, "ada@example.com")
		visa, err := w.wallet.Save(ctx, ada.ID, "pm_card_visa")
		if err != nil {
			t.Fatal(err)
		}
		w.mustCall(t, linked(ada), "delete_my_account", map[string]any{"confirm_email": ada.Email}, nil)
		var cust string
		if err := db.Raw("SELECT customer_id FROM sandbox_payment_methods WHERE id = ?", visa.ID).Scan(&cust).Error; err != nil || cust != "" {
			t.Errorf("the sandbox's payment method is attached to %q (%v); want it detached", cust, err)
		}
		_, err = payments.NewSandbox(db, nil).Charge(ctx, payments.Request{Amount: 1500, Currency: "usd", Token: visa.ID,
			Customer: visa.Customer, IdempotencyKey: "k_after_delete"})
		if shop.ErrorCode(err) != shop.Invalid {
			t.Errorf("charging the deleted account's card: %v; want it refused", err)
		}
	})
}

// TestDeleteForgetsStripeCustomer: the staff's deletion deletes the
// account's Stripe Customer (the emulator), detaching its card. When Stripe
// fails (a 500, an unreachable address), nothing is deleted and the answer
// says to try again; trying again deletes it, and a Customer already gone
// at Stripe does not stop the deletion.
func TestDeleteForgetsStripeCustomer(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		em := stripetest.New(t)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		unreachable := "http://" + ln.Addr().String()
		_ = ln.Close()
		w := newWorld(t, db)
		stripe := em.Stripe(payments.StripeOptions{Retries: -1})
		useWallet(w, payments.NewWallet(db, stripe))
		for _, tt := range []struct {
			name string
			fail func(w *world)
		}{
			{"stripe answers 500", func(*world) { em.FailNext(1, 500) }},
			{"stripe unreachable", func(w *world) {
				s, err := payments.NewStripe(payments.StripeOptions{SecretKey: "sk_test_unreachable", APIBase: unreachable, Retries: -1})
				if err != nil {
					t.Fatal(err)
				}
				useWallet(w, payments.NewWallet(db, s))
			}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				ada := ensure(t, db, strings.ReplaceAll(tt.name, " ", "-")+"@example.com")
				visa, err := w.wallet.Save(ctx, ada.ID, "pm_card_visa")
				if err != nil {
					t.Fatal(err)
				}
				args := map[string]any{"account_id": ada.ID, "email": ada.Email, "reason": "the buyer asked by email"}
				tt.fail(w)
				err = w.call(t, owner(), "delete_account", args, nil)
				if shop.ErrorCode(err) != shop.Unavailable || !strings.Contains(err.Error(), "nothing was deleted; try again") {
					t.Errorf("delete_account while Stripe fails: %v; want unavailable, try again", err)
				}
				if _, err := accounts.Get(ctx, db, ada.ID); err != nil {
					t.Fatalf("the account is gone after a failed deletion: %v", err)
				}
				if cards, err := w.wallet.Cards(ctx, ada.ID); err != nil || len(cards) != 1 || customerOf(em, visa.ID) != visa.Customer {
					t.Fatalf("after a failed deletion: cards %+v (%v), emulator %+v; want the card kept", cards, err, em.SavedMethods())
				}

				useWallet(w, payments.NewWallet(db, stripe))
				w.mustCall(t, owner(), "delete_account", args, nil)
				if _, err := accounts.Get(ctx, db, ada.ID); err != accounts.ErrNotFound {
					t.Errorf("the account is still there: %v", err)
				}
				if c := customerOf(em, visa.ID); c != "" {
					t.Errorf("the card is still attached to %s at Stripe", c)
				}
			})
		}
		t.Run("customer already gone", func(t *testing.T) {
			bob := ensure(t, db, "bob@example.com")
			amex, err := w.wallet.Save(ctx, bob.ID, "pm_card_amex")
			if err != nil {
				t.Fatal(err)
			}
			// Deleted already (a deletion whose transaction failed after
			// it), yet the shop still names it: the deletion goes on.
			if err := w.wallet.Forget(ctx, bob.ID); err != nil {
				t.Fatal(err)
			}
			err = db.Exec("INSERT INTO payment_customers (account_id, provider, customer_id, created_at) VALUES (?, 'stripe', ?, CURRENT_TIMESTAMP)",
				bob.ID, amex.Customer).Error
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.data.Delete(ctx, bob.ID, nil); err != nil {
				t.Errorf("deleting an account whose Customer is already gone: %v", err)
			}
		})
	})
}

// useWallet makes w's account tools keep their saved cards in wallet.
func useWallet(w *world, wallet *payments.Wallet) {
	w.wallet = wallet
	w.data = accounts.NewData(w.db, w.ords, accounts.DataOptions{CheckAddress: w.co.CheckAddress, Wallet: wallet})
	for _, tl := range append(w.data.Tools(), w.data.AdminTools()...) {
		w.tools[tl.Name] = tl
	}
}

// customerOf is the customer the emulator's payment method id is attached
// to, "" when detached.
func customerOf(em *stripetest.Server, id string) string {
	for _, m := range em.SavedMethods() {
		if m.ID == id {
			return m.Customer
		}
	}
	return ""
}
