package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"shop"
)

// A linked buyer's sessions (CONTRACT.md §10). Checkout does not import
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

// accountOf is the account id of a session's buyer key, "" for a guest's.
func accountOf(buyerKey string) string {
	if !shop.IsAccount(buyerKey) {
		return ""
	}
	return strings.TrimPrefix(buyerKey, "account:")
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
