package payments

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/database"
)

// MaxSavedCards is how many of an account's saved cards a session offers
// (the newest).
const MaxSavedCards = 10

// SavedCard is a card a linked account saved with the merchant's payment
// provider: a PaymentMethod attached to the account's Customer.
type SavedCard struct {
	// ID is the PaymentMethod's id (pm_…, pm_sandbox_… in the sandbox).
	ID string
	// Provider is the provider that keeps it ("stripe", "sandbox").
	Provider string
	// Customer is the provider's customer it is attached to (cus_…).
	Customer string
	// Brand is Stripe's name of the card's brand (visa, mastercard, …) and
	// Last4 the last four digits of its number.
	Brand, Last4      string
	ExpMonth, ExpYear int
	CreatedAt         time.Time
}

// DisplayName is the card as a buyer recognizes it: "Visa •••• 4242,
// expires 12/2034".
func (c SavedCard) DisplayName() string {
	return fmt.Sprintf("%s •••• %s, expires %02d/%d", brandName(c.Brand), c.Last4, c.ExpMonth, c.ExpYear)
}

func brandName(b string) string {
	switch b {
	case "amex":
		return "American Express"
	case "diners":
		return "Diners Club"
	case "jcb", "eftpos_au":
		return strings.ToUpper(b)
	case "unionpay":
		return "UnionPay"
	case "":
		return "Card"
	}
	return strings.ToUpper(b[:1]) + b[1:]
}

// Vault is a provider that keeps customers and their cards: [Stripe] and
// [Sandbox].
type Vault interface {
	Name() string
	newCustomer(ctx context.Context, accountID, email string) (string, error)
	attach(ctx context.Context, customer, token string) (*SavedCard, error)
	detach(ctx context.Context, id string) error
	// deleteCustomer deletes a customer and detaches its payment methods;
	// one already gone counts as deleted.
	deleteCustomer(ctx context.Context, id string) error
}

// Wallet keeps linked accounts' saved cards: the provider's customer of each
// account (table payment_customers, created when first needed) and a mirror
// of the cards attached to it (saved_cards), which sessions list and
// completion checks ownership against without asking the provider.
type Wallet struct {
	db    *gorm.DB
	vault Vault
}

// NewWallet returns the wallet over a migrated database and the provider.
func NewWallet(db *gorm.DB, v Vault) *Wallet { return &Wallet{db: db, vault: v} }

type savedCardRow struct {
	ID        string `gorm:"primaryKey"`
	AccountID string
	Provider  string
	Customer  string `gorm:"column:customer_id"`
	Brand     string
	Last4     string `gorm:"column:last4"`
	ExpMonth  int
	ExpYear   int
	CreatedAt time.Time
	RemovedAt *time.Time
}

func (savedCardRow) TableName() string { return "saved_cards" }

func (r *savedCardRow) card() SavedCard {
	return SavedCard{ID: r.ID, Provider: r.Provider, Customer: r.Customer, Brand: r.Brand, Last4: r.Last4,
		ExpMonth: r.ExpMonth, ExpYear: r.ExpYear, CreatedAt: r.CreatedAt}
}

// Customer is the account's customer at the provider, created when first
// needed: the one its cards are saved to, and the one a hosted payment page
// of the account is made for. Racing callers may each create one at the
// provider (Stripe's idempotency key makes that one customer within a
// day); one row wins. email, when known, is the buyer's email given to a
// customer created now (Stripe Checkout then shows it rather than asking).
func (w *Wallet) Customer(ctx context.Context, accountID, email string) (string, error) {
	if accountID == "" {
		return "", errors.New("payments: a guest has no customer")
	}
	id, err := w.storedCustomer(ctx, accountID)
	if err == nil {
		return id, nil
	}
	if !isNoRows(err) {
		return "", fmt.Errorf("customer of account %s: %w", accountID, err)
	}
	id, err = w.vault.newCustomer(ctx, accountID, email)
	if err != nil {
		return "", err
	}
	_, err = database.InsertSuffix(w.db.WithContext(ctx), "payment_customers", []string{"account_id", "provider", "customer_id", "created_at"},
		" ON CONFLICT DO NOTHING", []any{accountID, w.vault.Name(), id, time.Now().UTC()})
	if err != nil {
		return "", fmt.Errorf("keep customer of account %s: %w", accountID, err)
	}
	if id, err = w.storedCustomer(ctx, accountID); err != nil {
		return "", fmt.Errorf("customer of account %s: %w", accountID, err)
	}
	return id, nil
}

// storedCustomer is the account's customer the shop keeps for the current
// provider; sql.ErrNoRows when it has none yet.
func (w *Wallet) storedCustomer(ctx context.Context, accountID string) (string, error) {
	var id string
	err := database.QueryRow(w.db.WithContext(ctx), "SELECT customer_id FROM payment_customers WHERE account_id = ? AND provider = ?",
		accountID, w.vault.Name()).Scan(&id)
	return id, err
}

// Save attaches the card token pays with to the account's customer, with
// the buyer's consent given where they entered it: a Stripe payment method
// (pm_…). A shared payment token (spt_…) is never saved: it is granted for
// one purchase by the host's payment sheet, not given to the merchant to
// keep. Errors for the token are *shop.Error for $.payment_data.token.
func (w *Wallet) Save(ctx context.Context, accountID, token string) (*SavedCard, error) {
	if accountID == "" {
		return nil, shop.Errorf(shop.Invalid, "$.payment_data.token", "only a linked account saves cards: sign in first")
	}
	kind, err := tokenKind(token)
	if err != nil {
		return nil, err
	}
	if kind == kindSPT {
		return nil, shop.Errorf(shop.Invalid, "$.payment_data.token", "a payment sheet's token (spt_…) pays for one purchase and is never saved")
	}
	cust, err := w.Customer(ctx, accountID, "")
	if err != nil {
		return nil, err
	}
	c, err := w.vault.attach(ctx, cust, token)
	if err != nil {
		return nil, err
	}
	c.Provider, c.Customer = w.vault.Name(), cust
	c.CreatedAt = time.Now().UTC() // when saved, for the newest first
	row := savedCardRow{ID: c.ID, AccountID: accountID, Provider: c.Provider, Customer: cust, Brand: c.Brand, Last4: c.Last4,
		ExpMonth: c.ExpMonth, ExpYear: c.ExpYear, CreatedAt: c.CreatedAt.UTC()}
	if err := w.db.WithContext(ctx).Create(&row).Error; err != nil {
		return nil, fmt.Errorf("keep saved card %s: %w", c.ID, err)
	}
	return c, nil
}

// Record keeps a card the provider already saved for the account — one the
// buyer chose to save on a hosted payment page, attached there to the
// account's customer — so that the account's sessions offer it. It records
// nothing, and answers false, when the card's customer is not the
// account's (no customer is created here: a page made for the account had
// one). Recording the same card again changes nothing (a replayed webhook;
// a card removed since stays removed).
func (w *Wallet) Record(ctx context.Context, accountID string, c SavedCard) (bool, error) {
	if accountID == "" || c.ID == "" || c.Customer == "" {
		return false, nil
	}
	cust, err := w.storedCustomer(ctx, accountID)
	switch {
	case isNoRows(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("customer of account %s: %w", accountID, err)
	case cust != c.Customer:
		return false, nil
	}
	_, err = database.InsertSuffix(w.db.WithContext(ctx), "saved_cards",
		[]string{"id", "account_id", "provider", "customer_id", "brand", "last4", "exp_month", "exp_year", "created_at"},
		" ON CONFLICT DO NOTHING", []any{c.ID, accountID, w.vault.Name(), cust, c.Brand, c.Last4, c.ExpMonth, c.ExpYear, time.Now().UTC()})
	if err != nil {
		return false, fmt.Errorf("keep saved card %s: %w", c.ID, err)
	}
	return true, nil
}

// Cards are the account's saved cards with the current provider, newest
// first, at most MaxSavedCards.
func (w *Wallet) Cards(ctx context.Context, accountID string) ([]SavedCard, error) {
	if accountID == "" {
		return nil, nil
	}
	var rows []savedCardRow
	err := w.db.WithContext(ctx).Where("account_id = ? AND provider = ? AND removed_at IS NULL", accountID, w.vault.Name()).
		Order("created_at DESC, id DESC").Limit(MaxSavedCards).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("saved cards of account %s: %w", accountID, err)
	}
	out := make([]SavedCard, len(rows))
	for i := range rows {
		out[i] = rows[i].card()
	}
	return out, nil
}

// Card is the saved card token names when it names one the shop knows of,
// for a payment by accountID ("" for a guest): the card when it is that
// account's, saved with the current provider and not removed; nil when
// token is no saved card (a payment method entered now, a sheet's token).
// Any other saved card is refused with a *shop.Error for
// $.payment_data.token, and so is a sandbox saved card the shop has no
// record of.
func (w *Wallet) Card(ctx context.Context, accountID, token string) (*SavedCard, error) {
	if !IsSavedCardID(token) {
		return nil, nil // no query: the token cannot name a saved card
	}
	var row savedCardRow
	err := w.db.WithContext(ctx).Where("id = ?", token).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		if strings.HasPrefix(token, sandboxMethodPrefix) {
			return nil, notYours()
		}
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("saved card %s: %w", token, err)
	case accountID == "" || row.AccountID != accountID:
		return nil, notYours()
	case row.Provider != w.vault.Name():
		return nil, shop.Errorf(shop.Invalid, "$.payment_data.token",
			"this card was saved with another payment provider (%s) than the shop takes payments with now (%s): pay with another card", row.Provider, w.vault.Name())
	case row.RemovedAt != nil:
		return nil, shop.Errorf(shop.Invalid, "$.payment_data.token", "this saved card was removed: pay with another card")
	}
	c := row.card()
	return &c, nil
}

// IsSavedCardID reports whether token can be a saved card's id: a
// PaymentMethod attached to a customer (pm_…, pm_sandbox_… in the sandbox).
// Stripe's test payment methods (pm_card_…) attach as a new pm_… and are
// never one, and neither is a sheet's token (spt_…, tok_…).
func IsSavedCardID(token string) bool {
	return strings.HasPrefix(token, "pm_") && !strings.HasPrefix(token, "pm_card_")
}

func notYours() error {
	return shop.Errorf(shop.Invalid, "$.payment_data.token",
		"this is not one of your saved cards: pay with a card listed in the session's payment_provider.managed_payment_methods, or with a new one")
}

// Remove detaches one of the account's saved cards at the provider; it is
// gone from the account's next sessions. Another account's card, or one
// removed already, is not_found for $.payment_method_id.
func (w *Wallet) Remove(ctx context.Context, accountID, id string) error {
	var row savedCardRow
	err := w.db.WithContext(ctx).Where("id = ? AND account_id = ? AND removed_at IS NULL", id, accountID).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return shop.Errorf(shop.NotFound, "$.payment_method_id", "you have no saved card %s: list_my_payment_methods lists yours", id)
	case err != nil:
		return fmt.Errorf("saved card %s: %w", id, err)
	}
	if row.Provider == w.vault.Name() {
		if err := w.vault.detach(ctx, id); err != nil {
			return err
		}
	}
	now := time.Now().UTC()
	if err := w.db.WithContext(ctx).Model(&savedCardRow{}).Where("id = ? AND removed_at IS NULL", id).Update("removed_at", now).Error; err != nil {
		return fmt.Errorf("remove saved card %s: %w", id, err)
	}
	return nil
}

// Forget deletes the account's customer at the current provider, which
// detaches every card saved to it there, so that the merchant can charge
// none of them any more; then the shop forgets that customer and marks the
// account's cards of the provider removed. Deleting an account calls it
// first: the account's rows go with it anyway. A customer already gone
// counts as deleted, so forgetting again is harmless. A customer of another
// provider (a shop moved from the sandbox to Stripe) cannot be reached and
// is left to the account's deletion.
func (w *Wallet) Forget(ctx context.Context, accountID string) error {
	cust, err := w.storedCustomer(ctx, accountID)
	switch {
	case isNoRows(err):
		return nil
	case err != nil:
		return fmt.Errorf("customer of account %s: %w", accountID, err)
	}
	if err := w.vault.deleteCustomer(ctx, cust); err != nil {
		return fmt.Errorf("delete customer of account %s: %w", accountID, err)
	}
	return database.Transact(ctx, w.db, func(tx *gorm.DB) error {
		err := tx.Model(&savedCardRow{}).Where("account_id = ? AND provider = ? AND removed_at IS NULL", accountID, w.vault.Name()).
			Update("removed_at", time.Now().UTC()).Error
		if err != nil {
			return fmt.Errorf("remove saved cards of account %s: %w", accountID, err)
		}
		_, err = database.Exec(tx, "DELETE FROM payment_customers WHERE account_id = ? AND provider = ? AND customer_id = ?", accountID, w.vault.Name(), cust)
		if err != nil {
			return fmt.Errorf("forget customer of account %s: %w", accountID, err)
		}
		return nil
	})
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
