package catalog

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// The holds of a checkout session being paid are marked paying
// (stock_holds.paying): the buyer may be charged for them at any moment, so
// the stock on hand never goes below them by the staff's adjust_inventory
// or an import. A hold is marked when its session is claimed for payment
// (HoldRequest.Paying, in the claim's pricing); a session given back to the
// buyer holds its stock again (Hold), unmarked.

// PaymentHolds are the units of a variant held by sessions being paid, and
// how many sessions hold them.
type PaymentHolds struct {
	Units    int64
	Sessions int64
}

// payingOf is the condition of the holds being paid on a list of variants
// (its argument), written as the condition of the partial index
// stock_holds_paying (migration 00021): a bound value would miss it, and
// SQLite takes the index, over stock_holds_variant, for paying = TRUE.
const payingOf = "variant_id IN ? AND paying = TRUE"

// PayingHolds sums the holds being paid on the given variants, by variant
// id; a variant without any is not in the map. Holds being paid count
// whatever their expiry: they last until the payment settles. db is the
// transaction to read in, or nil.
func (c *Catalog) PayingHolds(ctx context.Context, db *gorm.DB, ids []string) (map[string]PaymentHolds, error) {
	var sums []struct {
		VariantID       string
		Units, Sessions int64
	}
	err := c.conn(ctx, db).Model(&holdRow{}).
		Select("variant_id, SUM(quantity) AS units, COUNT(DISTINCT holder) AS sessions").
		Where(payingOf, ids).Group("variant_id").Scan(&sums).Error
	if err != nil {
		return nil, fmt.Errorf("sum stock held for payment: %w", err)
	}
	out := make(map[string]PaymentHolds, len(sums))
	for _, s := range sums {
		out[s.VariantID] = PaymentHolds{Units: s.Units, Sessions: s.Sessions}
	}
	return out, nil
}
