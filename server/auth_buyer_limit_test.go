package server_test

import (
	"net/http"
	"testing"

	"gorm.io/gorm"

	"shop/database/dbtest"
	"shop/server"
)

// TestLinkedBuyerRateLimit: a linked buyer's requests are limited by their
// account (a person's bucket), not by the address they share with others
// who name nobody; a token the shop does not know is still answered 401.
func TestLinkedBuyerRateLimit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ts, as := accountsServer(t, db)
		serveWhoami(t, ts, as, server.Options{RateLimit: -1})
		ada, bob := link(t, db, ts.URL, "ada@example.com"), link(t, db, ts.URL, "bob@example.com")

		// Then the same shop, everyone on one address: two requests at
		// once for the address naming nobody, three for each person.
		serveWhoami(t, ts, as, server.Options{RateLimit: 0.001, RateBurst: 2, PersonRateLimit: 0.001, PersonRateBurst: 3, AddressRateBurst: 1000})
		for _, c := range []struct {
			who, token string
			want       []int
		}{
			{"an unknown token", "not-a-token", []int{http.StatusUnauthorized}},
			{"Ada", ada, []int{200, 200, 200, http.StatusTooManyRequests}},
			{"Bob", bob, []int{200, 200, 200, http.StatusTooManyRequests}},
			{"a guest", "", []int{200, http.StatusTooManyRequests}},
		} {
			for i, want := range c.want {
				if status, _, body := callWhoami(t, ts.URL, c.token); status != want {
					t.Fatalf("%s's request %d: %d, want %d: %s", c.who, i+1, status, want, body)
				}
			}
		}
	})
}
