package catalog

import (
	"strings"
	"testing"

	"gorm.io/gorm"

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
