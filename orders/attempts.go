package orders

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
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

// PaymentAttemptsFunc reads the payment attempts of checkout session
// sessionID in db, for get_order: at most limit of them whose attempt
// number is below before (0: no bound), newest first (by attempt, then id,
// descending), and how many the session has in all. Checkout owns the
// table of payment attempts ("Tables stay home", docs/architecture.md),
// so orders takes the reader it exports through Options.PaymentAttempts.
// The records never carry an attempt's payment token or idempotency key.
type PaymentAttemptsFunc func(ctx context.Context, db *gorm.DB, sessionID string, before, limit int) (records []PaymentAttemptRecord, total int64, err error)

// errNoAttemptsReader is get_order's error when Options.PaymentAttempts
// was not set: a wiring mistake, logged and answered generically.
var errNoAttemptsReader = errors.New("orders: get_order needs Options.PaymentAttempts, which is not set")

// AttemptsPage is how many payment attempts the staff's get_order shows at
// once: the newest, the older ones a page at a time (attempts_cursor).
const AttemptsPage = 20

// attemptsCursor is where a page of an order's payment attempts ends: the
// attempt number the next page's are below, for the order it belongs to.
type attemptsCursor struct {
	V      int    `json:"v"`
	Order  string `json:"o"`
	Before int    `json:"b"`
}

const (
	attemptsCursorVersion = 1
	maxAttemptsCursorLen  = 200
)

// attemptsBefore decodes an attempts_cursor of order ("": the newest page,
// 0) into the attempt number its page is below.
func attemptsBefore(cursor, order string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	var c attemptsCursor
	if len(cursor) > maxAttemptsCursorLen || !shop.DecodeCursor(cursor, &c) || c.V != attemptsCursorVersion || c.Before < 1 {
		return 0, shop.Errorf(shop.Invalid, "$.attempts_cursor", "not a cursor of payment attempts; send the order's next_attempts_cursor, or none for the newest")
	}
	if c.Order != order {
		return 0, shop.Errorf(shop.Invalid, "$.attempts_cursor", "this cursor belongs to another order; send the next_attempts_cursor of this order's get_order, or none")
	}
	return c.Before, nil
}

// paymentAttempts reads a page of the payment attempts of a checkout
// session through Options.PaymentAttempts: the AttemptsPage newest below
// attempt number before (0: the newest), oldest first, with the total
// number of attempts and the cursor of the older ones ("" when there are
// none).
func (a *Admin) paymentAttempts(ctx context.Context, sessionID, order string, before int) ([]PaymentAttemptRecord, int64, string, error) {
	read := a.orders.paymentAttempts
	if read == nil {
		return nil, 0, "", errNoAttemptsReader
	}
	records, total, err := read(ctx, a.db, sessionID, before, AttemptsPage+1)
	if err != nil {
		return nil, 0, "", fmt.Errorf("payment attempts of %s: %w", sessionID, err)
	}
	var next string
	if len(records) > AttemptsPage {
		records = records[:AttemptsPage]
		next = shop.EncodeCursor(attemptsCursor{V: attemptsCursorVersion, Order: order, Before: records[len(records)-1].Attempt})
	}
	slices.Reverse(records)
	return records, total, next, nil
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
