package ucp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"shop"
)

// Bounds of an agent profile fetch (overview.md, Profile Requirements).
const (
	maxProfileURLLen  = 2048
	maxProfileBytes   = 256 << 10
	profileTimeout    = 5 * time.Second
	minProfileTTL     = 60 * time.Second // the specification's floor
	maxProfileTTL     = time.Hour
	defaultProfileTTL = 5 * time.Minute
	failedProfileTTL  = 10 * time.Second // a failing profile is not fetched again sooner
	maxCachedProfiles = 1024
	maxFetches        = 16 // at once, whatever the agents
)

var versionPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// agentProfile is what the shop reads of a platform's profile: its
// protocol version and the capabilities it declares, by name.
type agentProfile struct {
	Version      string
	Capabilities map[string][]agentCapability
}

type agentCapability struct {
	Version string          `json:"version"`
	Extends json.RawMessage `json:"extends,omitempty"`
}

// profiles fetches agents' profiles safely and keeps them for their TTL.
// The cache only spares fetches: every replica fetches for itself, and
// nothing depends on two replicas agreeing.
type profiles struct {
	client *http.Client
	// loopback allows http:// profiles on loopback addresses (tests).
	loopback bool
	now      func() time.Time

	mu    sync.Mutex
	cache map[string]cachedProfile
	// fetching are the fetches under way, by URL: callers of one URL wait
	// for one fetch. slots bound the fetches under way at once, so that
	// unknown agents cost the shop a fixed outbound footprint.
	fetching map[string]chan struct{}
	slots    chan struct{}
}

type cachedProfile struct {
	profile *agentProfile
	err     *shop.ProtocolError
	expires time.Time
}

func newProfiles(loopback bool) *profiles {
	p := &profiles{loopback: loopback, now: time.Now, cache: map[string]cachedProfile{},
		fetching: map[string]chan struct{}{}, slots: make(chan struct{}, maxFetches)}
	dialer := &net.Dialer{Timeout: profileTimeout, Control: p.checkAddress}
	p.client = &http.Client{
		Timeout: profileTimeout,
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would dial for us, past checkAddress
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   profileTimeout,
			ResponseHeaderTimeout: profileTimeout,
			MaxIdleConns:          16,
			IdleConnTimeout:       time.Minute,
		},
		// Profiles must not redirect, and a redirect is not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return p
}

// checkAddress refuses to connect anywhere but a public unicast address
// (a loopback one too, when loopback is allowed): it runs on the address
// actually dialed, after name resolution, so a name that resolves to a
// private address is refused as well.
func (p *profiles) checkAddress(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	if !publicAddr(ip.Unmap()) && !(p.loopback && ip.Unmap().IsLoopback()) {
		return fmt.Errorf("%w: %s", errPrivateAddress, ip)
	}
	return nil
}

var errPrivateAddress = errors.New("not a public address")

var sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT

// publicAddr reports whether ip is a public unicast address: not loopback,
// private, link-local, shared, multicast or unspecified.
func publicAddr(ip netip.Addr) bool {
	return ip.IsGlobalUnicast() && !ip.IsPrivate() && !sharedSpace.Contains(ip) &&
		!(ip.Is4() && ip.As4()[0] == 0)
}

// get returns the agent profile at raw, fetched or from the cache; a
// failure is a *ProtocolError as the specification codes it.
func (p *profiles) get(ctx context.Context, raw string) (*agentProfile, error) {
	u, perr := p.checkURL(raw)
	if perr != nil {
		return nil, perr
	}
	key := u.String()
	for {
		if c, ok := p.cached(key); ok {
			return c.answer()
		}
		p.mu.Lock()
		wait, busy := p.fetching[key]
		if !busy {
			done := make(chan struct{})
			p.fetching[key] = done
			p.mu.Unlock()
			defer func() {
				p.mu.Lock()
				delete(p.fetching, key)
				p.mu.Unlock()
				close(done)
			}()
			return p.fetchInto(ctx, key).answer()
		}
		p.mu.Unlock()
		// Another call fetches this profile now: its answer is ours.
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, discoveryError("profile_unreachable", "the agent profile could not be fetched in time")
		}
	}
}

// cached returns the cache's entry for key while it lasts.
func (p *profiles) cached(key string) (cachedProfile, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.cache[key]
	return c, ok && p.now().Before(c.expires)
}

func (c cachedProfile) answer() (*agentProfile, error) {
	if c.err != nil {
		return nil, c.err
	}
	return c.profile, nil
}

// fetchInto fetches the profile at key, at most maxFetches at once, and
// caches the outcome: the profile for its TTL, a failure for
// failedProfileTTL.
func (p *profiles) fetchInto(ctx context.Context, key string) cachedProfile {
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	case <-ctx.Done():
		return cachedProfile{err: discoveryError("profile_unreachable", "the agent profile could not be fetched in time")}
	}
	prof, ttl, perr := p.fetch(ctx, key)
	now := p.now()
	entry := cachedProfile{profile: prof, err: perr, expires: now.Add(ttl)}
	if perr != nil {
		entry.expires = now.Add(failedProfileTTL)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.cache) >= maxCachedProfiles { // bounded: drop the expired, then any, to make room
		for k, v := range p.cache {
			if !now.Before(v.expires) {
				delete(p.cache, k)
			}
		}
		for k := range p.cache {
			if len(p.cache) < maxCachedProfiles {
				break
			}
			delete(p.cache, k)
		}
	}
	p.cache[key] = entry
	return entry
}

// checkURL accepts an absolute https URL (http on a loopback host when
// loopback is allowed) without credentials.
func (p *profiles) checkURL(raw string) (*url.URL, *shop.ProtocolError) {
	bad := func(why string) (*url.URL, *shop.ProtocolError) {
		return nil, discoveryError("invalid_profile_url", "meta[\"ucp-agent\"].profile "+why)
	}
	if raw == "" {
		return bad(`is missing: send meta: {"ucp-agent": {"profile": "https://…/your-agent-profile.json"}}`)
	}
	if len(raw) > maxProfileURLLen {
		return bad(fmt.Sprintf("is longer than %d characters", maxProfileURLLen))
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return bad("must be an absolute https URL without credentials")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.loopback && loopbackHost(u.Hostname()):
	default:
		return bad("must use https")
	}
	u.Fragment = ""
	return u, nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// fetch GETs and reads a profile, bounded in time and size, and returns it
// with how long it may be kept.
func (p *profiles) fetch(ctx context.Context, u string) (*agentProfile, time.Duration, *shop.ProtocolError) {
	ctx, cancel := context.WithTimeout(ctx, profileTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, discoveryError("invalid_profile_url", "the agent profile URL cannot be fetched")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		why := "the agent profile could not be fetched"
		if errors.Is(err, errPrivateAddress) {
			why += ": its host is not a public address"
		} else if errors.Is(err, context.DeadlineExceeded) {
			why += ": it took too long"
		}
		return nil, 0, discoveryError("profile_unreachable", why)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, discoveryError("profile_unreachable", fmt.Sprintf("the agent profile answered HTTP %d (profiles must answer 200, without redirects)", resp.StatusCode))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProfileBytes+1))
	if err != nil {
		return nil, 0, discoveryError("profile_unreachable", "the agent profile could not be read")
	}
	if len(body) > maxProfileBytes {
		return nil, 0, discoveryError("profile_malformed", fmt.Sprintf("the agent profile is larger than %d bytes", maxProfileBytes))
	}
	prof, perr := parseProfile(body)
	if perr != nil {
		return nil, 0, perr
	}
	return prof, profileTTL(resp.Header.Get("Cache-Control")), nil
}

// parseProfile reads a platform profile: a JSON object whose ucp names a
// version and capabilities.
func parseProfile(body []byte) (*agentProfile, *shop.ProtocolError) {
	var doc struct {
		UCP *struct {
			Version      string                       `json:"version"`
			Capabilities map[string][]agentCapability `json:"capabilities"`
		} `json:"ucp"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.UCP == nil {
		return nil, discoveryError("profile_malformed", "the agent profile is not a UCP profile: a JSON object with ucp.version and ucp.capabilities")
	}
	if !versionPattern.MatchString(doc.UCP.Version) {
		return nil, discoveryError("profile_malformed", "the agent profile's ucp.version is not a date such as "+Version)
	}
	for name, entries := range doc.UCP.Capabilities {
		for _, e := range entries {
			if !versionPattern.MatchString(e.Version) {
				return nil, discoveryError("profile_malformed", fmt.Sprintf("the agent profile's capability %s has no version such as %s", name, Version))
			}
		}
	}
	return &agentProfile{Version: doc.UCP.Version, Capabilities: doc.UCP.Capabilities}, nil
}

// profileTTL is how long a profile may be kept: its Cache-Control max-age,
// at least a minute and at most an hour, five minutes when it says none.
func profileTTL(cc string) time.Duration {
	ttl := defaultProfileTTL
	for _, d := range strings.Split(cc, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(strings.ToLower(d)), "=")
		if k == "max-age" {
			if n, err := strconv.Atoi(strings.Trim(v, `"`)); err == nil {
				ttl = time.Duration(n) * time.Second
			}
		}
	}
	return min(max(ttl, minProfileTTL), maxProfileTTL)
}

// negotiate is the capabilities the shop and the agent share at the shop's
// version (overview.md, Intersection Algorithm): those both declare at
// Version, without the extensions none of whose parents remain.
func negotiate(agent *agentProfile) map[string]bool {
	active := map[string]bool{}
	for _, c := range capabilities {
		for _, e := range agent.Capabilities[c.name] {
			if e.Version == Version {
				active[c.name] = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, c := range capabilities {
			if !active[c.name] || len(c.extends) == 0 {
				continue
			}
			parent := false
			for _, p := range c.extends {
				parent = parent || active[p]
			}
			if !parent {
				delete(active, c.name)
				changed = true
			}
		}
	}
	return active
}
