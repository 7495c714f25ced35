package orders

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"shop/contract"
)

// refundsOf reads the refunds the provider made of each of the orders ids,
// oldest first, as their receipts show them: the amount and the day, never
// the provider's reference or the staff's reason.
func refundsOf(ctx context.Context, db *gorm.DB, ids []string) (map[string][]contract.Refund, error) {
	var rows []refundRow
	err := db.WithContext(ctx).Select("id, order_id, amount, created_at").
		Where("order_id IN ? AND status = ?", ids, refundSucceeded).Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read refunds: %w", err)
	}
	out := make(map[string][]contract.Refund, len(ids))
	for _, r := range rows {
		out[r.OrderID] = append(out[r.OrderID], contract.Refund{Amount: r.Amount, CreatedAt: r.CreatedAt.UTC()})
	}
	return out, nil
}

// withRefunds puts refunds on the receipt, with their sum.
func withRefunds(rec *contract.Receipt, refunds []contract.Refund) {
	rec.Refunds, rec.RefundedAmount = refunds, 0
	for _, r := range refunds {
		rec.RefundedAmount += r.Amount
	}
}
