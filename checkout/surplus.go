package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop"
	"shop/database"
	"shop/orders"
	"shop/payments"
)

// Refunder returns money: payments.Stripe and payments.Sandbox satisfy it.
type Refunder interface {
	Refund(ctx context.Context, r payments.RefundRequest) (*payments.Refund, error)
}

// Why a payment is surplus, as surplus_payments.reason keeps it.
const (
	reasonPaidTwice  = "the session was already paid"
	reasonSessionEnd = "the session had ended"
	reasonGivenUp    = "the payment attempt had been given up"
	reasonMoved      = "prices or stock changed before the payment arrived"
	reasonAmount     = "the amount paid is not the session's total"
	reasonChanged    = "the session changed after the payment page was made"
)

// surplusRow is a row of surplus_payments: a payment no order takes, to be
// refunded in full. Its reference is unique, so a payment reported again
// (a replayed webhook, the success page and the webhook together) is kept,
// and refunded, once.
type surplusRow struct {
	ID              string `gorm:"primaryKey"`
	SessionID       string
	Provider        string
	Reference       string
	Amount          int64
	Currency        string
	Reason          string
	Status          surplusStatus
	RefundReference string
	Message         string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

func (surplusRow) TableName() string { return "surplus_payments" }

// recordSurplus keeps, in tx, a payment that no order takes, for
// refundSurplus to give back. A payment recorded before is left as it is.
func (c *Checkout) recordSurplus(ctx context.Context, tx *gorm.DB, sessionID, provider, reference string, amount int64, currency, reason string) error {
	now := database.Now(tx)
	row := &surplusRow{
		ID: shop.NewID("sp_"), SessionID: sessionID, Provider: provider,
		Reference: reference, Amount: amount, Currency: currency, Reason: reason, Status: surplusPending,
		CreatedAt: now, UpdatedAt: now,
	}
	res := tx.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "reference"}}, DoNothing: true}).Create(row)
	if res.Error != nil {
		return fmt.Errorf("record surplus payment %s: %w", reference, res.Error)
	}
	if res.RowsAffected == 0 {
		return nil
	}
	c.logger.WarnContext(ctx, "a payment no order takes; refunding it", "session", sessionID, "reference", reference, "amount", amount, "reason", reason)
	if c.orders == nil {
		return nil
	}
	// The audit log names the session's order, when it has one, so that
	// staff find the payment from the order as from the log.
	var orderID string
	if err := tx.WithContext(ctx).Raw("SELECT id FROM orders WHERE checkout_session_id = ?", sessionID).Scan(&orderID).Error; err != nil {
		return fmt.Errorf("record surplus payment %s: %w", reference, err)
	}
	return c.orders.Audit(ctx, tx, orders.Event{Actor: "checkout", Action: "payment.surplus", OrderID: orderID, SessionID: sessionID,
		Arguments: map[string]any{"surplus_id": row.ID, "provider": provider, "reference": reference, "amount": amount, "currency": currency, "reason": reason}})
}

// RefundSurplus refunds the surplus payments not refunded yet, of one
// session when sessionID is set, else the oldest hundred of all. It returns
// how many it refunded. A refund whose outcome is unknown stays pending and
// is tried again, with the same idempotency key, by the reconciler.
func (c *Checkout) RefundSurplus(ctx context.Context, sessionID string) (int, error) {
	refunder, ok := c.charger.(Refunder)
	if !ok {
		return 0, nil
	}
	q := c.db.WithContext(ctx).Where("status = ?", surplusPending)
	if sessionID != "" {
		q = q.Where("session_id = ?", sessionID)
	}
	var due []surplusRow
	if err := q.Order("created_at").Limit(100).Find(&due).Error; err != nil {
		return 0, fmt.Errorf("surplus payments to refund: %w", err)
	}
	done := 0
	var errs []error
	for _, s := range due {
		ref, err := refunder.Refund(ctx, payments.RefundRequest{
			Reference: s.Reference, Amount: s.Amount, IdempotencyKey: "shop_surplus_" + s.ID, Reason: "duplicate",
		})
		var known *shop.Error
		switch {
		case errors.As(err, &known):
			c.logger.ErrorContext(ctx, "the provider refused to refund a surplus payment; refund it by hand", "surplus", s.ID, "reference", s.Reference, "err", err)
			err = c.settleSurplus(ctx, s.ID, surplusFailed, "", known.Message)
		case err != nil:
			errs = append(errs, fmt.Errorf("refund surplus payment %s: %w", s.ID, err))
			continue
		default:
			err = c.settleSurplus(ctx, s.ID, surplusRefunded, ref.Reference, ref.Status)
			if err == nil {
				done++
				c.logger.InfoContext(ctx, "surplus payment refunded", "surplus", s.ID, "session", s.SessionID, "reference", s.Reference, "refund", ref.Reference, "amount", s.Amount)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return done, errors.Join(errs...)
}
