package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"shop/server"
)

// TestRateLimitNetworkTier: every limit kept per client address also holds
// per IPv6 /48, at Options.NetworkMultiple times its burst. Three /64s of
// one /48 (each a client of its own, within its own burst) are served
// together only the /48's burst; a /64 of another /48 is still served, and
// one /64 sending from many of its addresses is one client.
func TestRateLimitNetworkTier(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts server.Options
		// subject is the host user id of call i (nil: none).
		subject func(i int) any
	}{
		// Calls that name nobody: the address's buyer bucket.
		{"Buyer", server.Options{RateLimit: 0.001, RateBurst: 3}, func(int) any { return nil }},
		// Calls making up a person each: the address's backstop.
		{"Backstop", server.Options{AddressRateLimit: 0.001, AddressRateBurst: 3}, func(i int) any { return fmt.Sprintf("made-up-%d", i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.ClientIPHeader, tc.opts.NetworkMultiple = "X-Forwarded-For", 2
			h := newHost(t, tc.opts)
			call := 0
			from := func(addr string) int {
				served := 0
				for range 3 {
					call++
					r, err := h.post("/mcp", toolCall(call, tc.subject(call)), map[string]string{"X-Forwarded-For": addr})
					if err != nil {
						t.Fatal(err)
					}
					if r.status == http.StatusOK {
						served++
					}
				}
				return served
			}
			// One /64, from three of its addresses: one client.
			if n := from("2001:db8:1:1::1") + from("2001:db8:1:1::2") + from("2001:db8:1:1:ffff::9"); n != 3 {
				t.Errorf("one /64 from three addresses: %d calls served; want its burst of 3", n)
			}
			// Two more /64s of the same /48: the /48's burst of 6 in all.
			if n := from("2001:db8:1:2::1") + from("2001:db8:1:3::1"); n != 3 {
				t.Errorf("two more /64s of the /48: %d calls served; want the 3 left of the /48's burst of 6", n)
			}
			if n := from("2001:db8:2:1::1"); n != 3 {
				t.Errorf("a /64 of another /48: %d calls served; want its burst of 3", n)
			}
			// IPv4 addresses have no second tier.
			if n := from("192.0.2.1") + from("192.0.2.2") + from("192.0.2.3"); n != 9 {
				t.Errorf("three IPv4 addresses: %d calls served; want 9", n)
			}
		})
	}
}
