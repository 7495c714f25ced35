// Package webfetch fetches documents that callers name by URL (agent
// profiles, OAuth client metadata) without letting those callers reach
// anything but the public internet: https only, the address checked after
// name resolution on the connection actually dialed, no proxy, no
// redirects, bounded in size and time, and kept for what Cache-Control
// allows within bounds. Post sends webhooks (UCP's order events) under the
// same checks.
package webfetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Errors of CheckURL and Get, matched with errors.Is. Their text never
// carries what the target answered.
var (
	// ErrPrivateAddress: the host resolved to an address that is not public.
	ErrPrivateAddress = errors.New("webfetch: the host is not a public address")
	// ErrTooLarge: the body is larger than Options.MaxBytes.
	ErrTooLarge = errors.New("webfetch: the document is too large")
	// ErrStatus: the server answered something other than 200 (a
	// redirect included: none is followed).
	ErrStatus = errors.New("webfetch: the server did not answer 200")
	// ErrBadURL: the URL is not an absolute https URL without credentials.
	ErrBadURL = errors.New("webfetch: the URL is not acceptable")
	// ErrTimeout: the fetch took longer than allowed.
	ErrTimeout = errors.New("webfetch: the fetch took too long")
	// ErrBusy: no slot came free in time (for the host, its address or
	// the Fetcher): the target was not asked.
	ErrBusy = errors.New("webfetch: too many fetches under way; try again in a few seconds")
)

// URLError is CheckURL's refusal: Reason says what is wrong, as a phrase
// a caller can put after the name of its field ("must use https").
type URLError struct{ Reason string }

func (e *URLError) Error() string { return "webfetch: the URL " + e.Reason }

// Unwrap makes a URLError match ErrBadURL.
func (e *URLError) Unwrap() error { return ErrBadURL }

// Options bound a Fetcher; zero fields take the defaults in brackets.
type Options struct {
	// AllowLoopback lets URLs on loopback addresses be fetched, over http
	// too: for tests on one machine only.
	AllowLoopback bool
	MaxBytes      int64         // of a body [256 KiB]
	Timeout       time.Duration // of a whole fetch [5 s]
	MaxURLLen     int           // [2048]
	// HeaderTimeout bounds the wait for the response's headers once the
	// request is sent [2 s], so that a slow server is dropped early.
	HeaderTimeout time.Duration
	// MinTTL, MaxTTL and DefaultTTL bound Response.TTL [1 min, 1 h, 5 min].
	MinTTL, MaxTTL, DefaultTTL time.Duration
	// Slots bound the fetches under way at once [32]; PerHost and
	// PerAddress bound those to one host name [4] and to one address (an
	// IPv4 address or an IPv6 /64) [8], the address's share larger, for
	// the hosts a CDN or a hosting service puts on one address. A fetch
	// waits for its slots within Timeout.
	Slots, PerHost, PerAddress int
}

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 256 << 10
	}
	if o.MaxURLLen <= 0 {
		o.MaxURLLen = 2048
	}
	for _, n := range []struct {
		v *int
		d int
	}{{&o.Slots, 32}, {&o.PerHost, 4}, {&o.PerAddress, 8}} {
		if *n.v <= 0 {
			*n.v = n.d
		}
	}
	def(&o.Timeout, 5*time.Second)
	def(&o.HeaderTimeout, 2*time.Second)
	def(&o.MinTTL, time.Minute)
	def(&o.MaxTTL, time.Hour)
	def(&o.DefaultTTL, 5*time.Minute)
	return o
}

// Fetcher fetches public documents; it is safe for concurrent use.
type Fetcher struct {
	opts   Options
	client *http.Client

	slots            chan struct{}
	hosts, addresses *shares
}

// Response is a fetched document.
type Response struct {
	Body   []byte
	Header http.Header
	// TTL is how long the document may be kept: Cache-Control's max-age,
	// DefaultTTL without one, within [MinTTL, MaxTTL].
	TTL time.Duration
}

// New returns a Fetcher bounded by o.
func New(o Options) *Fetcher {
	f := &Fetcher{opts: o.withDefaults()}
	f.slots = make(chan struct{}, f.opts.Slots)
	f.hosts, f.addresses = newShares(f.opts.PerHost), newShares(f.opts.PerAddress)
	dialer := &net.Dialer{Timeout: f.opts.Timeout, Control: f.checkAddress}
	f.client = &http.Client{
		Timeout: f.opts.Timeout,
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would dial for us, past checkAddress
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   f.opts.Timeout,
			ResponseHeaderTimeout: f.opts.HeaderTimeout,
			MaxIdleConns:          16,
			IdleConnTimeout:       time.Minute,
		},
		// A redirect is not followed: the caller's URL is the document's.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return f
}

// checkAddress refuses to connect anywhere but a public unicast address
// (a loopback one too, when allowed): it runs on the address actually
// dialed, after name resolution, so a name that resolves to a private
// address is refused as well.
func (f *Fetcher) checkAddress(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	if !f.allowed(ip) {
		return fmt.Errorf("%w: %s", ErrPrivateAddress, ip)
	}
	return nil
}

// allowed reports whether ip may be connected to.
func (f *Fetcher) allowed(ip netip.Addr) bool {
	return Public(ip) || (f.opts.AllowLoopback && ip.Unmap().IsLoopback())
}

// CheckURL accepts an absolute https URL without credentials (http on
// loopback when allowed) and returns it without its fragment; a refusal
// is a *URLError.
func (f *Fetcher) CheckURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, &URLError{"is missing"}
	}
	if len(raw) > f.opts.MaxURLLen {
		return nil, &URLError{fmt.Sprintf("is longer than %d characters", f.opts.MaxURLLen)}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return nil, &URLError{"must be an absolute https URL without credentials"}
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && f.opts.AllowLoopback && loopbackHost(u.Hostname()):
	default:
		return nil, &URLError{"must use https"}
	}
	u.Fragment = ""
	return u, nil
}

// Get fetches rawURL with the given Accept header. Errors wrap
// ErrBadURL, ErrPrivateAddress, ErrBusy, ErrTimeout, ErrStatus or
// ErrTooLarge, or are some other failure to connect or read.
func (f *Fetcher) Get(ctx context.Context, rawURL, accept string) (*Response, error) {
	u, err := f.CheckURL(rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	release, err := f.acquireAll(ctx, u.Hostname())
	if err != nil {
		return nil, err
	}
	defer release()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &URLError{"cannot be fetched"}
	}
	req.Header.Set("Accept", accept)
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, f.doError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, ErrStatus
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	if err != nil {
		return nil, f.doError(ctx, err)
	}
	if int64(len(body)) > f.opts.MaxBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, f.opts.MaxBytes)
	}
	return &Response{Body: body, Header: resp.Header, TTL: f.TTL(resp.Header.Get("Cache-Control"))}, nil
}

// doError classifies a failure to get or read a response.
func (f *Fetcher) doError(ctx context.Context, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, ErrPrivateAddress):
		return ErrPrivateAddress
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return ErrTimeout
	}
	return fmt.Errorf("webfetch: could not fetch: %w", err)
}

// TTL is how long a document whose Cache-Control header is cc may be
// kept: its max-age, DefaultTTL without one, within [MinTTL, MaxTTL].
func (f *Fetcher) TTL(cc string) time.Duration {
	ttl := f.opts.DefaultTTL
	for _, d := range strings.Split(cc, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(strings.ToLower(d)), "=")
		if k == "max-age" {
			if n, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64); err == nil && n >= 0 {
				ttl = time.Duration(min(n, int64(f.opts.MaxTTL/time.Second)+1)) * time.Second
			}
		}
	}
	return min(max(ttl, f.opts.MinTTL), f.opts.MaxTTL)
}

// Post sends body to rawURL with header, under the checks and bounds of
// Get (https, public addresses, no redirects, bounded time), for a
// webhook: it returns nil when the server answered 2xx, else an error
// wrapping ErrStatus (with the status), ErrBadURL, ErrPrivateAddress,
// ErrBusy or ErrTimeout. The answer's body is read up to MaxBytes and
// dropped.
func (f *Fetcher) Post(ctx context.Context, rawURL string, header http.Header, body []byte) error {
	u, err := f.CheckURL(rawURL)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	release, err := f.acquireAll(ctx, u.Hostname())
	if err != nil {
		return err
	}
	defer release()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return &URLError{"cannot be posted to"}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return f.doError(ctx, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, f.opts.MaxBytes))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%w: %d", ErrStatus, resp.StatusCode)
	}
	return nil
}
