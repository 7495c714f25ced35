package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"

	"shop"
	"shop/database"
)

// Stock on hand is variants.stock: sold (Take), restocked and adjusted
// here; the holds on it are holds.go's.

// Item is a variant as checkout prices it.
type Item struct {
	VariantID string
	ProductID string
	// Name is the product's title with the variant's ("Enamel Camp Mug — Slate").
	Name string
	// Description is the start of the product's description, for checkout's lines.
	Description string
	Images      []string
	Price       int64
	// OnHand is the stock on hand; Available subtracts others' live holds.
	OnHand, Available int64
}

// Take sells lines: the stock on hand of each variant goes down by its
// quantity, or to zero when fewer units are on hand, and holder's holds are
// dropped, in tx, the transaction that records the sale. It returns, for
// each line, the units it could not take: 0 when the stock covered it, the
// whole quantity for a variant no longer in the catalog. A charged payment
// is an order whatever the stock says; the shortfall is for the staff to
// settle (restock or refund). Stock never goes below zero.
func (c *Catalog) Take(ctx context.Context, tx *gorm.DB, holder string, lines []HoldLine) ([]int64, error) {
	tx = tx.WithContext(ctx)
	order := make([]int, len(lines))
	ids := make([]string, len(lines))
	for i, l := range lines {
		order[i], ids[i] = i, l.VariantID
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(lines[a].VariantID, lines[b].VariantID) })
	onHand, err := lockStock(tx, ids)
	if err != nil {
		return nil, fmt.Errorf("take stock: %w", err)
	}
	short := make([]int64, len(lines))
	taken := map[string]int64{}
	var takenIDs []string // in id order
	var soldOut []string
	for _, i := range order {
		l := lines[i]
		take := min(max(0, onHand[l.VariantID]), l.Quantity)
		short[i] = l.Quantity - take
		if take == 0 {
			continue
		}
		if taken[l.VariantID] == 0 {
			takenIDs = append(takenIDs, l.VariantID)
		}
		taken[l.VariantID] += take
		if onHand[l.VariantID] -= take; onHand[l.VariantID] == 0 {
			soldOut = append(soldOut, l.VariantID)
		}
	}
	if err := takeStock(tx, takenIDs, taken, c.now().UTC()); err != nil {
		return nil, err
	}
	if err := refreshFactsOf(tx, soldOut); err != nil {
		return nil, fmt.Errorf("take stock: %w", err)
	}
	if err := c.Release(ctx, tx, holder); err != nil {
		return nil, err
	}
	return short, nil
}

// takeStock takes taken[id] units of each variant of ids, rows locked by
// the caller and their stock covering it, in one UPDATE (a CASE per id):
// one round trip whatever the lines.
func takeStock(tx *gorm.DB, ids []string, taken map[string]int64, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	var sql strings.Builder
	args := make([]any, 0, 3*len(ids)+2+len(ids))
	sql.WriteString("UPDATE variants SET stock = stock - CASE id")
	for _, id := range ids {
		sql.WriteString(" WHEN ? THEN CAST(? AS BIGINT)")
		args = append(args, id, taken[id])
	}
	sql.WriteString(" END, updated_at = ? WHERE id IN (" + database.In(len(ids)) + ") AND stock >= CASE id")
	args = database.Strings(append(args, now), ids)
	for _, id := range ids {
		sql.WriteString(" WHEN ? THEN CAST(? AS BIGINT)")
		args = append(args, id, taken[id])
	}
	sql.WriteString(" END")
	// database.Exec, not gorm's: building it from clauses cost a
	// fiftieth of a purchase's CPU.
	n, err := database.Exec(tx, sql.String(), args...)
	if err != nil {
		return fmt.Errorf("take stock: %w", err)
	}
	if n != int64(len(ids)) {
		return fmt.Errorf("take stock: %d of %d variants changed under their locks", int64(len(ids))-n, len(ids))
	}
	return nil
}

// conn is db (a caller's transaction) or the catalog's own handle, with ctx.
func (c *Catalog) conn(ctx context.Context, db *gorm.DB) *gorm.DB {
	if db == nil {
		db = c.db
	}
	return db.WithContext(ctx)
}

// Restock puts units back on hand, in tx (a canceled or refunded order's).
func (c *Catalog) Restock(ctx context.Context, tx *gorm.DB, lines []HoldLine) error {
	now := c.now().UTC()
	ids := make([]string, 0, len(lines))
	for _, l := range lines {
		res := tx.WithContext(ctx).Exec("UPDATE variants SET stock = stock + ?, updated_at = ? WHERE id = ?", l.Quantity, now, l.VariantID)
		if res.Error != nil {
			return fmt.Errorf("restock %s: %w", l.VariantID, res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("restock %s: the variant is no longer in the catalog", l.VariantID)
		}
		ids = append(ids, l.VariantID)
	}
	if err := refreshFactsOf(tx.WithContext(ctx), ids); err != nil {
		return fmt.Errorf("restock: %w", err)
	}
	return nil
}

// StockChange is a change of a variant's stock on hand: Set it to a number,
// or Add a (possibly negative) number to it.
type StockChange struct {
	Set *int64
	Add *int64
}

// StockAdjustment is a change of a variant's stock on hand: Before and
// After it, and the units held by sessions being paid (Paying), below which
// it may not go.
type StockAdjustment struct {
	Before, After int64
	Paying        PaymentHolds
}

// AdjustStock changes a variant's stock on hand in tx. The result must lie
// in 0…MaxStock, and a decrease may not take it below the units held by
// sessions being paid (they may be charged for them at any moment); on an
// error the caller rolls tx back. The change is a conditional update, so
// concurrent sales and adjustments never lose one another; the holds being
// paid are counted after it, once the update holds the variant's row (a
// claim for payment locks it too), so none is missed.
//
// Errors: not_found ($.variant_id), invalid ($.set, $.add), conflict.
func (c *Catalog) AdjustStock(ctx context.Context, tx *gorm.DB, variantID string, ch StockChange) (StockAdjustment, error) {
	tx = tx.WithContext(ctx)
	var v variantRow
	if err := tx.Select("id", "stock").Where("id = ? AND removed = ?", variantID, false).Take(&v).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return StockAdjustment{}, shop.Errorf(shop.NotFound, "$.variant_id", "no variant has id %q", variantID)
		}
		return StockAdjustment{}, fmt.Errorf("adjust stock of %s: %w", variantID, err)
	}
	adj := StockAdjustment{Before: v.Stock, After: v.Stock}
	switch {
	case ch.Set != nil:
		adj.After = *ch.Set
	case ch.Add != nil:
		adj.After = v.Stock + *ch.Add
	}
	param := "$.set"
	if ch.Set == nil {
		param = "$.add"
	}
	if adj.After < 0 || adj.After > MaxStock {
		return adj, shop.Errorf(shop.Invalid, param, "the stock would be %d; it must stay from 0 to %d (now %d)", adj.After, MaxStock, v.Stock)
	}
	res := tx.Exec("UPDATE variants SET stock = ?, updated_at = ? WHERE id = ? AND stock = ?", adj.After, c.now().UTC(), variantID, adj.Before)
	if res.Error != nil {
		return adj, fmt.Errorf("adjust stock of %s: %w", variantID, res.Error)
	}
	if res.RowsAffected == 0 {
		return adj, shop.Errorf(shop.Conflict, "$.variant_id", "the stock of %s changed while adjusting it; look at it again and retry", variantID)
	}
	if (adj.Before > 0) != (adj.After > 0) {
		if err := refreshFactsOf(tx, []string{variantID}); err != nil {
			return adj, fmt.Errorf("adjust stock of %s: %w", variantID, err)
		}
	}
	paying, err := c.PayingHolds(ctx, tx, []string{variantID})
	if err != nil {
		return adj, err
	}
	adj.Paying = paying[variantID]
	if adj.After < adj.Before && adj.After < adj.Paying.Units {
		return adj, shop.Errorf(shop.Invalid, param,
			"the stock would be %d, below the %d unit(s) held by %d checkout session(s) being paid (it is %d now); send a stock of at least %d, or lower it once those payments settle",
			adj.After, adj.Paying.Units, adj.Paying.Sessions, adj.Before, min(adj.Before, adj.Paying.Units))
	}
	return adj, nil
}

// lineDescription is the first sentence of a product's description, at
// most 200 characters, cut at a word: what a checkout line says of it. Each
// run of bytes that are not UTF-8 reads as one U+FFFD. Every line of every
// hold view says one, so a description single spaced where it matters is
// read only that far, and not split into words.
func lineDescription(d string) string {
	if !utf8.ValidString(d) {
		d = strings.ToValidUTF8(d, "\uFFFD")
	}
	if head, ok := spacedHead(d); ok {
		d = head
	} else {
		d = strings.Join(strings.Fields(d), " ")
	}
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	n := 0
	for i := range d { // i is where rune n begins
		if n == 200 {
			if j := strings.LastIndexByte(d[:i], ' '); j > 0 {
				return d[:j] + "…"
			}
			return d[:i] + "…"
		}
		n++
	}
	return d
}

// headRunes is how much of a description decides its line: 200 characters,
// and the two after them that may end a first sentence there (". ").
const headRunes = 202

// spacedHead returns the beginning of d that decides its line description
// (to its first ". ", at most headRunes characters) when that beginning is
// as strings.Fields and a join with single spaces leave it; ok is false
// when it is not.
func spacedHead(d string) (head string, ok bool) {
	space := true // at the start, a space is one too many
	for i, runes := 0, 0; i < len(d); runes++ {
		if runes == headRunes {
			return d[:i], true
		}
		b, size := d[i], 1
		switch {
		case b >= utf8.RuneSelf:
			r, n := utf8.DecodeRuneInString(d[i:])
			if unicode.IsSpace(r) {
				return "", false
			}
			size, space = n, false
		case b == ' ':
			if space {
				return "", false
			}
			if i > 0 && d[i-1] == '.' {
				return d[:i+1], true
			}
			space = true
		case unicode.IsSpace(rune(b)): // white space other than a space
			return "", false
		default:
			space = false
		}
		i += size
	}
	return d, !space || d == ""
}
