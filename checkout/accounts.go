package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/database"
)

// A linked buyer's sessions (docs/accounts.md). Checkout does not import
// package accounts: it learns the buyer from shop.BuyerFrom, and the
// account's default address through Options.AccountAddress. A session
// belongs to whoever created it (sessionRow.BuyerKey, "account:<id>" for a
// linked buyer, see shop.Buyer.Key), so the limits of holdlimits.go count
// an account's sessions together whichever host or device made them, and
// the session's order records the account (accountOf).

// accountDefaults fills in, for a linked buyer, what req leaves out: the
// buyer's email (the account's, verified by its login), the shipping
// address (the account's default) and save_address (true when the account
// has no default address yet). What req gives is kept as given.
func (c *Checkout) accountDefaults(ctx context.Context, req Request) (Request, error) {
	b := shop.BuyerFrom(ctx)
	if !b.Linked() || !b.HasScope(shop.ScopeAccount) {
		return req, nil
	}
	if b.AccountEmail != "" {
		switch {
		case req.Buyer == nil:
			req.Buyer = &Buyer{Email: b.AccountEmail}
		case strings.TrimSpace(req.Buyer.Email) == "":
			buyer := *req.Buyer
			buyer.Email = b.AccountEmail
			req.Buyer = &buyer
		}
	}
	if c.account != nil && (req.Address == nil || req.SaveAddress == nil) {
		a, err := c.account(ctx, b.AccountID)
		if err != nil {
			return req, fmt.Errorf("default address of account %s: %w", b.AccountID, err)
		}
		if req.Address == nil {
			req.Address = a
		}
		if req.SaveAddress == nil {
			save := a == nil
			req.SaveAddress = &save
		}
	}
	return req, nil
}

// applySave merges req's save_address into st for the session of the
// buyer whose key is buyerKey: a linked buyer's only.
//
// Errors: invalid $.save_address from a guest.
func applySave(st *state, req Request, buyerKey string) error {
	if req.SaveAddress == nil {
		return nil
	}
	if accountOf(buyerKey) == "" {
		return shop.Errorf(shop.Invalid, "$.save_address", "only a buyer who connected their account can save an address; leave save_address out")
	}
	save := *req.SaveAddress
	st.changed = st.changed || st.SaveAddress == nil || *st.SaveAddress != save
	st.SaveAddress = &save
	return nil
}

// saveAddress keeps the address of a completed session in its linked
// buyer's account, in tx, when the session says so (Options.SaveAddress).
func (c *Checkout) saveAddress(ctx context.Context, tx *gorm.DB, row *sessionRow) error {
	account := accountOf(row.BuyerKey)
	if c.keepAddress == nil || account == "" || row.SaveAddress == nil || !*row.SaveAddress || row.Address == nil {
		return nil
	}
	if err := c.keepAddress(ctx, tx, account, *row.Address); err != nil {
		return fmt.Errorf("save the address of session %s: %w", row.ID, err)
	}
	return nil
}

// owned checks that the caller of ctx may act on the session of row
// (docs/security.md): a linked buyer's session belongs to that account, so
// only a call with that account's token (any scope) or the session's signed
// payment page (OnPaymentPage) may read, change, pay or cancel it; anyone
// else, a guest holding its id or another account, is told there is no
// such session, exactly as for an unknown id. A guest's session is its id's
// holder's, as ever (the widget and the agents need no more).
func owned(ctx context.Context, row *sessionRow) error {
	account := accountOf(row.BuyerKey)
	if account == "" || onPaymentPage(ctx) || shop.BuyerFrom(ctx).AccountID == account {
		return nil
	}
	return notFound(row.ID)
}

// trusted reports, in the transaction creating a session of b, whether
// its holds are counted by account alone (sessionRow.Trusted): b is a
// linked account that has a paid order. A fresh account costs one email
// the caller can read, so until it pays it holds what a guest holds
// (addrlimits.go). Guests cost no query.
func (c *Checkout) trusted(ctx context.Context, tx *gorm.DB, b shop.Buyer) (bool, error) {
	if !b.Linked() || c.orders == nil {
		return false, nil
	}
	return c.orders.AccountPaid(ctx, tx, b.AccountID)
}

// accountOf is the account id of a session's buyer key, "" for a guest's.
func accountOf(buyerKey string) string {
	if !shop.IsAccount(buyerKey) {
		return ""
	}
	return strings.TrimPrefix(buyerKey, accountPrefix)
}

// CheckAddress checks and normalizes an address as a session does, for the
// addresses a linked buyer saves (package accounts, through cmd/shop): it
// refuses what a session refuses outright (too long, not plain text) and
// what would keep a session from being ready for payment (a required field
// missing, a country the shop does not ship to, a postal code or state of
// the wrong shape). The error is the first problem, a *shop.Error whose
// param is under prefix ("$.address") instead of "$.fulfillment_address".
func (c *Checkout) CheckAddress(a Address, prefix string) (Address, error) {
	rename := func(err error) error {
		var e *shop.Error
		if errors.As(err, &e) {
			r := *e
			r.Param = prefix + strings.TrimPrefix(e.Param, "$.fulfillment_address")
			return &r
		}
		return err
	}
	if err := checkAddressBounds(&a); err != nil {
		return Address{}, rename(err)
	}
	normalizeAddress(&a)
	if msgs := addressProblems(c.policy, &a); len(msgs) > 0 {
		m := msgs[0]
		return Address{}, rename(shop.Errorf(shop.Code(m.Code), m.Param, "%s", m.Content))
	}
	return a, nil
}

// EndAccountSessions cancels, in tx, the open sessions (not ready or ready
// for payment) of the account accountID and releases the stock they hold,
// for the account's deletion (accounts.DataOptions.EndSessions, wired by
// cmd/shop), so that nothing stays held in its name; their buyer and
// address are cleared with them. A session being paid is left to its
// payment, whose order names no account once the account is gone. It
// answers how many sessions it canceled.
//
// The buyer's lock comes first, as in every change of the buyer's holds
// (holdlimits.go), then the sessions' rows (a concurrent change of one
// then loses its race on the version and finds it canceled), then their
// holds.
func (c *Checkout) EndAccountSessions(ctx context.Context, tx *gorm.DB, accountID string) (int64, error) {
	tx = tx.WithContext(ctx)
	key := accountPrefix + accountID
	if err := database.LockKey(tx, catalog.BuyerLock(key)); err != nil {
		return 0, fmt.Errorf("lock buyer: %w", err)
	}
	now := c.now().UTC()
	// An open session is within its lifetime: a day's margin bounds the
	// sessions read (checkout_sessions_buyer_created).
	since := now.Add(-c.policy.SessionLifetime() - 24*time.Hour)
	open := statusIn(NotReady, Ready)
	var found []struct {
		ID     string
		Status Status
	}
	err := tx.Raw("SELECT id, status FROM checkout_sessions WHERE buyer_key = ? AND created_at > ? AND "+open+database.ForUpdate(tx), key, since).Scan(&found).Error
	if err != nil {
		return 0, fmt.Errorf("open sessions of account %s: %w", accountID, err)
	}
	if len(found) == 0 {
		return 0, nil
	}
	ids, was := make([]string, len(found)), map[Status]int64{}
	for i, f := range found {
		ids[i] = f.ID
		was[f.Status]++
	}
	args := database.Strings([]any{Canceled, now}, ids)
	n, err := database.Exec(tx, "UPDATE checkout_sessions SET status = ?, version = version + 1, updated_at = ?, buyer = '', address = '', buyer_email = ''"+
		" WHERE id IN ("+database.In(len(ids))+") AND "+open, args...)
	if err != nil {
		return 0, fmt.Errorf("cancel sessions of account %s: %w", accountID, err)
	}
	for _, id := range ids {
		if err := c.catalog.Release(ctx, tx, id); err != nil {
			return 0, err
		}
	}
	if n != int64(len(ids)) {
		return 0, fmt.Errorf("cancel sessions of account %s: %d of %d changed under the lock", accountID, n, len(ids))
	}
	for from, k := range was {
		c.noteMove(tx, from, Canceled, k)
	}
	return n, nil
}

// accountPrefix begins the buyer key of a linked account's session
// (shop.Buyer.Key).
const accountPrefix = "account:"
