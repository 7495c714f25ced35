package orders

import (
	"context"
	"fmt"
	"time"

	"shop/database"
)

// Tally is what one currency's orders add up to since the shop opened.
type Tally struct {
	Currency string
	// Orders counts the orders placed, and Value sums their totals (minor units).
	Orders, Value int64
	// Refunds counts the refunds that went through, and Refunded sums them.
	Refunds, Refunded int64
}

// Tallies reads the orders and succeeded refunds, by currency, for the
// operator's metrics.
func (o *Orders) Tallies(ctx context.Context) ([]Tally, error) {
	var placed []struct {
		Currency string
		N, Value int64
	}
	db := o.db.WithContext(ctx)
	if err := db.Model(&orderRow{}).Select("currency, COUNT(*) AS n, COALESCE(SUM(total), 0) AS value").Group("currency").Order("currency").Scan(&placed).Error; err != nil {
		return nil, fmt.Errorf("tally orders: %w", err)
	}
	var refunded []struct {
		Currency string
		N, Value int64
	}
	err := db.Table("refunds").Joins("JOIN orders ON orders.id = refunds.order_id").Where("refunds.status = ?", refundSucceeded).
		Select("orders.currency AS currency, COUNT(*) AS n, COALESCE(SUM(refunds.amount), 0) AS value").Group("orders.currency").Scan(&refunded).Error
	if err != nil {
		return nil, fmt.Errorf("tally refunds: %w", err)
	}
	out := make([]Tally, len(placed))
	for i, p := range placed {
		out[i] = Tally{Currency: p.Currency, Orders: p.N, Value: p.Value}
		for _, r := range refunded {
			if r.Currency == p.Currency {
				out[i].Refunds, out[i].Refunded = r.N, r.Value
			}
		}
	}
	return out, nil
}

// PendingRefunds counts the refunds whose outcome is not known yet (the
// reconciler's to settle) and says when the oldest was recorded (zero: none).
func (o *Orders) PendingRefunds(ctx context.Context) (int64, time.Time, error) {
	n, oldest, err := database.CountOldest(ctx, o.db.Model(&refundRow{}).Where("status = ?", refundPending), "created_at")
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("pending refunds: %w", err)
	}
	return n, oldest, nil
}
