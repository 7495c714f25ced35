package checkout

import (
	"context"
	"fmt"

	"shop"
	"shop/payments"
)

// Saved cards (issue 48): a linked buyer's sessions offer the cards they
// saved with the merchant (payment_provider.managed_payment_methods), and
// complete_checkout charges one named as payment_data.token off-session,
// through the buyer's customer, exactly once as any charge. Whose card it
// is is decided by the session's owner (its buyer key), not by who calls:
// the payment page pays without a bearer token.

// pageKey marks a context as the signed payment page's (OnPaymentPage).
type pageKey struct{}

// OnPaymentPage marks ctx as the shop's own payment page of a session,
// reached by its signed link: it acts for the session's buyer (shows and
// pays with their saved cards) without a bearer token. Only package server's
// payment page sets it, after checking the link's signature.
func OnPaymentPage(ctx context.Context) context.Context {
	return context.WithValue(ctx, pageKey{}, true)
}

// onPaymentPage reports whether ctx is the signed payment page's.
func onPaymentPage(ctx context.Context) bool {
	page, _ := ctx.Value(pageKey{}).(bool)
	return page
}

// actsFor is the account whose saved cards ctx may see and pay with on the
// session of row: the session's linked account when the caller is that
// account (its bearer token, when it allows payments) or the session's signed payment page; "" for
// anyone else, a guest calling about a linked buyer's session included.
func actsFor(ctx context.Context, row *sessionRow) string {
	account := accountOf(row.BuyerKey)
	if account == "" {
		return ""
	}
	if onPaymentPage(ctx) {
		return account
	}
	if b := shop.BuyerFrom(ctx); b.Linked() && b.AccountID == account && b.HasScope(shop.ScopePayments) {
		return account
	}
	return ""
}

// Wallet is what checkout needs of saved cards: payments.Wallet.
type Wallet interface {
	// Cards are the account's saved cards, newest first, at most ten.
	Cards(ctx context.Context, accountID string) ([]payments.SavedCard, error)
	// Card is the saved card token names, for a payment by accountID (""
	// for a guest): nil when token is no saved card, a *shop.Error for
	// $.payment_data.token when it is not this account's to pay with.
	Card(ctx context.Context, accountID, token string) (*payments.SavedCard, error)
	// Save saves the card token pays with for the account (the buyer
	// consented where they entered it).
	Save(ctx context.Context, accountID, token string) (*payments.SavedCard, error)
	// Customer is the account's customer at the provider, created when
	// first needed (with the buyer's email, when known): the one a hosted
	// page of the account is made for.
	Customer(ctx context.Context, accountID, email string) (string, error)
	// Record keeps a card the provider saved for the account on a hosted
	// page; false when the card's customer is not the account's.
	Record(ctx context.Context, accountID string, card payments.SavedCard) (bool, error)
}

// managedMethods are the saved cards a session of row's buyer offers, to
// that buyer only (actsFor); none for a guest's session.
func (c *Checkout) managedMethods(ctx context.Context, row *sessionRow) ([]ManagedPaymentMethod, error) {
	account := actsFor(ctx, row)
	if c.wallet == nil || account == "" {
		return nil, nil
	}
	cards, err := c.wallet.Cards(ctx, account)
	if err != nil {
		return nil, err
	}
	var out []ManagedPaymentMethod
	for _, card := range cards {
		out = append(out, ManagedPaymentMethod{Type: "card", ID: card.ID, DisplayName: card.DisplayName(),
			DisplayLast4: card.Last4, DisplayBrand: card.Brand})
	}
	return out, nil
}

// savedCustomer is the customer to charge token through when it is a saved
// card of the session's buyer and the caller acts for them (actsFor), ""
// when it is no saved card; any other saved card (another buyer's, a
// removed one, any named by a guest or for a guest's session, one saved
// with another provider) is refused for $.payment_data.token, before
// anything is claimed or charged.
func (c *Checkout) savedCustomer(ctx context.Context, row *sessionRow, token string) (string, error) {
	if c.wallet == nil {
		return "", nil
	}
	card, err := c.wallet.Card(ctx, actsFor(ctx, row), token)
	if err != nil || card == nil {
		return "", err
	}
	return card.Customer, nil
}

// SavesCards reports whether the shop keeps saved cards (Options.Wallet).
func (c *Checkout) SavesCards() bool { return c.wallet != nil }

// AccountOf is the linked account a session belongs to, "" for a guest's:
// the payment page offers to save the card only to an account.
func (c *Checkout) AccountOf(ctx context.Context, sessionID string) (string, error) {
	row, err := c.load(ctx, sessionID)
	if err != nil {
		return "", err
	}
	return accountOf(row.BuyerKey), nil
}

// SaveCard saves the card token pays with for the account whose session
// sessionID is, with the consent the buyer gave on the payment page, and
// answers the saved card's id, which pays instead of token. A guest's
// session saves nothing (invalid), and so does a shop without a wallet.
func (c *Checkout) SaveCard(ctx context.Context, sessionID, token string) (string, error) {
	if c.wallet == nil {
		return "", shop.Errorf(shop.Invalid, "$.save_card", "this shop does not save cards")
	}
	account, err := c.AccountOf(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if account == "" {
		return "", shop.Errorf(shop.Invalid, "$.save_card", "only a signed-in buyer saves cards")
	}
	card, err := c.wallet.Save(ctx, account, token)
	if err != nil {
		return "", fmt.Errorf("save card for session %s: %w", sessionID, err)
	}
	return card.ID, nil
}

// pageCustomer is the customer a hosted page of account is made for, so
// that the page offers to save the card (the buyer's consent is the page's
// own checkbox): "" for a guest, a shop without a wallet, or when the
// customer cannot be had now, in which case the page is made without one
// and the purchase goes on.
func (c *Checkout) pageCustomer(ctx context.Context, sessionID, account, email string) string {
	if c.wallet == nil || account == "" {
		return ""
	}
	cust, err := c.wallet.Customer(ctx, account, email)
	if err != nil {
		c.logger.WarnContext(ctx, "no customer for the payment page; it will not offer to save the card", "session", sessionID, "err", err)
		return ""
	}
	return cust
}

// recordPageCard keeps the card the buyer chose to save on a paid hosted
// page of sessionID (hp.SavedCard) as their account's, when it was saved
// to that account's customer; a guest's page, a page paid without saving,
// and a card of any other customer record nothing.
func (c *Checkout) recordPageCard(ctx context.Context, sessionID string, hp *payments.HostedPayment) error {
	if c.wallet == nil || hp.SavedCard == nil {
		return nil
	}
	account, err := c.AccountOf(ctx, sessionID)
	if err != nil || account == "" {
		return err
	}
	kept, err := c.wallet.Record(ctx, account, *hp.SavedCard)
	if err != nil {
		return fmt.Errorf("record the card saved on page %s: %w", hp.ID, err)
	}
	if !kept {
		c.logger.WarnContext(ctx, "a card saved on a payment page to another customer than the buyer's; not recorded",
			"session", sessionID, "checkout", hp.ID, "customer", hp.SavedCard.Customer)
	}
	return nil
}

// savedDeclineHint is what a requires_3ds answer adds for a saved card
// charged off-session: the buyer confirms on the payment page instead.
func savedDeclineHint(att *attemptRow, res *payments.Result) string {
	if att.CustomerID == "" || res == nil || res.Status != payments.RequiresAction {
		return ""
	}
	return " Your bank wants to confirm this payment with you: pay on the payment page (create_payment_link for this session), or with another card."
}
