package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database"
	"shop/orders"
	"shop/payments"
)

// Scopes a buyer's token may carry (docs/accounts.md), as the account tools
// need them.
const (
	// ScopeOrders allows reading the buyer's orders.
	ScopeOrders = shop.ScopeOrdersRead
	// ScopeAccount allows reading and changing the account: its addresses,
	// its deletion.
	ScopeAccount = shop.ScopeAccount
)

// AccountRequired is the code of an account tool's refusal when the call
// carries no linked account, or one whose token lacks the tool's scope: the
// buyer can connect (or reconnect) their account with the shop. It is the
// code package server answers such a call with, before the tool runs.
const AccountRequired = shop.Unauthorized

// Data is a linked buyer's own data: their account, saved addresses and
// orders, and the account's deletion, for the account tools and the staff.
type Data struct {
	db        *gorm.DB
	orders    *orders.Orders
	checkAddr func(a contract.Address, param string) (contract.Address, error)
	wallet    *payments.Wallet
	logger    *slog.Logger
	endOpen   func(ctx context.Context, tx *gorm.DB, accountID string) (int64, error)
}

// DataOptions configure Data.
type DataOptions struct {
	// CheckAddress checks and normalizes an address a buyer saves as a
	// checkout session would (checkout.Checkout.CheckAddress), its errors'
	// params under param. Required: an address that checkout would refuse
	// must not be saved.
	CheckAddress func(a contract.Address, param string) (contract.Address, error)
	// Wallet, when set, keeps the buyers' saved cards, which the tools
	// list_my_payment_methods and remove_my_payment_method manage, and
	// whose customer at the payment provider an account's deletion deletes.
	Wallet *payments.Wallet
	// Logger logs what the buyers are not told (a provider's failure);
	// slog.Default() when nil.
	Logger *slog.Logger
	// EndSessions, when set, cancels in tx the account's open checkout
	// sessions and releases the stock they hold
	// (checkout.Checkout.EndAccountSessions), answering how many: an
	// account's deletion runs it in its transaction, so that nothing stays
	// held in the name of an account that is gone.
	EndSessions func(ctx context.Context, tx *gorm.DB, accountID string) (int64, error)
}

// NewData returns the accounts' data kept in db; their orders are ords'.
func NewData(db *gorm.DB, ords *orders.Orders, opts DataOptions) *Data {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Data{db: db, orders: ords, checkAddr: opts.CheckAddress, wallet: opts.Wallet, logger: logger, endOpen: opts.EndSessions}
}

// errGone answers a call for an account deleted while its token lived.
var errGone = shop.Errorf(AccountRequired, "", "this account was deleted; connect your account again to make a new one")

// check checks an address with DataOptions.CheckAddress.
func (d *Data) check(a contract.Address, param string) (contract.Address, error) {
	if d.checkAddr == nil {
		return contract.Address{}, errors.New("accounts: no address check configured")
	}
	return d.checkAddr(a, param)
}

// linked returns the linked buyer of ctx when their token allows scope;
// otherwise an AccountRequired error saying what to do.
func linked(ctx context.Context, scope string) (shop.Buyer, error) {
	b := shop.BuyerFrom(ctx)
	switch {
	case !b.Linked():
		return b, shop.Errorf(AccountRequired, "",
			"this needs the buyer's account with the shop: ask the buyer to connect their account (sign in with their email and a one-time code), then call again")
	case !b.HasScope(scope):
		return b, shop.Errorf(AccountRequired, "",
			"the buyer's connection does not allow %q; ask the buyer to connect their account again and allow it, then call again", scope)
	}
	return b, nil
}

// Profile is a linked buyer's account as get_my_account shows it.
type Profile struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	// LinkedSince is when the account was made, at its first login.
	LinkedSince time.Time      `json:"linked_since"`
	Addresses   []SavedAddress `json:"addresses"`
	// DefaultAddressID is the address new checkout sessions start with,
	// absent when the account has none.
	DefaultAddressID string `json:"default_address_id,omitempty"`
}

// Profile returns the account and its addresses.
//
// Errors: AccountRequired when the account was deleted.
func (d *Data) Profile(ctx context.Context, accountID string) (*Profile, error) {
	a, err := Get(ctx, d.db, accountID)
	if errors.Is(err, ErrNotFound) {
		return nil, errGone
	}
	if err != nil {
		return nil, err
	}
	p := &Profile{ID: a.ID, Email: a.Email, LinkedSince: a.CreatedAt}
	if p.Addresses, err = d.Addresses(ctx, accountID); err != nil {
		return nil, err
	}
	for _, s := range p.Addresses {
		if s.Default {
			p.DefaultAddressID = s.ID
		}
	}
	return p, nil
}

// Deleted is what deleting an account did.
type Deleted struct {
	AccountID string `json:"account_id"`
	Email     string `json:"email"`
	// Addresses is how many saved addresses were removed with it.
	Addresses int64 `json:"addresses_removed"`
	// OrdersKept is how many orders the account placed: they stay, with
	// their email, for the merchant's books, no longer tied to an account.
	OrdersKept int64 `json:"orders_kept"`
}

// Delete deletes the account in one transaction: its row, and by their
// foreign keys (ON DELETE CASCADE) its saved addresses, its saved cards and
// its OAuth grants and tokens, so that no token of it works any more; its
// open checkout sessions are canceled and their stock released in the same
// transaction (DataOptions.EndSessions).
// Before that, with a wallet, the account's customer at the payment
// provider is deleted with the cards attached to it (payments.Wallet.Forget),
// so that the merchant can charge none of them; when the provider fails,
// nothing is deleted and the answer (unavailable) says to try again, and
// when the transaction fails after it, trying again deletes the rest. Its
// orders stay, with
// their email, and no longer name the account (orders.ForgetAccount). A
// first login with the same email later makes a new, empty account, which
// sees those orders again through the email its login proves. audit, when
// set, runs in the transaction (the staff's deletion records its event).
//
// Errors: not_found when there is no such account; unavailable when the
// payment provider did not delete the customer.
func (d *Data) Delete(ctx context.Context, accountID string, audit func(tx *gorm.DB, out *Deleted) error) (*Deleted, error) {
	out := &Deleted{AccountID: accountID}
	if d.wallet != nil {
		if err := d.wallet.Forget(ctx, accountID); err != nil {
			d.logger.ErrorContext(ctx, "account not deleted: the payment provider did not delete its customer", "account", accountID, "err", err)
			return nil, shop.Errorf(shop.Unavailable, "",
				"the account was not deleted: the payment provider did not delete its saved cards just now, and nothing was deleted; try again in a moment")
		}
	}
	err := database.Transact(ctx, d.db, func(tx *gorm.DB) error {
		var row accountRow
		err := tx.Clauses(database.Lock()).Where("id = ?", accountID).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return shop.Errorf(shop.NotFound, "$.account_id", "no account has this id")
		}
		if err != nil {
			return fmt.Errorf("read account: %w", err)
		}
		out.Email = row.Email
		// Counted and removed here rather than left to the cascade, so that
		// the answer says what went.
		res := tx.Where("account_id = ?", accountID).Delete(&addressRow{})
		if res.Error != nil {
			return fmt.Errorf("remove addresses: %w", res.Error)
		}
		out.Addresses = res.RowsAffected
		if out.OrdersKept, err = d.orders.ForgetAccount(ctx, tx, accountID); err != nil {
			return err
		}
		if d.endOpen != nil {
			if _, err := d.endOpen(ctx, tx, accountID); err != nil {
				return fmt.Errorf("end the account's checkout sessions: %w", err)
			}
		}
		if err := tx.Delete(&accountRow{}, "id = ?", accountID).Error; err != nil {
			return fmt.Errorf("delete account: %w", err)
		}
		if audit != nil {
			return audit(tx, out)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
