package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"shop/acp"
	"shop/checkout"
	"shop/feed"
	"shop/notify"
	"shop/payments"
	"shop/server"
	"shop/widgets"
)

// Config is everything the shop reads from flags and the environment; no
// other package reads either, but what Main hands them (the MCP clients'
// arguments to purchase.Command and bench.Command; Getenv to those and to
// server.TuneGC).
type Config struct {
	Addr       string
	DB         string
	PolicyFile string // "" selects the built-in demo merchant
	PublicURL  string
	// WidgetDomain is the widgets' domain in the host (SHOP_WIDGET_DOMAIN;
	// _meta.ui.domain and openai/widgetDomain): ChatGPT needs one, unique
	// per app, to list the app in its directory. "" sends none.
	WidgetDomain string

	TrustedOrigins []string
	// PersonRateLimit and PersonRateBurst bound each person's requests (a
	// host's user id or a linked account) per second and at once (negative
	// PersonRateLimit: no such limit). RateLimit and RateBurst bound those
	// of a client address that names no person; a negative RateLimit turns
	// every rate limit off. AddressRateLimit and AddressRateBurst are the
	// per-address backstop (negative: none).
	PersonRateLimit  float64
	PersonRateBurst  int
	RateLimit        float64
	RateBurst        int
	AddressRateLimit float64
	AddressRateBurst int
	// ClientIPHeader names the header a proxy appends the client's address
	// to; TrustedProxyHops is how many proxies of the shop's append to it.
	ClientIPHeader   string
	TrustedProxyHops int
	// SessionTTL is how long a checkout session holds its stock after its
	// last change.
	SessionTTL time.Duration
	// ReconcileGrace is how long a payment may stay unsettled before the
	// reconciler asks the provider about it.
	ReconcileGrace time.Duration
	// Fault names a point of completion where the process ends, for the
	// crash tests only (SHOP_TEST_FAULT).
	Fault string
	// AccountsAllowLoopback lets OAuth clients' metadata documents be
	// fetched from loopback addresses, over http too: for tests on one
	// machine only (SHOP_ACCOUNTS_TEST_ALLOW_LOOPBACK=true).
	AccountsAllowLoopback bool
	// Pprof, when set, is a loopback address serving Go's profiles (SHOP_PPROF).
	Pprof string
	// UCPAllowLoopback lets /ucp/mcp fetch agents' profiles over http from
	// loopback addresses (SHOP_UCP_TEST_ALLOW_LOOPBACK=true): for tests on
	// one machine only.
	UCPAllowLoopback bool

	// Stripe is what the environment says of the Stripe provider:
	// STRIPE_SECRET_KEY (unset: the sandbox), STRIPE_API_BASE
	// (stripe-mock's or an emulator's in tests), STRIPE_SPT_PARAM and
	// STRIPE_SPT_VERSION (Stripe's preview API moves, and a merchant follows
	// it without a new build). The wiring adds the policy's mode.
	Stripe              payments.StripeOptions
	StripeWebhookSecret string
	// AdminTokens are SHOP_ADMIN_TOKENS parsed into their hashes (serve
	// only); the variable's text itself is kept nowhere.
	AdminTokens []server.AdminToken
	// AgentTokens are SHOP_ACP_TOKENS parsed into their hashes (serve
	// only): the agents admitted to /acp/mcp, with server.OpenToAll when
	// ACPOpen; none: /acp/mcp is closed.
	AgentTokens []server.AgentToken
	// ACPOpen (--acp-open) admits callers without a token to /acp/mcp.
	ACPOpen bool
	// ACPSigningKeys are SHOP_ACP_SIGNING_KEYS: the keys agents sign their
	// calls with, by agent name.
	ACPSigningKeys map[string][]byte
	ReceiptKey     string
	// SigningKey is SHOP_SIGNING_KEY: the PEM of the ECDSA P-256 key the
	// UCP profile publishes (keys[]); generated and kept in the database
	// when unset (orders.LoadSigningKey).
	SigningKey string
	// SMTP is the server the buyer's emails go through (SHOP_SMTP_URL); nil:
	// the shop sends none.
	SMTP *notify.SMTP
	// MetricsAddr is where serve answers /metrics (--metrics-addr): "" for
	// the loopback port after --addr's, "off" for nowhere.
	MetricsAddr string
	// FeedRefresh is how long GET /feeds/products.jsonl serves a feed
	// before it reads the availability again (--feed-refresh).
	FeedRefresh time.Duration
	// WebhookBackoff is the wait after an order webhook's first failed
	// delivery; it doubles with each failure, up to an hour.
	WebhookBackoff time.Duration
	// HostAddresses are AI hosts' egress ranges (--host-addresses
	// CIDR:units,…), added to the policy's limits.host_addresses.
	HostAddresses []checkout.HostAddress
}

// Defaults of the command line.
const (
	DefaultAddr = "127.0.0.1:8000"
	DefaultDB   = "shop.db"
)

// parseFlags reads a subcommand's flags and the environment into a Config.
// withAddr adds --addr; positional receives the arguments left after flags.
func (m *Main) parseFlags(name string, args []string, withAddr bool, positional *[]string) (*Config, error) {
	cfg := &Config{}
	fs := flag.NewFlagSet("shop "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if withAddr {
		fs.StringVar(&cfg.Addr, "addr", DefaultAddr, "listen address")
		fs.BoolVar(&cfg.ACPOpen, "acp-open", false, "admit callers without an agent token to /acp/mcp (closed without SHOP_ACP_TOKENS otherwise)")
		fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "where /metrics listens (default: 127.0.0.1 and the port after --addr's; off: nowhere)")
		fs.Func("host-addresses", "an AI host's egress ranges and what their buyers may hold in all, CIDR:units, comma-separated (docs/limits.md)", func(s string) error {
			h, err := checkout.ParseHostAddresses(s)
			cfg.HostAddresses = append(cfg.HostAddresses, h...)
			return err
		})
	}
	fs.StringVar(&cfg.DB, "db", DefaultDB, "SQLite file path or postgres:// URL")
	fs.StringVar(&cfg.PolicyFile, "config", "", "merchant policy YAML file")
	origins := fs.String("trusted-origins", "", "comma-separated browser origins allowed to call /mcp")
	fs.Float64Var(&cfg.PersonRateLimit, "person-rate-limit", server.DefaultPersonRateLimit, "requests per second per person (a host's user id or a linked account); negative: no such limit")
	fs.IntVar(&cfg.PersonRateBurst, "person-rate-burst", server.DefaultPersonRateBurst, "requests at once per person")
	fs.Float64Var(&cfg.RateLimit, "rate-limit", server.DefaultRateLimit, "requests per second per client address naming no person; negative: no rate limits at all")
	fs.IntVar(&cfg.RateBurst, "rate-burst", server.DefaultRateBurst, "requests at once per client address naming no person")
	fs.Float64Var(&cfg.AddressRateLimit, "address-rate-limit", server.DefaultAddressRateLimit, "requests per second per client address, whatever buyers they name; negative: no such backstop")
	fs.IntVar(&cfg.AddressRateBurst, "address-rate-burst", server.DefaultAddressRateBurst, "requests at once per client address")
	fs.StringVar(&cfg.ClientIPHeader, "client-ip-header", "", "header your proxy appends the client's address to, e.g. X-Forwarded-For")
	fs.IntVar(&cfg.TrustedProxyHops, "trusted-proxy-hops", 1, "how many proxies of yours append to --client-ip-header: the client is that many entries from its right")
	fs.DurationVar(&cfg.SessionTTL, "session-ttl", checkout.DefaultTTL, "how long a checkout session holds its stock after its last change")
	fs.DurationVar(&cfg.FeedRefresh, "feed-refresh", feed.DefaultRefresh, "how long the served product feed keeps its availability before reading it again")
	fs.DurationVar(&cfg.WebhookBackoff, "webhook-backoff", 30*time.Second, "how long an order webhook the platform did not take waits before its second try (doubling with each failure, up to an hour)")
	fs.DurationVar(&cfg.ReconcileGrace, "reconcile-grace", checkout.DefaultReconcileGrace, "how long a payment may stay unsettled before the reconciler asks the provider")
	// Flags may come before or after the positional arguments.
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, m.usageError(name, err.Error())
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if positional != nil {
		*positional = rest
	} else if len(rest) > 0 {
		return nil, m.usageError(name, fmt.Sprintf("unexpected argument %q", rest[0]))
	}
	if *origins != "" {
		cfg.TrustedOrigins = strings.Split(*origins, ",")
	}
	if withAddr {
		if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
			return nil, fmt.Errorf("--addr %q: send host:port, such as 127.0.0.1:8000 or :8000", cfg.Addr)
		}
	}
	if err := m.readEnv(cfg, withAddr); err != nil {
		return nil, err
	}
	if err := cfg.checkRateLimits(); err != nil {
		return nil, err
	}
	if cfg.SessionTTL < time.Minute || cfg.SessionTTL > 24*time.Hour {
		return nil, fmt.Errorf("--session-ttl %s: send a duration from 1m to 24h, such as 30m", cfg.SessionTTL)
	}
	if cfg.FeedRefresh < time.Second || cfg.FeedRefresh > time.Hour {
		return nil, fmt.Errorf("--feed-refresh %s: send a duration from 1s to 1h, such as 1m", cfg.FeedRefresh)
	}
	if cfg.DB == "" {
		return nil, errors.New("--db: send a SQLite file path or a postgres:// URL")
	}
	return cfg, nil
}

// readEnv reads the environment into cfg; serving (withAddr) adds the
// tokens of /admin/mcp and /acp/mcp, hashed here, once, so that the
// variables' text goes out of scope with this call.
func (m *Main) readEnv(cfg *Config, serving bool) error {
	cfg.PublicURL = strings.TrimRight(m.Getenv("SHOP_PUBLIC_URL"), "/")
	domain, err := widgets.ParseDomain(m.Getenv("SHOP_WIDGET_DOMAIN"))
	if err != nil {
		return err
	}
	cfg.WidgetDomain = domain
	cfg.Stripe = payments.StripeOptions{SecretKey: m.Getenv("STRIPE_SECRET_KEY"), APIBase: m.Getenv("STRIPE_API_BASE"),
		SPTParam: m.Getenv("STRIPE_SPT_PARAM"), SPTVersion: m.Getenv("STRIPE_SPT_VERSION")}
	cfg.StripeWebhookSecret = m.Getenv("STRIPE_WEBHOOK_SECRET")
	if err := payments.CheckSPT(cfg.Stripe.SPTParam, cfg.Stripe.SPTVersion); err != nil {
		return err
	}
	cfg.ReceiptKey = m.Getenv("SHOP_RECEIPT_KEY")
	cfg.SigningKey = m.Getenv("SHOP_SIGNING_KEY")
	if raw := m.Getenv("SHOP_SMTP_URL"); raw != "" {
		smtp, err := notify.ParseSMTPURL(raw)
		if err != nil {
			return fmt.Errorf("SHOP_SMTP_URL: %w", err)
		}
		cfg.SMTP = smtp
	}
	cfg.Fault = m.Getenv("SHOP_TEST_FAULT")
	cfg.Pprof = m.Getenv("SHOP_PPROF")
	cfg.UCPAllowLoopback = m.Getenv("SHOP_UCP_TEST_ALLOW_LOOPBACK") == "true"
	cfg.AccountsAllowLoopback = m.Getenv("SHOP_ACCOUNTS_TEST_ALLOW_LOOPBACK") == "true"
	if serving {
		tokens, err := server.ParseAdminTokens(m.Getenv("SHOP_ADMIN_TOKENS"))
		if err != nil {
			return err
		}
		cfg.AdminTokens = tokens
		if cfg.AgentTokens, err = server.ParseAgentTokens(m.Getenv("SHOP_ACP_TOKENS")); err != nil {
			return err
		}
		if err := cfg.acpKeys(m.Getenv("SHOP_ACP_SIGNING_KEYS")); err != nil {
			return err
		}
		if cfg.ACPOpen {
			cfg.AgentTokens = append(cfg.AgentTokens, server.OpenToAll())
		}
	}
	return nil
}

// acpKeys reads the agents' signing keys, each of an agent of
// SHOP_ACP_TOKENS.
func (cfg *Config) acpKeys(env string) error {
	keys, err := acp.ParseSigningKeys(env)
	if err != nil {
		return err
	}
	for name := range keys {
		if !slices.ContainsFunc(cfg.AgentTokens, func(t server.AgentToken) bool { return t.Agent == name }) {
			return fmt.Errorf("SHOP_ACP_SIGNING_KEYS: agent %s has no token in SHOP_ACP_TOKENS", name)
		}
	}
	cfg.ACPSigningKeys = keys
	return nil
}

// checkRateLimits refuses rate-limit flags that would refuse every request
// or name no client.
func (cfg *Config) checkRateLimits() error {
	switch {
	case cfg.RateLimit == 0:
		return errors.New("--rate-limit 0 would refuse every request: send a positive number, or a negative one for no limit")
	case cfg.PersonRateLimit == 0:
		return errors.New("--person-rate-limit 0 would refuse every request: send a positive number, or a negative one for no limit")
	case cfg.PersonRateBurst < 1:
		return fmt.Errorf("--person-rate-burst %d: send at least 1", cfg.PersonRateBurst)
	case cfg.AddressRateLimit == 0:
		return errors.New("--address-rate-limit 0 would refuse every request: send a positive number, or a negative one for no backstop")
	case cfg.RateBurst < 1:
		return fmt.Errorf("--rate-burst %d: send at least 1", cfg.RateBurst)
	case cfg.AddressRateBurst < 1:
		return fmt.Errorf("--address-rate-burst %d: send at least 1", cfg.AddressRateBurst)
	case cfg.TrustedProxyHops < 1 || cfg.TrustedProxyHops > 16:
		return fmt.Errorf("--trusted-proxy-hops %d: send the number of your proxies in front of the shop, from 1 to 16", cfg.TrustedProxyHops)
	case cfg.TrustedProxyHops != 1 && cfg.ClientIPHeader == "":
		return errors.New("--trusted-proxy-hops counts entries of --client-ip-header: set that header too")
	}
	return nil
}
