package checkout

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"shop/orders"
)

// attemptRecordRow is what get_order reads of an attemptRow, with the
// card the provider reported: everything but the token and the key.
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

// attemptRecordColumns are attemptRecordRow's columns.
const attemptRecordColumns = "id, attempt, provider, mode, amount, currency, status, reference, decline_code, message, " +
	"card_brand, card_last4, customer_id, created_at, updated_at"

// PaymentAttempts reads the payment attempts of checkout session sessionID
// in db for the staff's get_order (it is orders.Options.PaymentAttempts,
// an orders.PaymentAttemptsFunc): at most limit of them whose attempt
// number is below before (0: no bound), newest first, and how many the
// session has in all. Checkout owns these rows (docs/architecture.md);
// their tokens and idempotency keys are never read.
func PaymentAttempts(ctx context.Context, db *gorm.DB, sessionID string, before, limit int) ([]orders.PaymentAttemptRecord, int64, error) {
	db = db.WithContext(ctx)
	var total int64
	if err := db.Model(&attemptRow{}).Where("session_id = ?", sessionID).Count(&total).Error; err != nil {
		return nil, 0, fmt.Errorf("count payment attempts of %s: %w", sessionID, err)
	}
	q := db.Model(&attemptRow{}).Select(attemptRecordColumns).Where("session_id = ?", sessionID)
	if before > 0 {
		q = q.Where("attempt < ?", before)
	}
	var rows []attemptRecordRow
	if err := q.Order("attempt DESC, id DESC").Limit(limit).Scan(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("read payment attempts of %s: %w", sessionID, err)
	}
	out := make([]orders.PaymentAttemptRecord, 0, len(rows))
	for _, r := range rows {
		out = append(out, orders.PaymentAttemptRecord{
			ID: r.ID, Attempt: r.Attempt, Status: r.Status, Amount: orders.PriceOf(r.Currency, r.Amount),
			Provider: r.Provider, Mode: r.Mode, Reference: r.Reference, DeclineCode: r.DeclineCode, Message: r.Message,
			CardBrand: r.CardBrand, CardLast4: r.CardLast4, SavedCard: r.CustomerID != "", CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		})
	}
	return out, total, nil
}

// PaymentAttempts is what orders reads payment attempts through.
var _ orders.PaymentAttemptsFunc = PaymentAttempts
