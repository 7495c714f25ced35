package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/orders"
)

// maxAddressIDLen bounds an address id as a caller sends it.
const maxAddressIDLen = 64

// toolScopes is the scope each account tool needs (CONTRACT.md §10): what
// the tool's securitySchemes name.
var toolScopes = map[string]string{
	"get_my_account": ScopeAccount, "add_my_address": ScopeAccount, "remove_my_address": ScopeAccount,
	"set_my_default_address": ScopeAccount, "delete_my_account": ScopeAccount,
	"list_my_orders": ScopeOrders, "get_my_order": ScopeOrders,
	"list_my_payment_methods": shop.ScopePayments, "remove_my_payment_method": shop.ScopePayments,
}

// ToolScope returns the scope the account tool name needs, "" for a tool
// that is not one of them.
func ToolScope(name string) string { return toolScopes[name] }

// authFor is the account tool name's requirement: its scope, on a linked
// account. Package server refuses other buyers with the linking challenge.
func authFor(name string) shop.AuthRequirement {
	return shop.AuthRequirement{Scopes: []string{toolScopes[name]}}
}

// AccountResult is get_my_account's structured content, and that of the
// tools that change the account's addresses.
type AccountResult struct {
	Account Profile `json:"account"`
}

// AddAddressArgs are add_my_address's arguments.
type AddAddressArgs struct {
	Address     contract.Address `json:"address" jsonschema:"The shipping address to save, as a checkout session's fulfillment_address."`
	MakeDefault bool             `json:"make_default,omitempty" jsonschema:"true: new checkout sessions start with this address (an account's first address is its default anyway)."`
}

// AddressIDArgs name one of the buyer's addresses.
type AddressIDArgs struct {
	AddressID string `json:"address_id" jsonschema:"The address's id, \"addr_…\", as get_my_account lists it."`
}

// RefineSchema bounds the id.
func (AddressIDArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["address_id"].MinLength, s.Properties["address_id"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxAddressIDLen)
}

// MyOrdersArgs are list_my_orders' page.
type MyOrdersArgs struct {
	Limit  *int   `json:"limit,omitempty" jsonschema:"Orders per page."`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page."`
}

// RefineSchema bounds the page.
func (MyOrdersArgs) RefineSchema(s *jsonschema.Schema) {
	l := s.Properties["limit"]
	l.Minimum, l.Maximum, l.Default = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(orders.MaxBuyerOrders)), []byte("10")
	s.Properties["cursor"].MaxLength = jsonschema.Ptr(300)
}

// MyOrders is list_my_orders' structured content, newest first.
type MyOrders struct {
	Orders     []contract.Order `json:"orders"`
	NextCursor string           `json:"next_cursor,omitempty"`
}

// MyOrderArgs are get_my_order's arguments.
type MyOrderArgs struct {
	OrderID string `json:"order_id" jsonschema:"The order's id, \"ord_…\", as list_my_orders shows it."`
}

// RefineSchema bounds the id.
func (MyOrderArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["order_id"].MinLength, s.Properties["order_id"].MaxLength = jsonschema.Ptr(30), jsonschema.Ptr(30)
}

// MyOrder is get_my_order's structured content.
type MyOrder struct {
	Order contract.Order `json:"order"`
}

// DeleteMyAccountArgs are delete_my_account's arguments.
type DeleteMyAccountArgs struct {
	ConfirmEmail string `json:"confirm_email" jsonschema:"The account's email, as get_my_account shows it, to confirm the buyer asked to delete this account."`
}

// RefineSchema bounds the email.
func (DeleteMyAccountArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["confirm_email"].MinLength, s.Properties["confirm_email"].MaxLength = jsonschema.Ptr(3), jsonschema.Ptr(orders.MaxEmailLen)
}

// DeletedResult is delete_my_account's and delete_account's structured content.
type DeletedResult struct {
	Deleted Deleted `json:"deleted"`
}

const needsAccount = " Needs the buyer's connected account (scope %s); without it the answer is an error, code unauthorized: " +
	"ask the buyer to connect their account with the shop."

// Tools returns the linked buyer's tools (CONTRACT.md §10).
func (d *Data) Tools() []shop.Tool {
	acct, ord := fmt.Sprintf(needsAccount, ScopeAccount), fmt.Sprintf(needsAccount, ScopeOrders)
	return append([]shop.Tool{
		shop.NewTool(shop.Tool{Name: "get_my_account", Auth: authFor("get_my_account"), Title: "Get my account", ReadOnly: true, Idempotent: true,
			Description: "The buyer's account with the shop: email, linked_since, saved shipping addresses and the default one, " +
				"which new checkout sessions start with (as they start with the account's email)." + acct,
		}, d.getMyAccount),
		shop.NewTool(shop.Tool{Name: "add_my_address", Auth: authFor("add_my_address"), Title: "Save an address",
			Description: fmt.Sprintf("Save a shipping address to the buyer's account, checked as a checkout session checks it; "+
				"make_default: true makes new checkout sessions start with it. An account keeps at most %d. Answers the account.", MaxAddresses) + acct +
				" Errors: missing or invalid $.address.* (the field to fix), invalid $.address (too many).",
		}, d.addMyAddress),
		shop.NewTool(shop.Tool{Name: "remove_my_address", Auth: authFor("remove_my_address"), Title: "Remove a saved address", Destructive: true, Idempotent: true,
			Description: "Remove one of the buyer's saved addresses (address_id from get_my_account); when it was the default, the most recently " +
				"saved of the others becomes the default. Answers the account." + acct + " Errors: not_found $.address_id.",
		}, d.removeMyAddress),
		shop.NewTool(shop.Tool{Name: "set_my_default_address", Auth: authFor("set_my_default_address"), Title: "Choose my default address", Idempotent: true,
			Description: "Make one of the buyer's saved addresses (address_id from get_my_account) the one new checkout sessions start with. " +
				"Answers the account." + acct + " Errors: not_found $.address_id.",
		}, d.setMyDefault),
		shop.NewTool(shop.Tool{Name: "list_my_orders", Auth: authFor("list_my_orders"), Title: "List my orders", ReadOnly: true, Idempotent: true,
			Description: "The buyer's own orders, newest first, each whole: status, lines, totals in minor units, the receipt link " +
				"(permalink_url), tracking per parcel once shipped and returns[] (id, status, refund_amount; request_return starts one); orders placed as a guest with the account's email are included. " +
				"For the next page pass next_cursor as cursor." + ord + " Errors: invalid $.limit, invalid $.cursor.",
		}, d.listMyOrders),
		shop.NewTool(shop.Tool{Name: "get_my_order", Auth: authFor("get_my_order"), Title: "Get my order", ReadOnly: true, Idempotent: true,
			Description: "One of the buyer's own orders (order_id from list_my_orders): status, lines, totals, the receipt link, tracking " +
				"per parcel once shipped and returns[] (id, status, refund_amount; request_return starts one)." + ord + " Errors: missing or invalid $.order_id, not_found.",
		}, d.getMyOrder),
		shop.NewTool(shop.Tool{Name: "delete_my_account", Auth: authFor("delete_my_account"), Title: "Delete my account", Destructive: true,
			Description: "Delete the buyer's account with the shop, only when the buyer asked for it: its saved addresses and saved cards are removed " +
				"(the cards at the payment provider too) and every connection of it (tokens) ends; orders stay with the shop, under the email they were placed with, for its books. " +
				"Send confirm_email, the account's email. The shop's audit log records the deletion (without the email). The buyer may connect again later, which makes a new account." + acct +
				" Errors: missing or invalid $.confirm_email (not the account's email); unavailable when the payment provider could not remove the saved cards just now (nothing was deleted: try again).",
		}, d.deleteMyAccount),
	}, d.cardTools()...)
}

func (d *Data) getMyAccount(ctx context.Context, _ struct{}) (AccountResult, string, error) {
	b, err := linked(ctx, ScopeAccount)
	if err != nil {
		return AccountResult{}, "", err
	}
	return d.accountResult(ctx, b.AccountID, "")
}

func (d *Data) addMyAddress(ctx context.Context, args AddAddressArgs) (AccountResult, string, error) {
	b, err := linked(ctx, ScopeAccount)
	if err != nil {
		return AccountResult{}, "", err
	}
	s, err := d.AddAddress(ctx, b.AccountID, args.Address, args.MakeDefault)
	if err != nil {
		return AccountResult{}, "", err
	}
	return d.accountResult(ctx, b.AccountID, "Saved the address "+s.ID+".")
}

func (d *Data) removeMyAddress(ctx context.Context, args AddressIDArgs) (AccountResult, string, error) {
	b, err := linked(ctx, ScopeAccount)
	if err != nil {
		return AccountResult{}, "", err
	}
	if err := d.RemoveAddress(ctx, b.AccountID, strings.TrimSpace(args.AddressID)); err != nil {
		return AccountResult{}, "", err
	}
	return d.accountResult(ctx, b.AccountID, "Removed the address.")
}

func (d *Data) setMyDefault(ctx context.Context, args AddressIDArgs) (AccountResult, string, error) {
	b, err := linked(ctx, ScopeAccount)
	if err != nil {
		return AccountResult{}, "", err
	}
	if err := d.SetDefault(ctx, b.AccountID, strings.TrimSpace(args.AddressID)); err != nil {
		return AccountResult{}, "", err
	}
	return d.accountResult(ctx, b.AccountID, "New checkout sessions now start with this address.")
}

// accountResult answers the account, its text led by done.
func (d *Data) accountResult(ctx context.Context, accountID, done string) (AccountResult, string, error) {
	p, err := d.Profile(ctx, accountID)
	if err != nil {
		return AccountResult{}, "", err
	}
	var sb strings.Builder
	if done != "" {
		sb.WriteString(done + " ")
	}
	fmt.Fprintf(&sb, "Account %s, linked since %s, with %d saved address(es).", p.Email, p.LinkedSince.Format("2 January 2006"), len(p.Addresses))
	for _, s := range p.Addresses {
		a := s.Address
		fmt.Fprintf(&sb, "\n%s: %s, %s, %s %s, %s", s.ID, a.Name, a.LineOne, a.City, a.PostalCode, a.Country)
		if s.Default {
			sb.WriteString(" (default)")
		}
	}
	return AccountResult{Account: *p}, sb.String(), nil
}

func (d *Data) listMyOrders(ctx context.Context, args MyOrdersArgs) (MyOrders, string, error) {
	b, err := linked(ctx, ScopeOrders)
	if err != nil {
		return MyOrders{}, "", err
	}
	list, next, err := d.orders.ForBuyer(ctx, b.AccountID, b.AccountEmail, args.Limit, args.Cursor)
	if err != nil {
		return MyOrders{}, "", err
	}
	if len(list) == 0 {
		return MyOrders{Orders: list}, "The buyer has no orders with the shop yet.", nil
	}
	texts := make([]string, len(list))
	for i := range list {
		texts[i] = orders.Summary(&list[i], shop.LocaleFrom(ctx))
	}
	if next != "" {
		texts = append(texts, "More: pass next_cursor as cursor.")
	}
	return MyOrders{Orders: list, NextCursor: next}, strings.Join(texts, "\n"), nil
}

func (d *Data) getMyOrder(ctx context.Context, args MyOrderArgs) (MyOrder, string, error) {
	b, err := linked(ctx, ScopeOrders)
	if err != nil {
		return MyOrder{}, "", err
	}
	ord, err := d.orders.ForBuyerByID(ctx, b.AccountID, b.AccountEmail, args.OrderID)
	if err != nil {
		return MyOrder{}, "", err
	}
	return MyOrder{Order: *ord}, orders.Summary(ord, shop.LocaleFrom(ctx)), nil
}

func (d *Data) deleteMyAccount(ctx context.Context, args DeleteMyAccountArgs) (DeletedResult, string, error) {
	b, err := linked(ctx, ScopeAccount)
	if err != nil {
		return DeletedResult{}, "", err
	}
	if strings.TrimSpace(args.ConfirmEmail) == "" {
		return DeletedResult{}, "", shop.Errorf(shop.Missing, "$.confirm_email", "send the account's email, as get_my_account shows it, once the buyer confirmed they want the account deleted")
	}
	a, err := Get(ctx, d.db, b.AccountID)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return DeletedResult{}, "", errGone
		}
		return DeletedResult{}, "", err
	}
	if NormalizeEmail(args.ConfirmEmail) != a.Email {
		return DeletedResult{}, "", shop.Errorf(shop.Invalid, "$.confirm_email", "this is not the account's email; get_my_account shows it")
	}
	out, err := d.Delete(ctx, a.ID, func(tx *gorm.DB, out *Deleted) error {
		// The staff's log records that the buyer deleted their account,
		// without the email the buyer asked the shop to forget.
		return d.orders.Audit(ctx, tx, orders.Event{Actor: "buyer", Action: "delete_my_account",
			After: map[string]any{"account_id": out.AccountID, "addresses_removed": out.Addresses, "orders_kept": out.OrdersKept}})
	})
	if err != nil {
		return DeletedResult{}, "", err
	}
	return DeletedResult{Deleted: *out}, fmt.Sprintf("Deleted the account %s: %d saved address(es) removed, its connections ended; "+
		"its %d order(s) stay with the shop under their email.", out.Email, out.Addresses, out.OrdersKept), nil
}

// AdminDeleteArgs are delete_account's arguments.
type AdminDeleteArgs struct {
	AccountID string `json:"account_id" jsonschema:"The account's id, \"acct_…\", as get_order or list_orders shows it."`
	Email     string `json:"email" jsonschema:"The account's email, to confirm which account goes."`
	Reason    string `json:"reason" jsonschema:"Why, for the audit log (a buyer's request, …)."`
}

// RefineSchema bounds the arguments.
func (AdminDeleteArgs) RefineSchema(s *jsonschema.Schema) {
	p := s.Properties
	p["account_id"].MinLength, p["account_id"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(64)
	p["email"].MinLength, p["email"].MaxLength = jsonschema.Ptr(3), jsonschema.Ptr(orders.MaxEmailLen)
	p["reason"].MinLength, p["reason"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxReasonLen)
}

const maxReasonLen = 500

// AdminTools returns the staff's account tool delete_account (role owner).
func (d *Data) AdminTools() []shop.Tool {
	return []shop.Tool{shop.NewTool(shop.Tool{Name: "delete_account", Title: "Delete a buyer account", Destructive: true,
		Description: "Delete a buyer's linked account (role owner), as the buyer may with delete_my_account: its saved addresses and saved cards are " +
			"removed (the cards at the payment provider too) and its connections (tokens) end; its orders stay, under their email, no longer tied to the account. " +
			"Send the account_id, its email to confirm, and the reason; recorded in the audit log. " +
			"Errors: forbidden, missing or invalid (account_id, email: not the account's, reason), not_found, unavailable (the payment provider could not remove the saved cards just now: nothing was deleted; try again).",
	}, d.deleteAccount)}
}

func (d *Data) deleteAccount(ctx context.Context, args AdminDeleteArgs) (DeletedResult, string, error) {
	actor, ok := shop.ActorFrom(ctx)
	switch {
	case !ok:
		return DeletedResult{}, "", shop.Errorf(shop.Forbidden, "", "admin tools need an admin token (Authorization: Bearer …)")
	case !actor.Role.Allows(shop.Owner):
		return DeletedResult{}, "", shop.Errorf(shop.Forbidden, "", "this tool needs the owner role; your token has the %s role", actor.Role)
	case strings.TrimSpace(args.AccountID) == "":
		return DeletedResult{}, "", shop.Errorf(shop.Missing, "$.account_id", `send the account's id, "acct_…"`)
	case strings.TrimSpace(args.Reason) == "" || len(args.Reason) > maxReasonLen:
		return DeletedResult{}, "", shop.Errorf(shop.Missing, "$.reason", "send why, in at most %d characters", maxReasonLen)
	}
	id, email := strings.TrimSpace(args.AccountID), NormalizeEmail(args.Email)
	out, err := d.Delete(ctx, id, func(tx *gorm.DB, out *Deleted) error {
		if out.Email != email {
			return shop.Errorf(shop.Invalid, "$.email", "this is not the email of account %s; send the account's email to confirm", id)
		}
		return d.orders.Audit(ctx, tx, orders.Event{Actor: actor.String(), Action: "delete_account",
			Arguments: args, After: out})
	})
	if err != nil {
		return DeletedResult{}, "", err
	}
	return DeletedResult{Deleted: *out}, fmt.Sprintf("Deleted the account %s (%s): %d saved address(es) removed, its connections ended; "+
		"%d order(s) kept under their email.", out.AccountID, out.Email, out.Addresses, out.OrdersKept), nil
}
