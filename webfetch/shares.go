package webfetch

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
)

// shares bound the fetches under way to each key (a host, an address) at
// once, so that one slow or hostile target holds only its share of the
// Fetcher's slots. A key's entry lives while someone holds or waits for it.
type shares struct {
	limit int
	mu    sync.Mutex
	m     map[string]*share
}

type share struct {
	slots chan struct{}
	users int
}

func newShares(limit int) *shares { return &shares{limit: limit, m: map[string]*share{}} }

// acquire waits for one of key's slots, or for ctx to end (ErrBusy);
// release gives the slot back.
func (s *shares) acquire(ctx context.Context, key string) (release func(), err error) {
	s.mu.Lock()
	sh := s.m[key]
	if sh == nil {
		sh = &share{slots: make(chan struct{}, s.limit)}
		s.m[key] = sh
	}
	sh.users++
	s.mu.Unlock()
	leave := func() {
		s.mu.Lock()
		if sh.users--; sh.users == 0 {
			delete(s.m, key)
		}
		s.mu.Unlock()
	}
	select {
	case sh.slots <- struct{}{}:
		return func() { <-sh.slots; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ErrBusy
	}
}

// acquireAll takes the slots of the host, of its address and one of the
// Fetcher's, in that order, so that callers waiting on a busy host or
// address hold none of the slots other targets need.
func (f *Fetcher) acquireAll(ctx context.Context, host string) (release func(), err error) {
	var held []func()
	release = func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	r, err := f.hosts.acquire(ctx, strings.ToLower(host))
	if err != nil {
		return nil, err
	}
	held = append(held, r)
	addr, err := f.addressKey(ctx, host)
	if err != nil {
		release()
		return nil, err
	}
	if r, err = f.addresses.acquire(ctx, addr); err != nil {
		release()
		return nil, err
	}
	held = append(held, r)
	select {
	case f.slots <- struct{}{}:
		held = append(held, func() { <-f.slots })
		return release, nil
	case <-ctx.Done():
		release()
		return nil, ErrBusy
	}
}

// addressKey is the address host resolves to first, as its share is keyed:
// an IPv4 address, or an IPv6 /64 (what one site gets). A host none of
// whose addresses may be fetched is refused here, before any slot is
// taken; the dial checks the address it connects to all the same.
func (f *Fetcher) addressKey(ctx context.Context, host string) (string, error) {
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		found, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return "", f.doError(ctx, err)
		}
		ips = found
	}
	for _, ip := range ips {
		ip = ip.Unmap()
		if !f.allowed(ip) {
			continue
		}
		if ip.Is6() {
			p, _ := ip.Prefix(64)
			return p.String(), nil
		}
		return ip.String(), nil
	}
	return "", ErrPrivateAddress
}
