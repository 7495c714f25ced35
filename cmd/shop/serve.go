package main

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/database"
	shopmetrics "shop/metrics"
	"shop/server"
)

func (m *Main) serve(ctx context.Context, args []string) error {
	cfg, err := m.parseFlags("serve", args, true, nil)
	if err != nil {
		return err
	}
	server.TuneGC(m.Getenv, m.Logger)
	if cfg.Pprof != "" {
		go server.ServePprof(ctx, cfg.Pprof, m.Logger)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (choose another with --addr)", cfg.Addr, err)
	}
	defer ln.Close()
	if cfg.PublicURL == "" {
		cfg.PublicURL = server.LocalURL(ln.Addr())
	}
	a, err := m.open(ctx, cfg, true)
	if err != nil {
		return err
	}
	defer a.close()
	metricsAddr, err := shopmetrics.ListenAddr(cfg.MetricsAddr, cfg.Addr)
	if err != nil {
		return err
	}
	metricsURL, err := a.metrics.Listen(ctx, metricsAddr, metricsHosts(cfg), m.Logger)
	if err != nil {
		return err
	}
	m.warnUnset(cfg)
	srv, err := a.httpServer(m)
	if err != nil {
		return err
	}
	m.Logger.Info("shop serving",
		"merchant", a.policy.Name,
		"listen", "http://"+ln.Addr().String(),
		"mcp", cfg.PublicURL+"/mcp",
		"acp", cfg.PublicURL+"/acp/mcp",
		"ucp", cfg.PublicURL+"/ucp/mcp",
		"database", database.Redact(cfg.DB),
		"schema_version", a.schema,
		"payments", fmt.Sprint(a.charger), // the provider's String: its name and mode
		"emails", a.emailsState(),
		"metrics", metricsURL)
	workers, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	runJobs(workers, a.jobs(m), m.Logger)
	if m.Started != nil {
		m.Started(ln.Addr().String())
	}
	return srv.Serve(ctx, ln)
}

// metricsHosts are the host names /metrics answers to beside localhost and
// IP addresses: the public URL's and the one --metrics-addr names.
func metricsHosts(cfg *Config) []string {
	var hosts []string
	if u, err := url.Parse(cfg.PublicURL); err == nil && u.Hostname() != "" {
		hosts = append(hosts, u.Hostname())
	}
	if h, _, err := net.SplitHostPort(cfg.MetricsAddr); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// warnUnset warns at start of what serve runs without.
func (m *Main) warnUnset(cfg *Config) {
	switch {
	case cfg.ACPOpen:
		m.Logger.Warn("--acp-open: /acp/mcp admits every caller without a token (their idempotency keys scoped by client address)")
	case len(cfg.AgentTokens) == 0:
		m.Logger.Info("SHOP_ACP_TOKENS is unset: /acp/mcp is closed (set SHOP_ACP_TOKENS=name:token, or start with --acp-open)")
	}
	if cfg.WidgetDomain == "" {
		m.Logger.Warn("SHOP_WIDGET_DOMAIN is unset: the widgets declare no domain (_meta.ui.domain); ChatGPT requires one, unique to the app, to submit it to its directory")
	}
	if len(cfg.AdminTokens) == 0 {
		m.Logger.Warn("SHOP_ADMIN_TOKENS is unset: /admin/mcp refuses everyone; `shop admin` serves the staff tools locally")
	}
}

// httpServer is the shop's HTTP server: every endpoint wired to its part.
func (a *app) httpServer(m *Main) (*server.Server, error) {
	dialect := a.ucpDialect(m)
	return server.New(server.Options{
		MCP:            a.buyerMCP(m),
		UCPMCP:         a.ucpMCP(m, dialect),
		UCPProfile:     dialect,
		UCPREST:        dialect.REST(),
		Static:         shop.DemoStatic, // the demo merchant's images and pages, under /static/
		Ready:          func(ctx context.Context) error { _, err := database.Ready(ctx, a.db); return err },
		PublicURL:      a.cfg.PublicURL,
		TrustedOrigins: a.cfg.TrustedOrigins,
		RateLimit:      rate.Limit(a.cfg.RateLimit),
		ClientIPHeader: a.cfg.ClientIPHeader,
		Logger:         m.Logger,
		RateLimited:    a.metrics.RateLimited,
		Receipts:       server.ReceiptHandler(a.orders, m.Logger),
		ReturnPage:     server.ReturnPageHandler(a.policy.Name, a.returns, a.policy.Currency().Format),
		Webhook:        server.StripeWebhook(a.cfg.StripeWebhookSecret, a.checkout, m.Logger),
		Pay:            server.PayPages(a.checkout, server.PayOptions{Shop: a.policy.Name, Logger: m.Logger}),
		Feed:           a.productFeed(m).Handler(),
		AdminMCP:       a.adminMCP(m, nil),
		AdminTokens:    a.cfg.AdminTokens,
		ACP:            a.acpMCP(m),
		AgentTokens:    a.cfg.AgentTokens,
		ACPDiscovery:   a.acp.DiscoveryHandler(a.cfg.PublicURL),
		Accounts:       a.accounts,

		// The rest of the rate limits (RateLimit, ClientIPHeader above).
		RateBurst:        a.cfg.RateBurst,
		PersonRateLimit:  rate.Limit(a.cfg.PersonRateLimit),
		PersonRateBurst:  a.cfg.PersonRateBurst,
		AddressRateLimit: rate.Limit(a.cfg.AddressRateLimit),
		AddressRateBurst: a.cfg.AddressRateBurst,
		TrustedProxyHops: a.cfg.TrustedProxyHops,
	})
}

// stdio serves the buyer tools over stdio.
func (m *Main) stdio(ctx context.Context, args []string) error {
	return m.overStdio(ctx, "stdio", args, func(a *app) *mcp.Server { return a.buyerMCP(m) })
}

// adminStdio serves the staff's tools over stdio with the owner role: the
// merchant on their own machine, against their own database.
func (m *Main) adminStdio(ctx context.Context, args []string) error {
	owner := &shop.Actor{Role: shop.Owner, Label: "local"}
	return m.overStdio(ctx, "admin", args, func(a *app) *mcp.Server { return a.adminMCP(m, owner) })
}

// overStdio opens the shop as the named subcommand's flags say and serves
// the MCP server build makes over the command's stdin and stdout.
func (m *Main) overStdio(ctx context.Context, name string, args []string, build func(*app) *mcp.Server) error {
	a, err := m.openLocal(ctx, name, args)
	if err != nil {
		return err
	}
	defer a.close()
	cfg := a.cfg
	m.Logger.Info("shop serving over stdio", "command", name, "merchant", a.policy.Name, "database", database.Redact(cfg.DB), "schema_version", a.schema)
	return build(a).Run(ctx, server.Stdio(m.Stdin, m.Stdout))
}

// openLocal opens the shop as the named subcommand's flags say, for a
// command run on the merchant's machine (the demo catalog seeds an empty
// database; the public URL defaults to the local one).
func (m *Main) openLocal(ctx context.Context, name string, args []string) (*app, error) {
	cfg, err := m.parseFlags(name, args, false, nil)
	if err != nil {
		return nil, err
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = catalog.DefaultPublicURL
	}
	return m.open(ctx, cfg, true)
}

func (m *Main) migrate(ctx context.Context, args []string) error {
	cfg, err := m.parseFlags("migrate", args, false, nil)
	if err != nil {
		return err
	}
	db, v, err := database.OpenMigrated(ctx, cfg.DB, &database.Options{Logger: m.Logger})
	if err != nil {
		return err
	}
	defer database.Close(db)
	fmt.Fprintf(m.Stdout, "%s: schema version %d\n", database.Redact(cfg.DB), v)
	return nil
}

func (m *Main) importCatalog(ctx context.Context, args []string) error {
	var files []string
	cfg, err := m.parseFlags("catalog import", args, false, &files)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return m.usageError("catalog import", "name one catalog file (the shop's JSON, or a Shopify or WooCommerce product CSV export)")
	}
	policy, err := checkout.OpenPolicy(cfg.PolicyFile)
	if err != nil {
		return err
	}
	src, err := catalog.ReadImportFile(files[0], catalog.ReadOptions{Currency: policy.Currency()})
	if err != nil {
		return err
	}
	a, err := m.open(ctx, cfg, false)
	if err != nil {
		return err
	}
	defer a.close()
	return a.catalog.ImportSource(ctx, src, catalog.ImportReport{From: files[0], Into: database.Redact(cfg.DB), Out: m.Stdout, Progress: m.Stderr})
}
