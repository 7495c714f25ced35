package orders

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop/money"
)

// PaymentAttemptRecord is one try to pay for an order's checkout session,
// as staff see it in get_order: declined, needing 3D Secure, failed,
// succeeded, orphaned, or still pending. It keeps what staff need to find
// the payment (the provider's reference and the card's brand and last
// four digits), never the payment token.
type PaymentAttemptRecord struct {
	ID      string      `json:"id"`
	Attempt int         `json:"attempt"`
	Status  string      `json:"status"`
	Amount  money.Price `json:"amount"`
	// Provider is stripe or sandbox; Mode is test or live.
	Provider string `json:"provider"`
	Mode     string `json:"mode"`
	// Reference is the provider's PaymentIntent id, pi_…, when it gave one.
	Reference   string `json:"reference"`
	DeclineCode string `json:"decline_code"`
	Message     string `json:"message"`
	// CardBrand is the card's brand as Stripe names it (visa, mastercard,
	// amex, …) and CardLast4 the last four digits of its number; both are
	// empty when the provider did not say.
	CardBrand string `json:"card_brand"`
	CardLast4 string `json:"card_last4"`
	// SavedCard is true when the buyer paid with a card they saved with
	// the shop (charged off-session through their customer).
	SavedCard bool      `json:"saved_card"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// attemptRecordRow is what get_order reads of a row of payment_attempts
// (a table checkout writes): everything but the token and the key.
type attemptRecordRow struct {
	ID          string
	Attempt     int
	Provider    string
	Mode        string
	Amount      int64
	Currency    string
	Status      string
	Reference   string
	DeclineCode string
	Message     string
	CardBrand   string
	CardLast4   string `gorm:"column:card_last4"`
	CustomerID  string `gorm:"column:customer_id"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// paymentAttempts reads the payment attempts of a checkout session, oldest
// first.
func paymentAttempts(ctx context.Context, db *gorm.DB, sessionID string) ([]PaymentAttemptRecord, error) {
	rows, err := sessionRows[attemptRecordRow](ctx, db, "payment_attempts",
		"id, attempt, provider, mode, amount, currency, status, reference, decline_code, message, card_brand, card_last4, customer_id, created_at, updated_at",
		"attempt, id", sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]PaymentAttemptRecord, 0, len(rows))
	for _, r := range rows {
		out = append(out, PaymentAttemptRecord{
			ID: r.ID, Attempt: r.Attempt, Status: r.Status, Amount: priceOf(r.Currency, r.Amount),
			Provider: r.Provider, Mode: r.Mode, Reference: r.Reference, DeclineCode: r.DeclineCode, Message: r.Message,
			CardBrand: r.CardBrand, CardLast4: r.CardLast4, SavedCard: r.CustomerID != "", CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		})
	}
	return out, nil
}

// sessionRows reads the columns of a checkout session's rows of table (one
// that checkout writes), in order.
func sessionRows[R any](ctx context.Context, db *gorm.DB, table, columns, order, sessionID string) ([]R, error) {
	var rows []R
	err := db.WithContext(ctx).Table(table).Select(columns).Where("session_id = ?", sessionID).Order(order).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read %s of %s: %w", table, sessionID, err)
	}
	return rows, nil
}

// attemptText is a payment attempt's line of get_order's text, such as
// "Payment attempt 1 declined (insufficient_funds): 25,99 € with visa •••• 9995 (stripe test pi_3…)."
func attemptText(a PaymentAttemptRecord) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Payment attempt %d %s", a.Attempt, strings.ReplaceAll(a.Status, "_", " "))
	if a.DeclineCode != "" {
		fmt.Fprintf(&sb, " (%s)", a.DeclineCode)
	}
	fmt.Fprintf(&sb, ": %s", a.Amount.Display)
	if card := cardText(a.CardBrand, a.CardLast4); card != "" {
		if a.SavedCard {
			card = "the buyer's saved card " + card
		}
		fmt.Fprintf(&sb, " with %s", card)
	}
	fmt.Fprintf(&sb, " (%s %s", a.Provider, a.Mode)
	if a.Reference != "" {
		fmt.Fprintf(&sb, " %s", a.Reference)
	}
	sb.WriteString(").")
	return sb.String()
}

// cardText is "visa •••• 4242", or what of it is known.
func cardText(brand, last4 string) string {
	switch {
	case brand != "" && last4 != "":
		return brand + " •••• " + last4
	case last4 != "":
		return "card •••• " + last4
	}
	return brand
}
