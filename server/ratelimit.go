package server

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"shop"
	"shop/accounts"
)

// Defaults of the rate limits (Options). A buyer is a person when the host
// named its user (Buyer.Subject) or a token named an account
// (Buyer.AccountID); a caller that names nobody is its client address.
//
// A person's chat makes a few calls a turn, and a widget a few more: a
// burst of 30 and 2 a second after hold what one person produces, while one
// id sending 200 calls in four seconds has at most 38 served. A client that
// names nobody may be many people (every user of a host that sends no id)
// or a test client: the MCP conformance suite sends 115 requests in 0.9 s
// from one address with no user id (conformance/run.mjs, a scenario at a
// time, 157 in 30 s), three `shop purchase` runs 43 in 0.3 s, all inside an
// address's buyer burst of 150. 60 people of one host sending 5 calls each
// at once from one address are 300 requests, 900 when the host opens a
// session for each call (initialize and its notification, which name no
// buyer): inside the address's backstop of 1000 at once, 300 a second
// after.
const (
	DefaultPersonRateLimit  = 2    // requests per second per person (host user id or account)
	DefaultPersonRateBurst  = 30   // requests at once per person
	DefaultRateLimit        = 20   // requests per second per client address naming no person
	DefaultRateBurst        = 150  // requests at once per client address naming no person
	DefaultAddressRateLimit = 300  // requests per second per client address, whoever the buyers
	DefaultAddressRateBurst = 1000 // requests at once per client address
)

// Defaults of the product feed's own limit (Options.FeedRateLimit): a
// crawler reads it every few minutes, and each answer is the whole catalog.
const (
	DefaultFeedRateLimit = 0.1 // GETs of the feed per second per client address: 6 a minute
	DefaultFeedRateBurst = 10  // GETs of the feed at once per client address
)

// addrPrefix begins the buyer key of a client address that names nobody
// (shop.Buyer.Key).
const addrPrefix = "addr:"

// feedPath is the product feed's path, which has a limit of its own.
const feedPath = "/feeds/products.jsonl"

// rateLimitedCode is the JSON-RPC error code of a refused MCP request (the
// range -32000 to -32099 is the server's own).
const rateLimitedCode = -32029

// buckets keeps a token bucket per key. It protects one process from a noisy
// client; it is not a correctness mechanism, so it may live in memory.
type buckets struct {
	limit rate.Limit
	burst int
	// wide, when set, is the second tier of buckets kept per client
	// address: the same limit, times Options.NetworkMultiple, per IPv6 /48
	// (shop.NetworkOf). nil: no second tier.
	wide *buckets
	// idle is how long a bucket takes to fill up again: one untouched that
	// long is full, as a new one would be, so forgetting it loses nothing.
	idle time.Duration

	mu    sync.Mutex
	m     map[string]*bucket
	swept time.Time
}

type bucket struct {
	limiter *rate.Limiter
	seen    time.Time
	// warned is when the bucket's refusals were last logged: a flood is
	// logged once in each refill period, not once a request.
	warned time.Time
}

// newBuckets returns the buckets of a limit, nil (no limit) when limit is
// negative.
func newBuckets(limit rate.Limit, burst int) *buckets {
	if limit < 0 {
		return nil
	}
	idle := max(time.Second, time.Duration(float64(burst)/float64(limit)*float64(time.Second)))
	return &buckets{limit: limit, burst: burst, idle: idle, m: map[string]*bucket{}, swept: time.Now()}
}

// allow takes a token of key's bucket at now. Refused, it answers how long
// until one is there and whether to log the refusal (the first in the
// bucket's refill period).
func (b *buckets) allow(key string, now time.Time) (ok bool, wait time.Duration, first bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.swept) > b.idle {
		for k, c := range b.m {
			if now.Sub(c.seen) > b.idle {
				delete(b.m, k)
			}
		}
		b.swept = now
	}
	c := b.m[key]
	if c == nil {
		c = &bucket{limiter: rate.NewLimiter(b.limit, b.burst)}
		b.m[key] = c
	}
	c.seen = now
	r := c.limiter.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		if now.Sub(c.warned) <= b.idle {
			return false, d, false
		}
		c.warned = now
		return false, d, true
	}
	return true, 0, false
}

// size is the number of buckets kept.
func (b *buckets) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// rateDefaults sets o's zero rate-limit fields to their defaults.
func (o *Options) rateDefaults() {
	if o.RateLimit == 0 {
		o.RateLimit = DefaultRateLimit
	}
	if o.RateBurst <= 0 {
		o.RateBurst = DefaultRateBurst
	}
	if o.PersonRateLimit == 0 {
		o.PersonRateLimit = DefaultPersonRateLimit
	}
	if o.PersonRateBurst <= 0 {
		o.PersonRateBurst = DefaultPersonRateBurst
	}
	if o.FeedRateLimit == 0 {
		o.FeedRateLimit = DefaultFeedRateLimit
	}
	if o.FeedRateBurst <= 0 {
		o.FeedRateBurst = DefaultFeedRateBurst
	}
	if o.AddressRateLimit == 0 {
		o.AddressRateLimit = DefaultAddressRateLimit
	}
	if o.AddressRateBurst <= 0 {
		o.AddressRateBurst = DefaultAddressRateBurst
	}
	if o.TrustedProxyHops <= 0 {
		o.TrustedProxyHops = 1
	}
	if o.NetworkMultiple <= 0 {
		o.NetworkMultiple = shop.DefaultNetworkMultiple
	}
}

// newTiered returns newBuckets with its second tier per IPv6 /48, multiple
// times as large.
func newTiered(limit rate.Limit, burst, multiple int) *buckets {
	b := newBuckets(limit, burst)
	if b != nil {
		b.wide = newBuckets(limit*rate.Limit(multiple), burst*multiple)
	}
	return b
}

// limiter returns the rate limiter of s's options (rateDefaults applied).
func (s *Server) limiter() *limiter {
	o := s.opts
	l := &limiter{addr: clientAddr{header: o.ClientIPHeader, hops: o.TrustedProxyHops}, logger: s.logger, refused: o.RateLimited, accounts: o.Accounts}
	if o.RateLimit >= 0 {
		l.buyers = newTiered(o.RateLimit, o.RateBurst, o.NetworkMultiple)
		l.persons = newBuckets(o.PersonRateLimit, o.PersonRateBurst)
		l.feeds = newTiered(o.FeedRateLimit, o.FeedRateBurst, o.NetworkMultiple)
		l.addresses = newTiered(o.AddressRateLimit, o.AddressRateBurst, o.NetworkMultiple)
	}
	return l
}

// limiter rate-limits requests per buyer (Buyer.Key: a person, the linked
// account or the host's user id, in persons; else the client address, in
// buyers) and, as a backstop against one address making up ids, per client
// address.
type limiter struct {
	addr      clientAddr
	persons   *buckets // nil: no limit
	buyers    *buckets // nil: no limit
	feeds     *buckets // the product feed's GETs by address; nil: no limit
	addresses *buckets // nil: no limit
	logger    *slog.Logger
	refused   func(scope string) // Options.RateLimited; may be nil
	accounts  *accounts.Server   // checks /mcp's bearer tokens (withAccount); may be nil
}

// handler names the caller of each request (shop.WithBuyer: its address,
// its host's user id, see identify, and on /mcp the account its bearer
// token names, see withAccount), then limits it; health checks are never
// limited.
func (l *limiter) handler(next http.Handler) http.Handler {
	limited := identify(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && r.URL.Path != "/readyz" {
			b := shop.BuyerFrom(r.Context())
			if !l.take(w, r, l.addresses, b.Address, "from this address") {
				return
			}
			if r.URL.Path == feedPath && !l.take(w, r, l.feeds, b.Address, "for the product feed from this address") {
				return
			}
			r = withAccount(r, l.accounts)
			b = shop.BuyerFrom(r.Context())
			if !handshake(r) && !l.take(w, r, l.buyerBuckets(b), b.Key(), "for this buyer") {
				return
			}
		}
		next.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := shop.WithBuyer(r.Context(), shop.Buyer{Address: l.addr.of(r)})
		limited.ServeHTTP(w, r.WithContext(ctx))
	})
}

// A limit kept per client address holds too per IPv6 /48 (buckets.wide):
// take keys that tier by the request's network, and a buyer keyed by its
// address ("addr:…") by "addr:" and its network.

// buyerBuckets are the buckets of b's requests: a person's, or those of
// the addresses that name nobody.
func (l *limiter) buyerBuckets(b shop.Buyer) *buckets {
	if shop.IsHostUser(b.Key()) {
		return l.persons
	}
	return l.buyers
}

// take takes a token of key's bucket in bs, or answers 429 and reports false.
func (l *limiter) take(w http.ResponseWriter, r *http.Request, bs *buckets, key, who string) bool {
	if bs == nil {
		return true
	}
	now := time.Now()
	ok, wait, first := bs.allow(key, now)
	if ok && bs.wide != nil {
		if network := shop.BuyerFrom(r.Context()).Network(); network != "" {
			if strings.HasPrefix(key, addrPrefix) {
				network = addrPrefix + network
			}
			ok, wait, first = bs.wide.allow(network, now)
			who += " (and its /48 network)"
		}
	}
	if ok {
		return true
	}
	if first {
		l.logger.WarnContext(r.Context(), "rate limited", "limit", who, "key", key, "path", r.URL.Path)
	}
	if l.refused != nil {
		scope := "buyer"
		switch bs {
		case l.addresses:
			scope = "address"
		case l.feeds:
			scope = "feed"
		}
		l.refused(scope)
	}
	refuse(w, r, wait, who)
	return false
}

// refuse answers a rate-limited request: HTTP 429 with Retry-After, and on
// the MCP endpoints a JSON-RPC error (with the request's id) that tells the
// model how long to wait.
func refuse(w http.ResponseWriter, r *http.Request, wait time.Duration, who string) {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	msg := fmt.Sprintf("too many requests %s; wait %d %s and try again", who, secs, unit)
	if !isMCPPost(r) {
		http.Error(w, msg, http.StatusTooManyRequests)
		return
	}
	type rpcError struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]int `json:"data"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", rpcID(r.Context()), rpcError{rateLimitedCode, msg, map[string]int{"retry_after_seconds": secs}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(append(body, '\n'))
}
