package catalog

import (
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
)

// TestPayingHoldsUseTheirIndex checks that the sums of the holds being paid
// read the partial index stock_holds_paying (migration 00021), which serves
// a query only when it names the index's condition as the index does.
func TestPayingHoldsUseTheirIndex(t *testing.T) {
	query := "SELECT variant_id, SUM(quantity) FROM stock_holds WHERE " + strings.Replace(payingOf, "IN ?", "IN (?, ?)", 1) + " GROUP BY variant_id"
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		if plan := dbtest.Plan(t, db, query, "v1", "v2"); !strings.Contains(plan, "stock_holds_paying") {
			t.Errorf("%s\nreads no stock_holds_paying:\n%s", query, plan)
		}
	})
}

// TestHoldSumsUseTheirIndexes checks that ItemsToHold's statement reads the
// partial indexes of a hold's buyer (migration 00155) for the sums of the
// buyer's key, email, address and /48, and the holds' primary key for the
// holder's own: without them every sum reads every live hold.
func TestHoldSumsUseTheirIndexes(t *testing.T) {
	query := viewSQL(1, 2, viewBounds)
	now := time.Now().UTC()
	args := []any{"cs_a", now, "cs_a", now, "cs_a", "k", "cs_a", now, "e@example.com", "cs_a", now,
		"cs_a", now, "192.0.2.1", "cs_a", now, "2001:db8:1::/48", "cs_a", now, "v1", "v2", false}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		if database.DialectOfDB(db) == database.Postgres {
			t.Skip("PostgreSQL takes whichever index is cheapest on empty tables")
		}
		plan := dbtest.Plan(t, db, query, args...)
		for _, index := range []string{"stock_holds_buyer_key", "stock_holds_buyer_email", "stock_holds_buyer_address", "stock_holds_buyer_network", "stock_holds_variant"} {
			if !strings.Contains(plan, index) {
				t.Errorf("reads no %s:\n%s", index, plan)
			}
		}
	})
}
