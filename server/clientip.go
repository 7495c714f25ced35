package server

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr names the address a request came from, as the rate limits key
// it: the connection's peer, or behind a trusted proxy the address that
// proxy saw, read from the header it appends to.
type clientAddr struct {
	// header names the header a trusted proxy appends the client's address
	// to (X-Forwarded-For); "" reads the peer.
	header string
	// hops is how many trusted proxies append to header: the client is the
	// hops-th address from the right. Anything left of it was written by
	// the client itself and is never trusted.
	hops int
}

// of returns r's client address key: an IPv4 address ("192.0.2.1"), or the
// /64 prefix of an IPv6 one ("2001:db8:1:2::/64"), since one host usually
// holds a whole /64. A missing header, too few entries or an entry that is
// not an address fall back to the peer.
func (c clientAddr) of(r *http.Request) string {
	if c.header != "" {
		if a, ok := forwarded(r.Header.Values(c.header), max(c.hops, 1)); ok {
			return addrKey(a)
		}
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return addrKey(ap.Addr())
	}
	if a, ok := parseAddr(r.RemoteAddr); ok {
		return addrKey(a)
	}
	return r.RemoteAddr
}

// forwarded returns the hops-th address from the right of a list header's
// values (all its lines in order, each a comma-separated list, as proxies
// append), false when there are fewer or that entry is not an address.
func forwarded(values []string, hops int) (netip.Addr, bool) {
	var entries []string
	for _, v := range values {
		entries = append(entries, strings.Split(v, ",")...)
	}
	if len(entries) < hops {
		return netip.Addr{}, false
	}
	return parseAddr(strings.TrimSpace(entries[len(entries)-hops]))
}

// parseAddr reads an address as proxies write it: bare ("192.0.2.1",
// "2001:db8::1"), bracketed ("[2001:db8::1]") or with a port.
func parseAddr(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return a, true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// addrKey is a's rate-limit key: IPv4 whole (an IPv4-mapped IPv6 address
// as the IPv4 one), IPv6 as its /64.
func addrKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}
