package accounts_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/accounts"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/orders"
)

func oregon(name string) map[string]any {
	return map[string]any{"name": name, "line_one": "2 Elm St", "city": "Portland", "state": "OR", "country": "US", "postal_code": "97201"}
}

// TestAddresses: saved addresses are checked as checkout checks them,
// bounded in number, one of them the default, and each buyer's own.
func TestAddresses(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ada, bob := ensure(t, db, "ada@example.com"), ensure(t, db, "bob@example.com")

		for _, tc := range []struct {
			name  string
			addr  map[string]any
			code  shop.Code
			param string
		}{
			{"missing city", map[string]any{"name": "A", "line_one": "1 Main", "state": "CA", "country": "US", "postal_code": "94105"}, shop.Missing, "$.address.city"},
			{"not shipped to", map[string]any{"name": "A", "line_one": "1 Main", "city": "Lima", "country": "PE", "postal_code": "15001"}, shop.Invalid, "$.address.country"},
			{"bad postal code", map[string]any{"name": "A", "line_one": "1 Main", "city": "SF", "state": "CA", "country": "US", "postal_code": "9410"}, shop.Invalid, "$.address.postal_code"},
			{"control character", map[string]any{"name": "A\nB", "line_one": "1 Main", "city": "SF", "state": "CA", "country": "US", "postal_code": "94105"}, shop.Invalid, "$.address.name"},
		} {
			err := w.call(t, linked(ada), "add_my_address", map[string]any{"address": tc.addr}, nil)
			if e, ok := err.(*shop.Error); !ok || e.Code != tc.code || e.Param != tc.param {
				t.Errorf("%s: %v, want %s at %s", tc.name, err, tc.code, tc.param)
			}
		}

		var acct accounts.AccountResult
		w.mustCall(t, linked(ada), "add_my_address", map[string]any{"address": oregon("Ada 1")}, &acct)
		first := acct.Account.Addresses[0]
		if !first.Default || acct.Account.DefaultAddressID != first.ID || acct.Account.Email != "ada@example.com" || acct.Account.LinkedSince.IsZero() {
			t.Fatalf("the first address is not the default: %+v", acct.Account)
		}
		w.mustCall(t, linked(ada), "add_my_address", map[string]any{"address": oregon("Ada 2"), "make_default": true}, &acct)
		second := acct.Account.Addresses[1]
		if acct.Account.DefaultAddressID != second.ID || acct.Account.Addresses[0].Default {
			t.Fatalf("make_default did not move the default: %+v", acct.Account)
		}
		w.mustCall(t, linked(ada), "set_my_default_address", map[string]any{"address_id": first.ID}, &acct)
		if acct.Account.DefaultAddressID != first.ID {
			t.Fatalf("set_my_default_address: %+v", acct.Account)
		}
		// A session starts with the default address.
		s, err := w.co.Create(linked(ada), checkout.Request{Items: &[]checkout.Item{{ID: "enamel-camp-mug-forest-green", Quantity: 1}}})
		if err != nil || s.FulfillmentAddress == nil || s.FulfillmentAddress.Name != "Ada 1" || s.Buyer == nil || s.Buyer.Email != "ada@example.com" {
			t.Fatalf("session of a linked buyer: %v %+v %+v", err, s.FulfillmentAddress, s.Buyer)
		}

		// Another buyer neither sees nor changes Ada's addresses.
		for _, tool := range []string{"remove_my_address", "set_my_default_address"} {
			if err := w.call(t, linked(bob), tool, map[string]any{"address_id": first.ID}, nil); shop.ErrorCode(err) != shop.NotFound {
				t.Errorf("Bob's %s of Ada's address: %v, want not_found", tool, err)
			}
		}
		w.mustCall(t, linked(bob), "get_my_account", nil, &acct)
		if len(acct.Account.Addresses) != 0 || acct.Account.Email != "bob@example.com" {
			t.Errorf("Bob's account shows %+v", acct.Account)
		}

		// Removing the default makes the newest other one the default.
		w.mustCall(t, linked(ada), "remove_my_address", map[string]any{"address_id": first.ID}, &acct)
		if len(acct.Account.Addresses) != 1 || acct.Account.DefaultAddressID != second.ID {
			t.Fatalf("after removing the default: %+v", acct.Account)
		}
		if err := w.call(t, linked(ada), "remove_my_address", map[string]any{"address_id": first.ID}, nil); shop.ErrorCode(err) != shop.NotFound {
			t.Errorf("removing it again: %v, want not_found", err)
		}

		for i := len(acct.Account.Addresses); i < accounts.MaxAddresses; i++ {
			w.mustCall(t, linked(ada), "add_my_address", map[string]any{"address": oregon(fmt.Sprint("Ada ", i+3))}, nil)
		}
		err = w.call(t, linked(ada), "add_my_address", map[string]any{"address": oregon("one too many")}, nil)
		if e, ok := err.(*shop.Error); !ok || e.Code != shop.Invalid || e.Param != "$.address" {
			t.Errorf("address %d: %v, want invalid $.address", accounts.MaxAddresses+1, err)
		}
	})
}

// TestAccountToolsRefuse: each account tool refuses a guest, and a linked
// buyer whose token lacks the tool's scope, with unauthorized.
func TestAccountToolsRefuse(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ada := ensure(t, db, "ada@example.com")
		args := map[string]any{"address": oregon("A"), "address_id": "addr_x", "order_id": "ord_aaaaaaaaaaaaaaaaaaaaaaaaaa", "confirm_email": ada.Email, "payment_method_id": "pm_sandbox_x"}
		guest := shop.WithBuyer(context.Background(), shop.Buyer{Subject: "host-user"})
		for _, tl := range w.data.Tools() {
			if err := w.call(t, guest, tl.Name, args, nil); shop.ErrorCode(err) != accounts.AccountRequired {
				t.Errorf("%s as a guest: %v, want unauthorized", tl.Name, err)
			}
			scope := accounts.ToolScope(tl.Name)
			if scope == "" {
				t.Fatalf("%s has no scope", tl.Name)
			}
			var others []string // every scope but the tool's
			for _, s := range shop.Scopes {
				if s != scope {
					others = append(others, s)
				}
			}
			if err := w.call(t, linked(ada, others...), tl.Name, args, nil); shop.ErrorCode(err) != accounts.AccountRequired {
				t.Errorf("%s without scope %s: %v, want unauthorized", tl.Name, scope, err)
			}
		}
		if _, err := accounts.Get(context.Background(), db, ada.ID); err != nil {
			t.Fatalf("a refused delete_my_account deleted the account: %v", err)
		}
	})
}

// TestDeleteMyAccount: deleting an account removes it and its addresses
// and keeps its orders, with their email, no longer tied to it.
func TestDeleteMyAccount(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		ada, bob := ensure(t, db, "ada@example.com"), ensure(t, db, "bob@example.com")
		w.mustCall(t, linked(ada), "add_my_address", map[string]any{"address": oregon("Ada")}, nil)
		w.mustCall(t, linked(bob), "add_my_address", map[string]any{"address": oregon("Bob")}, nil)
		ord := w.buy(t, linked(ada), nil, nil)
		// A session of the account still open when it goes.
		open, err := w.co.Create(linked(ada), checkout.Request{Items: &[]checkout.Item{{ID: "enamel-camp-mug-forest-green", Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}

		for _, bad := range []string{"", "bob@example.com"} {
			if err := w.call(t, linked(ada), "delete_my_account", map[string]any{"confirm_email": bad}, nil); err == nil {
				t.Fatalf("delete_my_account with confirm_email %q deleted the account", bad)
			}
		}
		var res accounts.DeletedResult
		w.mustCall(t, linked(ada), "delete_my_account", map[string]any{"confirm_email": "ADA@example.com"}, &res)
		if res.Deleted.AccountID != ada.ID || res.Deleted.Addresses != 1 || res.Deleted.OrdersKept != 1 {
			t.Errorf("deleted %+v", res.Deleted)
		}
		if _, err := accounts.Get(ctx, db, ada.ID); err != accounts.ErrNotFound {
			t.Errorf("the account is still there: %v", err)
		}
		var events orders.AuditList
		w.mustCall(t, owner(), "list_audit_events", map[string]any{"tool": "delete_my_account"}, &events)
		if len(events.Events) != 1 || events.Events[0].Actor != "buyer" || !strings.Contains(string(events.Events[0].After), ada.ID) ||
			strings.Contains(string(events.Events[0].After), "ada@") {
			t.Errorf("audit of the deletion: %+v", events.Events)
		}
		var n int64
		db.Table("account_addresses").Where("account_id = ?", ada.ID).Count(&n)
		if n != 0 {
			t.Errorf("%d addresses left", n)
		}
		if err := w.call(t, linked(ada), "get_my_account", nil, nil); shop.ErrorCode(err) != accounts.AccountRequired {
			t.Errorf("get_my_account with the deleted account's token: %v, want unauthorized", err)
		}
		// The orders stay, with their email, tied to no account.
		var detail orders.OrderDetailResult
		w.mustCall(t, owner(), "get_order", map[string]any{"order_id": ord.ID}, &detail)
		if detail.Order.AccountID != "" || detail.Order.Receipt.Email != "ada@example.com" {
			t.Errorf("the order after the deletion: account %q, email %q", detail.Order.AccountID, detail.Order.Receipt.Email)
		}
		// The open session went with the account (delete_sessions_test.go).
		if s, err := w.co.Get(checkout.OnPaymentPage(ctx), open.ID); err != nil || s.Status != checkout.Canceled {
			t.Fatalf("the deleted account's open session: %v %+v; want canceled", err, s)
		}
		// Bob's account is untouched; a new login of Ada's email is a new
		// account that sees her orders through her email.
		var acct accounts.AccountResult
		w.mustCall(t, linked(bob), "get_my_account", nil, &acct)
		if len(acct.Account.Addresses) != 1 {
			t.Errorf("Bob's addresses after Ada's deletion: %+v", acct.Account.Addresses)
		}
		again := ensure(t, db, "ada@example.com")
		var mine accounts.MyOrders
		w.mustCall(t, linked(again), "list_my_orders", nil, &mine)
		if again.ID == ada.ID || len(mine.Orders) != 1 {
			t.Errorf("the new account %s (was %s) sees %d orders, want 1", again.ID, ada.ID, len(mine.Orders))
		}
	})
}

// TestDeleteAccountByOwner: only the owner deletes an account, confirming
// its email, and the audit log records it.
func TestDeleteAccountByOwner(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ada := ensure(t, db, "ada@example.com")
		args := map[string]any{"account_id": ada.ID, "email": ada.Email, "reason": "the buyer asked by email"}
		for _, role := range []shop.Role{shop.Viewer, shop.Support} {
			ctx := shop.WithActor(context.Background(), shop.Actor{Role: role, Label: "t"})
			if err := w.call(t, ctx, "delete_account", args, nil); shop.ErrorCode(err) != shop.Forbidden {
				t.Errorf("delete_account as %s: %v, want forbidden", role, err)
			}
		}
		if err := w.call(t, context.Background(), "delete_account", args, nil); shop.ErrorCode(err) != shop.Forbidden {
			t.Errorf("delete_account without a token: %v, want forbidden", err)
		}
		wrong := map[string]any{"account_id": ada.ID, "email": "bob@example.com", "reason": "x"}
		if err := w.call(t, owner(), "delete_account", wrong, nil); shop.ErrorCode(err) != shop.Invalid {
			t.Errorf("delete_account with another email: %v, want invalid", err)
		}
		if err := w.call(t, owner(), "delete_account", map[string]any{"account_id": "acct_nobody", "email": "x@example.com", "reason": "x"}, nil); shop.ErrorCode(err) != shop.NotFound {
			t.Errorf("delete_account of no account: %v, want not_found", err)
		}
		if _, err := accounts.Get(context.Background(), db, ada.ID); err != nil {
			t.Fatalf("a refused delete_account deleted the account: %v", err)
		}
		w.mustCall(t, owner(), "delete_account", args, nil)
		if _, err := accounts.Get(context.Background(), db, ada.ID); err != accounts.ErrNotFound {
			t.Errorf("the account is still there: %v", err)
		}
		var events orders.AuditList
		w.mustCall(t, owner(), "list_audit_events", map[string]any{"tool": "delete_account"}, &events)
		if len(events.Events) != 1 || events.Events[0].Actor != "owner:test" {
			t.Errorf("audit events: %+v", events.Events)
		}
	})
}

// TestAddressesConcurrent: calls at once never save more than MaxAddresses
// addresses nor leave more than one default.
func TestAddressesConcurrent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ada := ensure(t, db, "ada@example.com")
		const calls = 2 * accounts.MaxAddresses
		errs := make(chan error, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := w.data.AddAddress(linked(ada), ada.ID, checkout.Address{Name: fmt.Sprint("Ada ", i), LineOne: "2 Elm St",
					City: "Portland", State: "OR", Country: "US", PostalCode: "97201"}, true)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		refused := 0
		for err := range errs {
			switch {
			case err == nil:
			case shop.ErrorCode(err) == shop.Invalid:
				refused++
			default:
				t.Errorf("add: %v", err)
			}
		}
		var saved, defaults int64
		db.Table("account_addresses").Where("account_id = ?", ada.ID).Count(&saved)
		db.Table("account_addresses").Where("account_id = ? AND is_default = ?", ada.ID, true).Count(&defaults)
		if saved != accounts.MaxAddresses || defaults != 1 || refused != calls-accounts.MaxAddresses {
			t.Errorf("%d calls at once: %d saved, %d default, %d refused; want %d, 1, %d", calls, saved, defaults, refused,
				accounts.MaxAddresses, calls-accounts.MaxAddresses)
		}
	})
}
