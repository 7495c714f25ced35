package checkout

import (
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
)

// TestQueriesUseTheirIndexes checks that the queries of sessions read the
// indexes made for them, the partial ones included (migration 00021): a
// partial index serves a query only when the query names its statuses (or,
// for the /48 tier's, a non-empty buyer_network) as the index does, and a
// query that misses it reads the sessions of every buyer, or every open
// session, instead, with the same answers.
func TestQueriesUseTheirIndexes(t *testing.T) {
	now := time.Now().UTC()
	cases := []struct {
		name, query, index string
		args               []any
		// sqliteOnly: PostgreSQL, told to use an index, takes whichever
		// is cheapest on empty tables; the partial ones it can take only
		// when the query implies their condition, which is what matters.
		sqliteOnly bool
	}{
		{"EndedCanceled", "SELECT id FROM checkout_sessions WHERE " + endedBefore(Canceled),
			"checkout_sessions_ended", []any{now}, false},
		{"EndedExpired", "SELECT id FROM checkout_sessions WHERE " + endedBefore(Expired),
			"checkout_sessions_ended", []any{now}, false},
		{"NetworkSessions", "SELECT id FROM checkout_sessions WHERE " + byNetwork + " AND created_at > ?",
			"checkout_sessions_network", []any{"2001:db8:1::/48", now}, false},
		{"NetworkCarts", "SELECT id FROM carts WHERE " + byNetwork + " AND created_at > ?",
			"carts_network", []any{"2001:db8:1::/48", now}, false},
		{"Expiry", "SELECT id FROM checkout_sessions WHERE status = ? AND expires_at <= ?",
			"checkout_sessions_expiry", []any{Ready, now}, true},
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if c.sqliteOnly && database.DialectOfDB(db) != database.SQLite {
					t.Skip("PostgreSQL's choice among full indexes on empty tables says nothing")
				}
				if plan := dbtest.Plan(t, db, c.query, c.args...); !strings.Contains(plan, c.index) {
					t.Errorf("%s\nreads no %s:\n%s", c.query, c.index, plan)
				}
			})
		}
	})
}
