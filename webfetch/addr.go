package webfetch

import "net/netip"

// notPublic are the ranges IsGlobalUnicast lets through that no public
// server lives in: private and shared space, documentation, benchmarking,
// reserved and discard ranges, deprecated site-local IPv6.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),  // documentation
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved
	netip.MustParsePrefix("100::/64"),    // discard
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fec0::/10"), // site-local, deprecated
}

// Forms of IPv6 that carry an IPv4 address: through them a v6 address can
// reach a private v4 one.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052 well-known prefix
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")  // RFC 8215 local-use prefix
	sixToFour  = netip.MustParsePrefix("2002::/16")       // RFC 3056
	teredo     = netip.MustParsePrefix("2001::/32")       // RFC 4380
	v4Compat   = netip.MustParsePrefix("::/96")           // deprecated IPv4-compatible
	v4Transl   = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 2765 IPv4-translated
)

// Public reports whether ip is a public unicast address: not loopback,
// private, link-local, shared, reserved, multicast or unspecified, and, for
// the IPv6 forms that embed an IPv4 address (IPv4-mapped and -compatible,
// NAT64, 6to4, Teredo), only when every IPv4 address it may carry is public.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || !ip.IsGlobalUnicast() || ip.IsPrivate() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(ip) {
			return false
		}
	}
	if ip.Is4() {
		return true
	}
	for _, v4 := range embedded(ip) {
		if !Public(v4) {
			return false
		}
	}
	return true
}

// embedded is the IPv4 addresses ip may carry. The local-use NAT64 prefix
// may be used at any of RFC 6052's lengths, so it yields one candidate for
// each of them: all must be public (such addresses are local by
// definition, and in practice always refused).
func embedded(ip netip.Addr) []netip.Addr {
	b := ip.As16()
	v4 := func(p ...byte) netip.Addr { return netip.AddrFrom4([4]byte(p)) }
	switch {
	case nat64.Contains(ip), v4Compat.Contains(ip), v4Transl.Contains(ip):
		return []netip.Addr{v4(b[12:16]...)}
	case nat64Local.Contains(ip):
		// RFC 6052 §2.2: bits 64-71 are always skipped.
		return []netip.Addr{
			v4(b[6], b[7], b[9], b[10]),   // /48
			v4(b[7], b[9], b[10], b[11]),  // /56
			v4(b[9], b[10], b[11], b[12]), // /64
			v4(b[12:16]...),               // /96
		}
	case sixToFour.Contains(ip):
		return []netip.Addr{v4(b[2:6]...)}
	case teredo.Contains(ip):
		// The client's address, inverted, and the server's.
		return []netip.Addr{v4(^b[12], ^b[13], ^b[14], ^b[15]), v4(b[4:8]...)}
	}
	return nil
}

// loopbackHost reports whether h names the loopback interface.
func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}
