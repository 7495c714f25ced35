package webfetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"time"
)

// resolveTimeout bounds CheckTarget's name resolution.
const resolveTimeout = 2 * time.Second

// CheckTarget checks a URL the shop will fetch or post to later (a
// platform's webhook_url) when it is given, as Get and Post check it when
// they connect: CheckURL's rules, then the host resolved and every address
// it resolves to public (loopback too, when allowed). A refusal is a
// *URLError, or wraps ErrPrivateAddress; the connection made later is
// checked again, so a name that changes its answer gains nothing.
func (f *Fetcher) CheckTarget(ctx context.Context, raw string) (*url.URL, error) {
	u, err := f.CheckURL(raw)
	if err != nil {
		return nil, err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if !f.allowed(ip) {
			return nil, fmt.Errorf("%w: %s", ErrPrivateAddress, ip)
		}
		return u, nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil, &URLError{"names a host that does not resolve"}
	}
	for _, ip := range addrs {
		if !f.allowed(ip) {
			return nil, fmt.Errorf("%w: %s resolves to %s", ErrPrivateAddress, host, ip)
		}
	}
	return u, nil
}
