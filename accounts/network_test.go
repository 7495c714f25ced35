package accounts_test

import (
	"fmt"
	"net/http"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
)

// TestNetworkTier: the accounts' budgets per client address hold too per
// IPv6 /48, at shop.DefaultNetworkMultiple times an address's: the /64s of
// one /48 register at most 8 × 10 clients an hour and ask for at most
// 8 × 20 sign-in codes, each /64 within its own budget; a /64 of another
// /48 still registers and signs in.
func TestNetworkTier(t *testing.T) {
	const m = shop.DefaultNetworkMultiple
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		slash64 := func(net, i int) string { return fmt.Sprintf("2001:db8:%x:%x::/64", net, i) }

		t.Run("Registrations", func(t *testing.T) {
			created := 0
			for i := range (m + 1) * 10 {
				body := fmt.Sprintf(`{"client_name":"n%d","redirect_uris":["https://n%d.example/cb"]}`, i, i)
				switch reg := e.registerFrom(t, slash64(1, i/10), body); reg.status {
				case http.StatusCreated:
					created++
				case http.StatusTooManyRequests:
				default:
					t.Fatalf("registration %d: %d %s", i, reg.status, reg.Desc)
				}
			}
			if created != m*10 {
				t.Errorf("the /64s of one /48 registered %d clients; want %d", created, m*10)
			}
			if reg := e.registerFrom(t, slash64(2, 0), `{"redirect_uris":["https://other.example/cb"]}`); reg.status != http.StatusCreated {
				t.Errorf("a /64 of another /48: %d %s", reg.status, reg.Desc)
			}
		})

		t.Run("Codes", func(t *testing.T) {
			sent := 0
			for i := range (m + 1) * 20 {
				// Each email gets at most 5 codes: within its own limits.
				switch status, _ := e.startFlowIn(t, from(slash64(3, i/20)), fmt.Sprintf("n%d@example.com", i/4)); status {
				case http.StatusOK:
					sent++
				case http.StatusTooManyRequests:
				default:
					t.Fatalf("code %d: %d", i, status)
				}
			}
			if sent != m*20 {
				t.Errorf("the /64s of one /48 were sent %d codes; want %d", sent, m*20)
			}
			if status, _ := e.startFlowIn(t, from(slash64(4, 0)), "other@example.com"); status != http.StatusOK {
				t.Errorf("a /64 of another /48: %d", status)
			}
		})
	})
}
