package catalog

import (
	"context"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"shop/database"
)

// Holders who give way: a checkout session's holds may go to a newer session
// of the same buyer (HoldRequest.Yield and Release). The catalog knows
// nothing of buyers or sessions: the caller names the holders, and records
// why they lost their holds in the same transaction.

// HoldsOf returns the live holds of the given holders, by holder and then by
// variant; a holder without any is left out. db is the transaction to read
// in, or nil.
func (c *Catalog) HoldsOf(ctx context.Context, db *gorm.DB, holders []string) (map[string]map[string]int64, error) {
	return c.holdsOf(c.conn(ctx, db), holders, nil)
}

// holdsOf is HoldsOf, only on the given variants when ids is not nil.
func (c *Catalog) holdsOf(db *gorm.DB, holders, ids []string) (map[string]map[string]int64, error) {
	out := map[string]map[string]int64{}
	if len(holders) == 0 {
		return out, nil
	}
	q := db.Model(&holdRow{}).Where("holder IN ? AND expires_at > ?", holders, c.now().UTC())
	if ids != nil {
		q = q.Where("variant_id IN ?", ids)
	}
	var rows []holdRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read stock holds: %w", err)
	}
	for _, r := range rows {
		if out[r.Holder] == nil {
			out[r.Holder] = map[string]int64{}
		}
		out[r.Holder][r.VariantID] += r.Quantity
	}
	return out, nil
}

// giveWay chooses the holders who lose their holds so that every line of
// req fits: all of req.Release, then of req.Yield, in order, the first ones
// holding a variant of a line that does not fit yet. held sums the live
// holds of everyone else (they never give way); byHolder are the holds of
// those who may, on the lines' variants. The caller has checked that every
// line fits once all of them give way.
func giveWay(req HoldRequest, onHand, held map[string]int64, byHolder map[string]map[string]int64) []string {
	released := slices.Clone(req.Release)
	gone := func(h string) bool { return slices.Contains(released, h) }
	avail := func(variant string) int64 {
		n := onHand[variant] - held[variant]
		for _, y := range req.Yield {
			if !gone(y) {
				n -= byHolder[y][variant]
			}
		}
		return n
	}
	for _, l := range req.Lines {
		for _, y := range req.Yield {
			if l.Quantity <= avail(l.VariantID) {
				break
			}
			if !gone(y) && byHolder[y][l.VariantID] > 0 {
				released = append(released, y)
			}
		}
	}
	return released
}

// releaseAll drops the holds of the given holders, in tx.
func (c *Catalog) releaseAll(tx *gorm.DB, holders []string) error {
	if _, err := database.Exec(tx, "DELETE FROM stock_holds WHERE holder IN ("+database.In(len(holders))+")",
		database.Strings(make([]any, 0, len(holders)), holders)...); err != nil {
		return fmt.Errorf("release stock holds: %w", err)
	}
	return nil
}
