// Package server is the shop's HTTP surface: it assembles the MCP endpoints
// from the tools the business packages declare, serves the shop's static
// files and health checks, and hardens all of it (Host and Origin checks,
// body size limits, timeouts, per-buyer rate limits, no JSON-RPC batches).
// It is the one place where errors are translated for callers. Beside the
// endpoints: the serving process's collector settings (TuneGC), Go's
// profiles on a loopback listener of their own (ServePprof), and the stdio
// transport of `shop stdio` and `shop admin` (Stdio).
package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"shop/accounts"
	"shop/orders"
)

// Limits of the HTTP server (bodies: body.go); the timeouts are the
// defaults of Timeouts.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 2 * time.Minute
	shutdownTimeout   = 20 * time.Second
)

// Timeouts bound how long Serve waits on a client (the fields of
// http.Server of the same names); a zero field takes its default.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers (default 10s): a
	// client that sends them slower is cut off.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included (default 30s).
	Read time.Duration
	// Write bounds writing the response (default 60s).
	Write time.Duration
	// Idle bounds how long a kept-alive connection may wait for its next
	// request (default 2m).
	Idle time.Duration
}

// orDefaults returns t with its zero fields set to their defaults.
func (t Timeouts) orDefaults() Timeouts {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	return Timeouts{
		ReadHeader: or(t.ReadHeader, readHeaderTimeout),
		Read:       or(t.Read, readTimeout),
		Write:      or(t.Write, writeTimeout),
		Idle:       or(t.Idle, idleTimeout),
	}
}

// Options configure the HTTP server; nil fields take defaults.
type Options struct {
	// MCP is the buyers' MCP server, served statelessly at /mcp.
	MCP *mcp.Server
	// Static holds the files served under /static/.
	Static fs.FS
	// Ready reports whether the shop can serve (database reachable,
	// migrations applied); /readyz answers 503 with its error until it is nil.
	Ready func(context.Context) error
	// PublicURL is the shop's base URL; its host is accepted in Host headers
	// and its origin in Origin headers.
	PublicURL string
	// TrustedOrigins are further browser origins allowed to call /mcp
	// ("https://inspector.example.com").
	TrustedOrigins []string
	// PersonRateLimit and PersonRateBurst bound each person's requests per
	// second and at once (default DefaultPersonRateLimit,
	// DefaultPersonRateBurst): a person is a linked account, or the host's
	// user id the request's _meta carries (shop.IsHostUser of
	// shop.Buyer.Key). A negative PersonRateLimit turns only this limit off.
	PersonRateLimit rate.Limit
	PersonRateBurst int
	// RateLimit and RateBurst bound the requests of a client address that
	// name no person (default DefaultRateLimit, DefaultRateBurst): hosts
	// that send no user id, test suites, scripts. A negative RateLimit
	// turns every rate limit off, the others too.
	RateLimit rate.Limit
	RateBurst int
	// AddressRateLimit and AddressRateBurst bound each client address's
	// requests, whichever buyers they name, so that one address cannot make
	// up ids to escape RateLimit (default DefaultAddressRateLimit,
	// DefaultAddressRateBurst; a negative AddressRateLimit turns only this
	// backstop off). One host's address carries many buyers: keep it far
	// above RateLimit.
	AddressRateLimit rate.Limit
	AddressRateBurst int
	// FeedRateLimit and FeedRateBurst bound each client address's GETs of
	// the product feed, per second and at once, beside the limits above
	// (default DefaultFeedRateLimit, DefaultFeedRateBurst; a negative
	// FeedRateLimit turns only this limit off).
	FeedRateLimit rate.Limit
	FeedRateBurst int
	// NetworkMultiple is the second tier of every limit above that is kept
	// per client address: each also holds, at this many times its rate and
	// burst, over the IPv6 /48 the address's /64 lies in (shop.NetworkOf),
	// so that a provider's customer with a /48 is not 65,536 clients
	// (default shop.DefaultNetworkMultiple).
	NetworkMultiple int
	// ClientIPHeader names the header that carries the client's address
	// behind a proxy or load balancer ("X-Forwarded-For"); set it only when
	// such a proxy sets it, or clients could choose their own bucket.
	// TrustedProxyHops is how many proxies of the shop's own append to it
	// (default 1): the client address is that many entries from its right,
	// what the outermost trusted proxy saw; entries further left are the
	// client's own writing and never trusted.
	ClientIPHeader   string
	TrustedProxyHops int
	// RateLimited, when set, is told of every request refused with 429 and
	// which limit refused it ("buyer", "address" or "feed"), for the
	// operator's metrics.
	RateLimited func(scope string)
	// Logger receives access errors and server events.
	Logger *slog.Logger
	// Receipts, when set, serves the receipt pages GET /orders/{order_id}.
	Receipts http.Handler
	// ReturnPage, when set, serves the return policy page the shop makes
	// from its policy (GET orders.ReturnPagePath).
	ReturnPage http.Handler
	// Webhook, when set, serves POST /webhooks/stripe.
	Webhook http.Handler
	// Pay, when set, serves the payment pages under /pay/ (PayPages).
	Pay http.Handler
	// Feed, when set, serves the product feed GET /feeds/products.jsonl.
	Feed http.Handler
	// AdminMCP is the staff's MCP server, served at /admin/mcp to holders
	// of AdminTokens (nobody when there are none).
	AdminMCP    *mcp.Server
	AdminTokens []AdminToken
	// Timeouts bound how long Serve waits on clients; zero fields take the
	// defaults.
	Timeouts Timeouts
	// ACP is the Agentic Commerce Protocol's MCP server, served at /acp/mcp
	// to holders of AgentTokens (to anyone when there are none);
	// ACPDiscovery serves GET /.well-known/acp.json.
	ACP          *mcp.Server
	AgentTokens  []AgentToken
	ACPDiscovery http.Handler
	// UCPMCP, when set, is the Universal Commerce Protocol's MCP server,
	// served statelessly at /ucp/mcp; UCPProfile serves the business
	// profile at GET /.well-known/ucp, and an older release's at GET
	// /.well-known/ucp/{version}.
	UCPMCP     *mcp.Server
	UCPProfile http.Handler
	// UCPREST, when set, is UCP's REST binding, served under /ucp/v1/
	// behind the same limits as the MCP endpoints (the body's size and
	// depth, the rate limits).
	UCPREST http.Handler
	// Accounts, when set, is the buyers' authorization server: its
	// metadata, OAuth endpoints and login pages are served, and /mcp
	// checks bearer tokens with it (bearerAuth).
	Accounts *accounts.Server
}

// Server is the shop's HTTP server.
type Server struct {
	opts    Options
	logger  *slog.Logger
	handler http.Handler
}

// New assembles the HTTP server.
func New(opts Options) (*Server, error) {
	s := &Server{opts: opts, logger: opts.Logger}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.opts.Timeouts = opts.Timeouts.orDefaults()
	s.opts.rateDefaults()
	hosts, origins, err := allowed(opts.PublicURL, opts.TrustedOrigins)
	if err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	if opts.Receipts != nil {
		mux.Handle("GET /orders/{order_id}", pageHeaders(opts.PublicURL, opts.Receipts))
	}
	if opts.ReturnPage != nil {
		mux.Handle("GET "+orders.ReturnPagePath, pageHeaders(opts.PublicURL, opts.ReturnPage))
	}
	if opts.Webhook != nil {
		mux.Handle("POST /webhooks/stripe", opts.Webhook)
	}
	if opts.Pay != nil {
		mux.Handle("/pay/", pageHeaders(opts.PublicURL, opts.Pay))
	}
	if opts.Feed != nil {
		mux.Handle("GET "+feedPath, opts.Feed)
	}
	if opts.Static != nil {
		mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler(opts.Static)))
	}
	if opts.ACPDiscovery != nil {
		mux.Handle("GET /.well-known/acp.json", opts.ACPDiscovery)
	}

	if opts.Accounts != nil {
		h := pageHeaders(opts.PublicURL, opts.Accounts.Handler())
		for _, p := range accounts.Paths {
			mux.Handle(p, h)
		}
	}
	if opts.UCPProfile != nil {
		mux.Handle("GET /.well-known/ucp", opts.UCPProfile)
		mux.Handle("GET /.well-known/ucp/{version}", opts.UCPProfile) // an older release's profile
	}
	if opts.MCP != nil || opts.AdminMCP != nil || opts.ACP != nil || opts.UCPMCP != nil || opts.UCPREST != nil {
		cop := http.NewCrossOriginProtection()
		for _, o := range origins {
			if err := cop.AddTrustedOrigin(o); err != nil {
				return nil, fmt.Errorf("trusted origin %q: %w", o, err)
			}
		}
		cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "cross-origin request refused: this origin is not trusted by the shop", http.StatusForbidden)
		}))
		if opts.MCP != nil {
			var buyers http.Handler = s.streamable(opts.MCP)
			if opts.Accounts != nil {
				buyers = bearerAuth(opts.Accounts, buyers)
			}
			mux.Handle("/mcp", checkHost(hosts, cop.Handler(buyers)))
		}
		if opts.UCPMCP != nil {
			mux.Handle("/ucp/mcp", rpcErrors(checkHost(hosts, cop.Handler(acceptJSON(ucpStatus(s.streamable(opts.UCPMCP)))))))
		}
		if opts.UCPREST != nil {
			mux.Handle(ucpRESTPrefix, checkHost(hosts, cop.Handler(restBody(opts.UCPREST))))
		}
		if opts.AdminMCP != nil {
			mux.Handle("/admin/mcp", checkHost(hosts, cop.Handler(adminAuth(opts.AdminTokens, s.streamable(opts.AdminMCP)))))
		}
		if opts.ACP != nil {
			mux.Handle("/acp/mcp", checkHost(hosts, cop.Handler(agentAuth(opts.AgentTokens, s.streamable(opts.ACP)))))
		}
	}
	s.handler = recoverPanics(s.logger, securityHeaders(limitBody(s.limiter().handler(mux))))
	return s, nil
}

// streamable serves an MCP server over streamable HTTP, statelessly, so that
// replicas need no sticky sessions.
func (s *Server) streamable(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              quiet(s.logger),
		MaxRequestBodyBytes: MaxMCPBodyBytes,
		// Our own Host check covers every address, not only loopback.
		DisableLocalhostProtection: true,
	})
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves on ln until ctx is done, then shuts down gracefully, letting
// requests in flight finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.httpServer(ctx)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.logger.Info("shutting down", "grace", shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// httpServer is the net/http server that Serve runs, its requests' contexts
// derived from ctx without its cancellation.
func (s *Server) httpServer(ctx context.Context) *http.Server {
	t := s.opts.Timeouts
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.opts.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := s.opts.Ready(ctx); err != nil {
			s.logger.Warn("not ready", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready:", err)
			return
		}
	}
	fmt.Fprintln(w, "ready")
}

// allowed returns the Host names accepted on MCP endpoints (loopback names
// and the public URL's host) and the trusted browser origins.
func allowed(publicURL string, trusted []string) (hosts map[string]bool, origins []string, err error) {
	hosts = map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, nil, fmt.Errorf("public URL %q: send an absolute http(s) URL such as https://shop.example.com", publicURL)
		}
		hosts[strings.ToLower(u.Hostname())] = true
		origins = append(origins, u.Scheme+"://"+u.Host)
	}
	return hosts, append(origins, trusted...), nil
}

// checkHost refuses requests whose Host is not the shop's, so that a page on
// another site cannot reach a local shop through DNS rebinding.
func checkHost(hosts map[string]bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.Trim(strings.ToLower(host), "[]")
		if !hosts[host] {
			http.Error(w, "unknown Host: set SHOP_PUBLIC_URL to the URL clients use to reach the shop", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

func recoverPanics(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger.Error("handler panicked", "path", r.URL.Path, "panic", fmt.Sprint(p))
				http.Error(w, "internal error", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// staticHandler serves embedded files with a day of caching. SVG images get a
// CSP of their own so that a script in one could never run.
func staticHandler(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "" {
			http.NotFound(w, r) // no directory listings
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if strings.HasSuffix(r.URL.Path, ".svg") {
			w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		}
		files.ServeHTTP(w, r)
	})
}
