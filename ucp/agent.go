package ucp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"shop/webfetch"
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
)

var versionPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// agentProfile is what the shop reads of a platform's profile: its
// protocol version and the capabilities it declares, by name.
type agentProfile struct {
	Version      string
	Capabilities map[string][]agentCapability
	// Keys are the public keys it publishes (keys[], signing_keys[] in
	// 2026-04-08) that the shop can read: a key of another type is skipped.
	Keys []jose.JSONWebKey
}

type agentCapability struct {
	Version string          `json:"version"`
	Extends json.RawMessage `json:"extends,omitempty"`
	// Config is the capability's configuration: the order capability's
	// names the platform's webhook_url.
	Config *struct {
		WebhookURL string `json:"webhook_url"`
	} `json:"config,omitempty"`
}

// profiles fetches agents' profiles safely and keeps them for their TTL.
// The cache only spares fetches: every replica fetches for itself, and
// nothing depends on two replicas agreeing.
type profiles struct {
	fetcher *webfetch.Fetcher
	now     func() time.Time

	mu    sync.Mutex
	cache map[string]cachedProfile
	// fetching are the fetches under way, by URL: callers of one URL wait
	// for one fetch. The fetcher bounds the fetches under way at once, in
	// all and to each host and address, so that unknown agents cost the
	// shop a fixed outbound footprint and a slow one stalls only itself.
	fetching map[string]chan struct{}
}

type cachedProfile struct {
	profile *agentProfile
	err     *protoError
	expires time.Time
}

func newProfiles(loopback bool) *profiles {
	return &profiles{now: time.Now, cache: map[string]cachedProfile{},
		fetching: map[string]chan struct{}{},
		fetcher: webfetch.New(webfetch.Options{
			AllowLoopback: loopback, MaxBytes: maxProfileBytes, Timeout: profileTimeout,
			MaxURLLen: maxProfileURLLen, MinTTL: minProfileTTL, MaxTTL: maxProfileTTL,
			DefaultTTL: defaultProfileTTL,
		})}
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
		if c, ok := p.cached(hostKey(u.Hostname())); ok {
			return c.answer() // the host failed: none of its profiles is fetched for now
		}
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
			return p.fetchInto(ctx, u).answer()
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

// hostKey is the cache's key of a host's failure.
func hostKey(host string) string { return "host " + host }

// What the cache learns of a failed fetch.
type failure int

const (
	urlFailed  failure = iota // this URL: kept failedProfileTTL
	hostFailed                // its host (unreachable, slow, not public): all its URLs
	notAsked                  // the shop was busy: nothing is learned
)

// fetchInto fetches the profile at u and caches the outcome: the profile
// for its TTL, a failure for failedProfileTTL, and a failure of the host
// itself for all of the host's URLs.
func (p *profiles) fetchInto(ctx context.Context, u *url.URL) cachedProfile {
	key := u.String()
	prof, ttl, perr, failed := p.fetch(ctx, key)
	now := p.now()
	entry := cachedProfile{profile: prof, err: perr, expires: now.Add(ttl)}
	if perr != nil {
		entry.expires = now.Add(failedProfileTTL)
		if failed == notAsked || ctx.Err() != nil {
			return entry // the caller gave up, or the shop was busy: nothing is learned of the profile
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.makeRoom(now)
	p.cache[key] = entry
	if perr != nil && failed == hostFailed {
		p.cache[hostKey(u.Hostname())] = entry
	}
	return entry
}

// makeRoom keeps the cache bounded: it drops the expired entries, then
// any, when it is full.
func (p *profiles) makeRoom(now time.Time) {
	if len(p.cache) < maxCachedProfiles-1 {
		return
	}
	for k, v := range p.cache {
		if !now.Before(v.expires) {
			delete(p.cache, k)
		}
	}
	for k := range p.cache {
		if len(p.cache) < maxCachedProfiles-1 {
			break
		}
		delete(p.cache, k)
	}
}

// checkURL accepts an absolute https URL (http on a loopback host when
// loopback is allowed) without credentials.
func (p *profiles) checkURL(raw string) (*url.URL, *protoError) {
	if raw == "" {
		return nil, discoveryError("invalid_profile_url", `meta["ucp-agent"].profile is missing: send meta: {"ucp-agent": {"profile": "https://…/your-agent-profile.json"}}`)
	}
	u, err := p.fetcher.CheckURL(raw)
	if err != nil {
		why := "must be an absolute https URL without credentials"
		var ue *webfetch.URLError
		if errors.As(err, &ue) {
			why = ue.Reason
		}
		return nil, discoveryError("invalid_profile_url", `meta["ucp-agent"].profile `+why)
	}
	return u, nil
}

// fetch GETs and reads a profile, bounded in time and size, and returns it
// with how long it may be kept, or why not and what failed. Its errors
// never echo what the agent's server answered.
func (p *profiles) fetch(ctx context.Context, u string) (*agentProfile, time.Duration, *protoError, failure) {
	resp, err := p.fetcher.Get(ctx, u, "application/json")
	if err != nil {
		perr, failed := fetchError(err)
		return nil, 0, perr, failed
	}
	prof, perr := parseProfile(resp.Body)
	if perr != nil {
		return nil, 0, perr, urlFailed
	}
	return prof, resp.TTL, nil, urlFailed
}

// fetchError is the protocol error of a failed fetch, and what failed.
func fetchError(err error) (*protoError, failure) {
	why := "the agent profile could not be fetched"
	switch {
	case errors.Is(err, webfetch.ErrBadURL):
		return discoveryError("invalid_profile_url", "the agent profile URL cannot be fetched"), urlFailed
	case errors.Is(err, webfetch.ErrTooLarge):
		return discoveryError("profile_malformed", fmt.Sprintf("the agent profile is larger than %d bytes", maxProfileBytes)), urlFailed
	case errors.Is(err, webfetch.ErrStatus):
		return discoveryError("profile_unreachable", why+": it did not answer 200 (profiles must answer 200, without redirects)"), urlFailed
	case errors.Is(err, webfetch.ErrBusy):
		return discoveryError("profile_unreachable", why+" now: the shop is fetching too many profiles; retry in a few seconds"), notAsked
	case errors.Is(err, webfetch.ErrPrivateAddress):
		why += ": its host is not a public address"
	case errors.Is(err, webfetch.ErrTimeout):
		why += ": it took too long"
	}
	return discoveryError("profile_unreachable", why), hostFailed
}

// parseProfile reads a platform profile: a JSON object whose ucp names a
// version and capabilities.
func parseProfile(body []byte) (*agentProfile, *protoError) {
	var doc struct {
		UCP *struct {
			Version      string                       `json:"version"`
			Capabilities map[string][]agentCapability `json:"capabilities"`
		} `json:"ucp"`
		Keys        []json.RawMessage `json:"keys"`
		SigningKeys []json.RawMessage `json:"signing_keys"`
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
	return &agentProfile{Version: doc.UCP.Version, Capabilities: doc.UCP.Capabilities, Keys: publicJWKs(append(doc.Keys, doc.SigningKeys...))}, nil
}

// publicJWKs are the public keys of raw the shop can read: a key of a type,
// curve or form it does not know is skipped, never the whole profile (the
// vocabularies are open), and so is one that holds a private part.
func publicJWKs(raw []json.RawMessage) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, r := range raw {
		var k jose.JSONWebKey
		if json.Unmarshal(r, &k) == nil && k.KeyID != "" && k.IsPublic() && k.Valid() && k.Use != "enc" {
			out = append(out, k)
		}
	}
	return out
}

// negotiate is the capabilities the shop and the agent share at release
// version, the agent's (overview.md, Intersection Algorithm): those both
// declare at version, without the extensions none of whose parents remain.
func negotiate(agent *agentProfile, version string) map[string]bool {
	active := map[string]bool{}
	for _, c := range capabilities {
		for _, e := range agent.Capabilities[c.name] {
			if e.Version == version {
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
