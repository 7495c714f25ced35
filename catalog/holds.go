package catalog

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"shop/database"
)

// Stock holds (docs/architecture.md, "Stock and holds"). A checkout session
// that is ready for payment holds units of the stock on hand until it
// expires; available stock is on hand minus the live holds. The catalog
// owns stock_holds: it reads the items and every sum the limits need in one
// statement (ItemsToHold), decides in Hold what may be held and who gives
// way, and takes the holds. Each hold records its buyer (HoldBuyer), so the
// limits are answered from stock_holds alone. Holds are taken under a lock
// on the variants' rows (PostgreSQL: SELECT … FOR UPDATE after the buyer's,
// address's and variants' advisory locks; SQLite: the write lock every
// transaction takes when it begins), so two buyers never hold the same unit.
//
// The holds of a session being paid are marked paying: the buyer may be
// charged for them at any moment, so the stock on hand never goes below
// them by the staff's adjust_inventory or an import. A session given back
// to its buyer holds its stock again, unmarked.

// holdRow is a row of stock_holds.
type holdRow struct {
	Holder    string `gorm:"primaryKey"`
	VariantID string `gorm:"primaryKey"`
	Quantity  int64
	ExpiresAt time.Time
}

func (holdRow) TableName() string { return "stock_holds" }

// holdColumns are the columns Hold writes.
var holdColumns = []string{"holder", "variant_id", "quantity", "expires_at", "paying", "buyer_key", "buyer_email", "buyer_address", "buyer_network", "trusted"}

// HoldLine asks to hold Quantity units of a variant.
type HoldLine struct {
	VariantID string
	Quantity  int64
}

// Shortfall is a line that cannot be held: only Available units are.
type Shortfall struct {
	VariantID string
	Requested int64
	Available int64
}

// HoldRequest asks for Holder's holds to become exactly Lines, live until
// Until, for Buyer.
type HoldRequest struct {
	Holder string
	Buyer  HoldBuyer
	Lines  []HoldLine
	Until  time.Time
	// Yield are holders whose live holds count as available to Holder, in
	// the order they give them up: where a line needs their units, the
	// first of them holding its variant lose all their holds, one after
	// another, until every line fits. (Checkout passes the same buyer's
	// other sessions: a buyer's own holds never block them.)
	Yield []string
	// Release are holders who lose all their holds whenever Holder's are
	// taken, and keep them when Holder falls short; their units count as
	// available too. (Checkout passes the buyer's sessions that give way
	// for the limits on what one buyer holds at once.)
	Release []string
	// Paying takes, or keeps, the holds as being paid: the claim of
	// Holder's session for payment, whose holds last until Until whatever
	// becomes of the session meanwhile.
	Paying bool
	// Seen is what ItemsToHold read for Holder in this transaction; nil,
	// Hold reads it.
	Seen *HoldView
}

// HoldResult is what Hold did.
type HoldResult struct {
	// Short lists the lines that cannot be held even with the units of
	// Yield and Release: then nothing is held for the holder, and nobody
	// else lost a hold.
	Short []Shortfall
	// Released are the holders of Release and Yield whose holds were
	// dropped for the holder's, Release first, then Yield in its order.
	Released []string
}

// Hold makes req.Holder's holds exactly req.Lines when every line is
// available, counting the units held by req.Yield and req.Release as
// available, and drops the holds of those of them that must give way (see
// HoldRequest). Otherwise it holds nothing for the holder, drops nobody
// else's holds and returns what falls short. Holds that are already
// req.Lines only move their expiry. It must run inside tx, the transaction
// that also records why the units are held and why the holders giving way
// lost theirs.
func (c *Catalog) Hold(ctx context.Context, tx *gorm.DB, req HoldRequest) (*HoldResult, error) {
	tx = tx.WithContext(ctx)
	ids := make([]string, len(req.Lines))
	for i, l := range req.Lines {
		ids[i] = l.VariantID
	}
	seen := req.Seen
	if seen == nil {
		var err error
		if seen, err = c.ItemsToHold(ctx, tx, []string{req.Holder}, req.Buyer, ids); err != nil {
			return nil, fmt.Errorf("hold stock: %w", err)
		}
	}
	giving := append(slices.Clone(req.Release), req.Yield...)
	byHolder, err := c.holdsOf(tx, giving, ids)
	if err != nil {
		return nil, err
	}
	onHand, held := make(map[string]int64, len(ids)), make(map[string]int64, len(ids))
	for _, id := range ids {
		onHand[id], held[id] = seen.Items[id].OnHand, seen.Others[id]
		for _, g := range giving {
			held[id] -= byHolder[g][id]
		}
	}
	res := &HoldResult{}
	for _, l := range req.Lines {
		if avail := max(0, onHand[l.VariantID]-held[l.VariantID]); l.Quantity > avail {
			res.Short = append(res.Short, Shortfall{VariantID: l.VariantID, Requested: l.Quantity, Available: avail})
		}
	}
	if len(res.Short) == 0 && len(giving) > 0 {
		res.Released = giveWay(req, onHand, held, byHolder)
	}
	return res, c.writeHolds(ctx, tx, req, seen, res)
}

// writeHolds writes what Hold decided: the holder's holds moved when they
// are the lines already, else dropped with those of the holders released
// and, unless a line fell short, taken anew.
func (c *Catalog) writeHolds(ctx context.Context, tx *gorm.DB, req HoldRequest, seen *HoldView, res *HoldResult) error {
	until := req.Until.UTC()
	if len(res.Short) == 0 && len(res.Released) == 0 && seen.holdsExactly(req.Lines) {
		_, err := database.Exec(tx, "UPDATE stock_holds SET expires_at = ?, paying = ?, buyer_email = ? WHERE holder = ?",
			until, req.Paying, req.Buyer.Email, req.Holder)
		if err != nil {
			return fmt.Errorf("hold stock: %w", err)
		}
		return nil
	}
	drop := res.Released
	if seen.MineRows > 0 {
		drop = append([]string{req.Holder}, drop...)
	}
	if len(drop) > 0 {
		if err := c.ReleaseHolders(ctx, tx, drop); err != nil {
			return err
		}
	}
	if len(res.Short) > 0 || len(req.Lines) == 0 {
		return nil
	}
	b := req.Buyer
	rows := make([][]any, len(req.Lines))
	for i, l := range req.Lines {
		rows[i] = []any{req.Holder, l.VariantID, l.Quantity, until, req.Paying, b.Key, b.Email, b.Address, b.Network, b.Trusted}
	}
	if _, err := database.Insert(tx, "stock_holds", holdColumns, rows...); err != nil {
		return fmt.Errorf("hold stock: %w", err)
	}
	return nil
}

// holdsExactly reports whether the holder's rows are live holds of lines,
// one row a line.
func (v *HoldView) holdsExactly(lines []HoldLine) bool {
	if v.MineRows != int64(len(lines)) || len(v.Mine) != len(lines) {
		return false
	}
	for _, l := range lines {
		if v.Mine[l.VariantID] != l.Quantity {
			return false
		}
	}
	return true
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

// Release drops holder's holds. db is the transaction to write in, or nil.
func (c *Catalog) Release(ctx context.Context, db *gorm.DB, holder string) error {
	return c.ReleaseHolders(ctx, db, []string{holder})
}

// ReleaseHolders drops the holds of the given holders. db is the
// transaction to write in, or nil.
func (c *Catalog) ReleaseHolders(ctx context.Context, db *gorm.DB, holders []string) error {
	if len(holders) == 0 {
		return nil
	}
	if _, err := database.Exec(c.conn(ctx, db), "DELETE FROM stock_holds WHERE holder IN ("+database.In(len(holders))+")",
		database.Strings(make([]any, 0, len(holders)), holders)...); err != nil {
		return fmt.Errorf("release stock holds: %w", err)
	}
	return nil
}

// ExtendHolds moves the expiry of holder's holds, in tx.
func (c *Catalog) ExtendHolds(ctx context.Context, tx *gorm.DB, holder string, until time.Time) error {
	if _, err := database.Exec(tx.WithContext(ctx), "UPDATE stock_holds SET expires_at = ? WHERE holder = ?", until.UTC(), holder); err != nil {
		return fmt.Errorf("extend stock holds: %w", err)
	}
	return nil
}

// ReleaseExpired drops every hold that has expired and returns how many.
func (c *Catalog) ReleaseExpired(ctx context.Context) (int64, error) {
	res := c.db.WithContext(ctx).Where("expires_at <= ?", c.now().UTC()).Delete(&holdRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("release expired holds: %w", res.Error)
	}
	return res.RowsAffected, nil
}

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
