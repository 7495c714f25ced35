package server_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/accounts"
	"shop/database/dbtest"
	"shop/server"
	"shop/webfetch"
)

// TestLinkedBuyerRateLimit: a linked buyer's requests are limited by their
// account (a person's bucket), not by the address they share with others
// who name nobody; a token the shop does not know is still answered 401.
func TestLinkedBuyerRateLimit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ts := httptest.NewUnstartedServer(nil)
		ts.Start()
		t.Cleanup(ts.Close)
		key := make([]byte, 32)
		rand.Read(key)
		as, err := accounts.New(db, accounts.Options{PublicURL: ts.URL, Key: key, Shop: "Shop", Emails: true,
			Fetch: webfetch.New(webfetch.Options{AllowLoopback: true})})
		if err != nil {
			t.Fatal(err)
		}
		whoami := shop.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`),
			Handle: func(ctx context.Context, _ json.RawMessage) (*shop.Result, error) {
				return &shop.Result{Structured: shop.BuyerFrom(ctx), Text: "you"}, nil
			}}
		serve := func(o server.Options) {
			o.PublicURL, o.Accounts = ts.URL, as
			o.MCP = server.NewMCP(server.MCPOptions{Name: "shop", Tools: []shop.Tool{whoami}})
			srv, err := server.New(o)
			if err != nil {
				t.Fatal(err)
			}
			ts.Config.Handler = srv.Handler()
		}
		serve(server.Options{RateLimit: -1})
		ada, bob := link(t, db, ts.URL, "ada@example.com"), link(t, db, ts.URL, "bob@example.com")

		// Then the same server, everyone on one address: two requests at
		// once for the address naming nobody, three for each person.
		serve(server.Options{RateLimit: 0.001, RateBurst: 2, PersonRateLimit: 0.001, PersonRateBurst: 3, AddressRateBurst: 1000})
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
