package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"shop/server"
)

// TestClientAddress: the address a buyer is known by (its rate-limit key)
// is the peer's, or behind a proxy the one the trusted proxy appended to the
// header, counted from the right: what the client wrote left of it is never
// taken. IPv6 addresses are known by their /64, IPv4-mapped ones as IPv4.
func TestClientAddress(t *testing.T) {
	xff := "X-Forwarded-For"
	for _, tc := range []struct {
		name   string
		header string // Options.ClientIPHeader
		hops   int
		values []string // the header's lines
		want   string
	}{
		{"Peer", "", 0, nil, "127.0.0.1"},
		{"PeerIgnoresHeader", "", 0, []string{"203.0.113.9"}, "127.0.0.1"},
		{"Proxied", xff, 0, []string{"203.0.113.9"}, "203.0.113.9"},
		{"SpoofedLeft", xff, 1, []string{"198.51.100.1, 10.0.0.1 ,203.0.113.9"}, "203.0.113.9"},
		{"SpoofedLine", xff, 1, []string{"198.51.100.1", "203.0.113.9"}, "203.0.113.9"},
		{"WithPort", xff, 1, []string{"203.0.113.9:8443"}, "203.0.113.9"},
		{"IPv6", xff, 1, []string{"198.51.100.1, 2001:db8:1:2:aaaa:bbbb:cccc:dddd"}, "2001:db8:1:2::/64"},
		{"IPv6SameSlash64", xff, 1, []string{"2001:db8:1:2::1"}, "2001:db8:1:2::/64"},
		{"IPv6OtherSlash64", xff, 1, []string{"2001:db8:1:3::1"}, "2001:db8:1:3::/64"},
		{"IPv6Bracketed", xff, 1, []string{"[2001:db8:1:2::1]:443"}, "2001:db8:1:2::/64"},
		{"IPv4Mapped", xff, 1, []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
		{"TwoHops", xff, 2, []string{"198.51.100.1, 203.0.113.9, 10.0.0.2"}, "203.0.113.9"},
		{"ErrTwoHopsOneEntry", xff, 2, []string{"10.0.0.2"}, "127.0.0.1"},
		{"ErrMissing", xff, 1, nil, "127.0.0.1"},
		{"ErrUnknown", xff, 1, []string{"unknown"}, "127.0.0.1"},
		{"ErrRightmostGarbage", xff, 1, []string{"203.0.113.9, not-an-address"}, "127.0.0.1"},
		{"ErrEmptyRightmost", xff, 1, []string{"203.0.113.9,"}, "127.0.0.1"},
		{"RealIP", "X-Real-IP", 1, []string{"203.0.113.9"}, "203.0.113.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, server.Options{ClientIPHeader: tc.header, TrustedProxyHops: tc.hops})
			hdr := map[string]string{}
			if len(tc.values) > 0 {
				hdr["X-Forwarded-For"] = tc.values[0]
				hdr["X-Real-IP"] = tc.values[0]
			}
			h.client.Transport = extraLines{h.client.Transport, tc.values}
			b, r, err := h.whoami("someone", hdr)
			if err != nil {
				t.Fatal(err)
			}
			if b.Address != tc.want || b.Subject != "someone" {
				t.Errorf("buyer %+v (%s); want someone at %s", b, r.body, tc.want)
			}
		})
	}
}

// extraLines adds the lines after the first of X-Forwarded-For.
type extraLines struct {
	next  http.RoundTripper
	lines []string
}

func (e extraLines) RoundTrip(r *http.Request) (*http.Response, error) {
	for i := 1; i < len(e.lines); i++ {
		r.Header.Add("X-Forwarded-For", e.lines[i])
	}
	return e.next.RoundTrip(r)
}

// TestRateLimitSpoofedForwarded: 100 requests through one proxy, whose
// client writes a different address left of the one the proxy appends each
// time, share that address's bucket and are throttled; proxied clients of
// their own (IPv4, IPv6 /64s) each get theirs.
func TestRateLimitSpoofedForwarded(t *testing.T) {
	h := newHost(t, server.Options{RateLimit: 1, RateBurst: 5, ClientIPHeader: "X-Forwarded-For"})
	start := time.Now()
	replies := h.burst(t, 100, 1, func(i int) string { return toolCall(i+1, nil) }, func(i int) map[string]string {
		return map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.%d.%d, 203.0.113.7", i/250, i%250)}
	})
	// The bucket's 5, and 1 a second after.
	if served, most := count(replies, http.StatusOK), 5+int(time.Since(start).Seconds())+1; served < 5 || served > most {
		t.Errorf("%d of 100 spoofed requests served; want the one bucket's 5 (and its refill: at most %d)", served, most)
	}
	checkRefusal(t, replies[99], 100, "for this buyer")
	for _, tc := range []struct {
		name    string
		clients []string // each its own bucket
		same    []string // all in the bucket of clients[0]
	}{
		{"IPv4", []string{"192.0.2.1", "192.0.2.2"}, []string{"::ffff:192.0.2.1"}},
		{"IPv6", []string{"2001:db8:a:1::1", "2001:db8:a:2::1"}, []string{"2001:db8:a:1::2", "2001:db8:a:1:ffff:ffff:ffff:ffff"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := func(addr string) int {
				_, r, _ := h.whoami(nil, map[string]string{"X-Forwarded-For": "6.6.6.6, " + addr})
				return r.status
			}
			for _, c := range tc.clients {
				for i := range 5 {
					if code := call(c); code != http.StatusOK {
						t.Fatalf("client %s, call %d: %d; want its own burst of 5", c, i+1, code)
					}
				}
			}
			for _, c := range tc.same {
				if code := call(c); code != http.StatusTooManyRequests {
					t.Errorf("client %s after %s's burst: %d; want 429, the same bucket", c, tc.clients[0], code)
				}
			}
		})
	}
}
