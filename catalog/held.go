package catalog

import (
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"shop/database"
)

// The live holds on variants, and the stock they are held against.

// heldSumSQL is a column of the live holds on variant v of everyone but
// the given number of holders (at least one placeholder: see
// exceptHolders); its arguments are heldArgs'.
func heldSumSQL(holders int) string {
	return "COALESCE((SELECT SUM(h.quantity) FROM stock_holds h WHERE h.variant_id = v.id AND h.holder NOT IN (" +
		database.In(max(holders, 1)) + ") AND h.expires_at > ?), 0)"
}

// exceptHolders is the list of holders a hold sum leaves out: never
// empty, as NOT IN () is not SQL.
func exceptHolders(holders []string) []string {
	if len(holders) == 0 {
		return []string{""}
	}
	return holders
}

// heldArgs appends heldSumSQL's arguments to args: the holders, then now.
func heldArgs(args []any, holders []string, now time.Time) []any {
	return append(database.Strings(args, exceptHolders(holders)), now.UTC())
}

// held sums the live holds on the given variants of everyone but holder.
func (c *Catalog) held(db *gorm.DB, holder string, ids []string) (map[string]int64, error) {
	return c.heldExcept(db, []string{holder}, ids)
}

// heldExcept sums the live holds on the given variants of everyone but
// the given holders.
func (c *Catalog) heldExcept(db *gorm.DB, holders []string, ids []string) (map[string]int64, error) {
	args := database.Strings(heldArgs(make([]any, 0, len(ids)+len(holders)+1), holders, c.now()), ids)
	out, err := database.Counts(database.Query(db, "SELECT v.id, "+heldSumSQL(len(holders))+" FROM variants v WHERE v.id IN ("+database.In(len(ids))+")", args...))
	if err != nil {
		return nil, fmt.Errorf("sum stock holds: %w", err)
	}
	return out, nil
}

// lockStockHeld is lockStock and, beside each variant's stock, the live
// holds on it of everyone but the given holders (heldExcept). On SQLite it
// is one statement: the transaction has held the write lock since it began,
// so nothing changes between the two. On PostgreSQL the sum must be read
// after the rows are locked, in a statement of its own: a statement reads
// the holds as they were when it started, and FOR UPDATE may have waited
// since for a transaction that added some (TestHoldsLastUnits oversells
// otherwise).
func (c *Catalog) lockStockHeld(tx *gorm.DB, ids, except []string) (onHand, held map[string]int64, err error) {
	ids = slices.Sorted(slices.Values(ids))
	if database.DialectOfDB(tx) == database.Postgres {
		if onHand, err = lockStock(tx, ids); err != nil {
			return nil, nil, err
		}
		held, err = c.heldExcept(tx, except, ids)
		return onHand, held, err
	}
	args := database.Strings(heldArgs(make([]any, 0, len(ids)+len(except)+1), except, c.now()), ids)
	rows, err := database.Query(tx, "SELECT v.id, v.stock, "+heldSumSQL(len(except))+" FROM variants v WHERE v.id IN ("+
		database.In(len(ids))+") ORDER BY v.id", args...)
	if err != nil {
		return nil, nil, fmt.Errorf("lock variants: %w", err)
	}
	defer rows.Close()
	onHand, held = make(map[string]int64, len(ids)), make(map[string]int64, len(ids))
	for rows.Next() {
		var id string
		var stock, n int64
		if err := rows.Scan(&id, &stock, &n); err != nil {
			return nil, nil, fmt.Errorf("lock variants: %w", err)
		}
		onHand[id], held[id] = stock, n
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("lock variants: %w", err)
	}
	return onHand, held, nil
}

// lockStock reads the stock on hand of the variants with the given ids,
// locking their rows (PostgreSQL: FOR UPDATE; SQLite: the write lock the
// transaction took when it began) in id order, so that two transactions
// never wait on each other in a cycle.
func lockStock(tx *gorm.DB, ids []string) (map[string]int64, error) {
	ids = slices.Sorted(slices.Values(ids))
	onHand, err := database.Counts(database.Query(tx, "SELECT id, stock FROM variants WHERE id IN ("+database.In(len(ids))+") ORDER BY id"+database.ForUpdate(tx),
		database.Strings(make([]any, 0, len(ids)), ids)...))
	if err != nil {
		return nil, fmt.Errorf("lock variants: %w", err)
	}
	return onHand, nil
}
