package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"shop"
	"shop/database"
)

// Stock on hand is variants.stock; a checkout session that is ready for
// payment holds units of it until it expires (stock_holds). Available stock
// is on hand minus live holds. Holds are taken under a lock on the variants'
// rows (PostgreSQL: SELECT … FOR UPDATE; SQLite: the write lock every
// transaction takes when it begins), so two buyers never hold the same unit.

// holdRow is a row of stock_holds.
type holdRow struct {
	Holder    string `gorm:"primaryKey"`
	VariantID string `gorm:"primaryKey"`
	Quantity  int64
	ExpiresAt time.Time
}

func (holdRow) TableName() string { return "stock_holds" }

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

// Items returns the variants with the given ids that exist and are not
// removed (see Import), by id.
// Available counts the holds of everyone but holder. db is the transaction
// to read in, or nil.
func (c *Catalog) Items(ctx context.Context, db *gorm.DB, holder string, ids []string) (map[string]Item, error) {
	return c.ItemsFor(ctx, db, []string{holder}, ids)
}

// ItemsFor is Items for a holder and the holders whose holds count as
// available to it (see HoldRequest.Yield): Available counts the holds of
// everyone but holders.
func (c *Catalog) ItemsFor(ctx context.Context, db *gorm.DB, holders []string, ids []string) (map[string]Item, error) {
	db = c.conn(ctx, db)
	// The holds come with their variants, summed by a subquery per row: one
	// statement instead of a second one grouping the holds.
	args := heldArgs(make([]any, 0, len(ids)+len(holders)+3), holders, c.now())
	args = append(database.Strings(args, ids), false)
	rows, err := database.Query(db, "SELECT v.id, v.product_id, v.title, v.image, v.price, v.stock, p.title, p.images, SUBSTR(p.description, 1, 400), "+heldSumSQL(len(holders))+
		" FROM variants v JOIN products p ON p.id = v.product_id WHERE v.id IN ("+database.In(len(ids))+") AND v.removed = ?", args...)
	if err != nil {
		return nil, fmt.Errorf("look up variants: %w", err)
	}
	defer rows.Close()
	items := make(map[string]Item, len(ids))
	for rows.Next() {
		var it Item
		var title, image, productTitle, productImages, description string
		var held int64
		if err := rows.Scan(&it.VariantID, &it.ProductID, &title, &image, &it.Price, &it.OnHand, &productTitle, &productImages, &description, &held); err != nil {
			return nil, fmt.Errorf("look up variants: %w", err)
		}
		it.Name = productTitle
		if title != "" && title != "Default" {
			it.Name += " — " + title
		}
		it.Description = lineDescription(description)
		it.Images = c.images(productImages)
		if image != "" {
			it.Images = append([]string{c.imageURL(image)}, it.Images...)
		}
		it.Available = max(0, it.OnHand-held)
		items[it.VariantID] = it
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look up variants: %w", err)
	}
	return items, nil
}

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

// Hold makes holder's holds exactly lines, live until until, when every line
// is available; otherwise it holds nothing for holder and returns what falls
// short. It must run inside tx, the transaction that also records why the
// units are held.
func (c *Catalog) Hold(ctx context.Context, tx *gorm.DB, holder string, lines []HoldLine, until time.Time) ([]Shortfall, error) {
	res, err := c.HoldFor(ctx, tx, HoldRequest{Holder: holder, Lines: lines, Until: until})
	if err != nil {
		return nil, err
	}
	return res.Short, nil
}

// HoldRequest asks for Holder's holds to become exactly Lines, live until
// Until.
type HoldRequest struct {
	Holder string
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
	// Held says that Holder's live holds are Lines already (the caller
	// took them so and nothing changed since): when every line is
	// available and nobody else's holds are dropped, HoldFor only moves
	// their expiry, and takes them anew should it find them otherwise.
	Held bool
	// Paying takes, or keeps, the holds as being paid (paying.go): the
	// claim of Holder's session for payment, whose holds last until Until
	// whatever becomes of the session meanwhile.
	Paying bool
}

// HoldResult is what HoldFor did.
type HoldResult struct {
	// Short lists the lines that cannot be held even with the units of
	// Yield and Release: then nothing is held for the holder, and nobody
	// else lost a hold.
	Short []Shortfall
	// Released are the holders of Release and Yield whose holds were
	// dropped for the holder's, Release first, then Yield in its order.
	Released []string
}

// HoldFor makes req.Holder's holds exactly req.Lines when every line is
// available, counting the units held by req.Yield and req.Release as
// available, and drops the holds of those of them that must give way (see
// HoldRequest). Otherwise it holds nothing for the holder, drops nobody
// else's holds and returns what falls short. It must run inside tx, the
// transaction that also records why the units are held and why the holders
// giving way lost theirs.
func (c *Catalog) HoldFor(ctx context.Context, tx *gorm.DB, req HoldRequest) (*HoldResult, error) {
	tx = tx.WithContext(ctx)
	ids := make([]string, len(req.Lines))
	for i, l := range req.Lines {
		ids[i] = l.VariantID
	}
	giving := append(slices.Clone(req.Release), req.Yield...)
	onHand, held, err := c.lockStockHeld(tx, ids, append([]string{req.Holder}, giving...))
	if err != nil {
		return nil, fmt.Errorf("hold stock: %w", err)
	}
	res := &HoldResult{}
	for _, l := range req.Lines {
		if avail := max(0, onHand[l.VariantID]-held[l.VariantID]); l.Quantity > avail {
			res.Short = append(res.Short, Shortfall{VariantID: l.VariantID, Requested: l.Quantity, Available: avail})
		}
	}
	if len(res.Short) == 0 && len(giving) > 0 {
		byHolder, err := c.holdsOf(tx, giving, ids)
		if err != nil {
			return nil, err
		}
		res.Released = giveWay(req, onHand, held, byHolder)
	}
	if req.Held && len(res.Short) == 0 && len(res.Released) == 0 {
		// Marked paying or not as req asks, as holds taken anew are.
		n, err := database.Exec(tx, "UPDATE stock_holds SET expires_at = ?, paying = ? WHERE holder = ? AND expires_at > ?",
			req.Until.UTC(), req.Paying, req.Holder, c.now().UTC())
		if err != nil {
			return nil, fmt.Errorf("hold stock: %w", err)
		}
		if n == int64(len(req.Lines)) {
			return res, nil
		}
	}
	if err := c.releaseAll(tx, append([]string{req.Holder}, res.Released...)); err != nil {
		return nil, err
	}
	if len(res.Short) > 0 {
		return res, nil
	}
	if err := insertHolds(tx, req.Holder, req.Lines, req.Until.UTC(), req.Paying); err != nil {
		return nil, err
	}
	return res, nil
}

// insertHolds writes holder's holds of lines, until then and being paid or
// not, in one statement.
func insertHolds(tx *gorm.DB, holder string, lines []HoldLine, until time.Time, paying bool) error {
	rows := make([][]any, len(lines))
	for i, l := range lines {
		rows[i] = []any{holder, l.VariantID, l.Quantity, until, paying}
	}
	if _, err := database.Insert(tx, "stock_holds", []string{"holder", "variant_id", "quantity", "expires_at", "paying"}, rows...); err != nil {
		return fmt.Errorf("hold stock: %w", err)
	}
	return nil
}

// Release drops holder's holds. db is the transaction to write in, or nil.
func (c *Catalog) Release(ctx context.Context, db *gorm.DB, holder string) error {
	if _, err := database.Exec(c.conn(ctx, db), "DELETE FROM stock_holds WHERE holder = ?", holder); err != nil {
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
	return short, c.Release(ctx, tx, holder)
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

// ReleaseExpired drops every hold that has expired and returns how many.
func (c *Catalog) ReleaseExpired(ctx context.Context) (int64, error) {
	res := c.db.WithContext(ctx).Where("expires_at <= ?", c.now().UTC()).Delete(&holdRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("release expired holds: %w", res.Error)
	}
	return res.RowsAffected, nil
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
// most 200 characters, cut at a word: what a checkout line says of it.
func lineDescription(d string) string {
	d = strings.Join(strings.Fields(d), " ")
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	if utf8.RuneCountInString(d) <= 200 {
		return d
	}
	r := []rune(d)[:200]
	if i := strings.LastIndexByte(string(r), ' '); i > 0 {
		return string(r)[:i] + "…"
	}
	return string(r) + "…"
}
