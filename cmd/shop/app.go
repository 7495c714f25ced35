package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gorm.io/gorm"

	"shop"
	"shop/accounts"
	"shop/acp"
	"shop/catalog"
	"shop/checkout"
	"shop/database"
	"shop/idempotency"
	shopmetrics "shop/metrics"
	"shop/notify"
	"shop/orders"
	"shop/payments"
	"shop/server"
	"shop/ucp"
	"shop/webfetch"
	"shop/widgets"
)

// app is the shop wired together: policy, database and the parts of the business.
type app struct {
	cfg         *Config
	policy      *checkout.Policy
	db          *gorm.DB
	schema      int64
	catalog     *catalog.Catalog
	checkout    *checkout.Checkout
	orders      *orders.Orders
	admin       *orders.Admin
	returns     *orders.Returns
	accountData *accounts.Data
	charger     checkout.Charger
	acp         *acp.ACP
	idem        *idempotency.Store
	// accounts is the buyers' authorization server (docs/accounts.md).
	accounts *accounts.Server
	// signingKey is the shop's ECDSA P-256 key (the UCP profile's keys[]).
	signingKey *ecdsa.PrivateKey
	// mailer delivers the buyer's emails; nil when the shop sends none.
	mailer *notify.Worker
	// metrics are the operator's (served by serve on --metrics-addr).
	metrics *shopmetrics.Metrics
}

// open loads the policy, opens and migrates the database and, when seed is
// set, imports the demo catalog into an empty one.
func (m *Main) open(ctx context.Context, cfg *Config, seed bool) (_ *app, err error) {
	policy, err := checkout.OpenPolicy(cfg.PolicyFile)
	if err != nil {
		return nil, err
	}
	policy.Limits.HostAddresses = append(policy.Limits.HostAddresses, cfg.HostAddresses...)
	if cfg.RateLimit < 0 {
		policy.Limits.NoHourlyCaps() // "no rate limits at all"
	}
	db, schema, err := database.OpenMigrated(ctx, cfg.DB, &database.Options{Logger: m.Logger})
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, policy: policy, db: db, schema: schema}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	if err = a.wire(ctx, m); err != nil {
		return nil, err
	}
	if err = a.catalog.Prepare(ctx, seed, m.Logger); err != nil {
		return nil, err
	}
	return a, nil
}

// wire builds the parts of the business on the open database.
func (a *app) wire(ctx context.Context, m *Main) error {
	cfg := a.cfg
	key, err := orders.LoadReceiptKey(ctx, a.db, cfg.ReceiptKey)
	if err != nil {
		return err
	}
	if a.signingKey, err = orders.LoadSigningKey(ctx, a.db, cfg.SigningKey); err != nil {
		return err
	}
	if cfg.Stripe.SecretKey == "" {
		if a.policy.PaymentMode == checkout.PaymentLive {
			return errors.New("payment_mode is live but STRIPE_SECRET_KEY is unset; set a live key, or use payment_mode: test")
		}
		a.charger = payments.NewSandbox(a.db, nil)
	} else {
		o := cfg.Stripe
		o.Mode, o.Logger = payments.Mode(a.policy.PaymentMode), m.Logger
		if a.charger, err = payments.NewStripe(o); err != nil {
			return err
		}
	}
	a.metrics = a.newMetrics() // its sources are read at scrapes, once everything below is wired
	if err := a.db.Use(&database.Counter{Statement: a.metrics.Statement, Commit: a.metrics.Commit}); err != nil {
		return err
	}
	a.catalog = catalog.New(a.db, a.policy.Currency(), &catalog.Options{PublicURL: cfg.PublicURL})
	a.orders = orders.New(a.db, &orders.Options{PublicURL: cfg.PublicURL, ReceiptKey: key, Emails: a.emails(m),
		PaymentAttempts: checkout.PaymentAttempts})
	a.accounts, err = accounts.New(a.db, accounts.Options{
		PublicURL: cfg.PublicURL, Key: key, Shop: a.policy.Name, Logger: m.Logger, Emails: a.mailer != nil,
		Fetch: webfetch.New(webfetch.Options{AllowLoopback: cfg.AccountsAllowLoopback, MaxBytes: 64 << 10}),
	})
	if err != nil {
		return err
	}
	refunder, ok := a.charger.(orders.Refunder)
	if !ok {
		return fmt.Errorf("payment provider %s cannot refund", a.charger.Name())
	}
	a.admin = orders.NewAdmin(a.orders, a.catalog, refunder)
	a.returns = orders.NewReturns(a.admin, a.policy.Returns)
	linker, _ := a.charger.(checkout.Linker) // Stripe hosts payment pages; the sandbox's page is the shop's own
	var wallet *payments.Wallet              // linked buyers' saved cards, kept with the provider
	if v, ok := a.charger.(payments.Vault); ok {
		wallet = payments.NewWallet(a.db, v)
	}
	a.idem = idempotency.New(a.db)
	if cfg.RateLimit < 0 { // "no rate limits at all": nor a budget of new idempotency keys
		a.idem = a.idem.WithKeysPerHour(math.MaxInt)
	}
	a.checkout = checkout.New(a.db, a.policy, a.catalog, &checkout.Options{
		PublicURL: cfg.PublicURL, TTL: cfg.SessionTTL, Logger: m.Logger,
		Orders: a.orders, Charger: a.charger, Charged: a.countCharge, ReconcileGrace: cfg.ReconcileGrace, Fault: m.fault(cfg.Fault),
		Linker: linker, LinkKey: key, Wallet: walletOf(wallet),
		SessionMoved: a.metrics.SessionMoved,
		AccountAddress: func(ctx context.Context, id string) (*checkout.Address, error) {
			return a.accountData.DefaultAddress(ctx, id)
		},
		SaveAddress: func(ctx context.Context, tx *gorm.DB, id string, addr checkout.Address) error {
			return a.accountData.SaveOrderAddress(ctx, tx, id, addr)
		},
	})
	a.accountData = accounts.NewData(a.db, a.orders, accounts.DataOptions{CheckAddress: a.checkout.CheckAddress, Wallet: wallet, Logger: m.Logger,
		EndSessions: a.checkout.EndAccountSessions})
	a.acp, err = acp.New(a.checkout, a.idem, acp.Options{Currency: a.policy.Currency().Code(), SigningKeys: cfg.ACPSigningKeys})
	return err
}

// emails configures the buyer's emails when both the policy's From address
// and an SMTP server are set, with the worker that delivers them; else nil.
func (a *app) emails(m *Main) *orders.Emails {
	e := a.policy.Emails
	if e.From == "" || a.cfg.SMTP == nil {
		return nil
	}
	a.mailer = notify.NewWorker(a.db, a.cfg.SMTP, e.From, &notify.WorkerOptions{Logger: m.Logger})
	return &orders.Emails{Shop: a.policy.Name, Support: e.Support, StaffCopy: e.StaffCopy, Logger: m.Logger}
}

// emailsState describes the buyer's emails for the start-up log.
func (a *app) emailsState() string {
	switch {
	case a.mailer != nil:
		return "from " + a.policy.Emails.From + " through " + a.cfg.SMTP.String()
	case a.cfg.SMTP == nil:
		return "off: SHOP_SMTP_URL is unset"
	default:
		return "off: the policy has no emails.from"
	}
}

// fault returns, when SHOP_TEST_FAULT names a point of completion, the hook
// that ends the process there: the crash tests' way to stop between a
// charge and its order. Never set it in production.
func (m *Main) fault(point string) func(string) {
	if point == "" {
		return nil
	}
	return func(at string) {
		if at == point {
			m.Logger.Error("SHOP_TEST_FAULT: ending the process", "at", at)
			os.Exit(3)
		}
	}
}

func (a *app) close() {
	_ = database.Close(a.db)
}

// mcpServer is one of the shop's MCP servers, as o says, with the
// binary's version and logger and its tool calls counted under its name.
func (a *app) mcpServer(m *Main, o server.MCPOptions) *mcp.Server {
	o.Version, o.Logger, o.Observe = version(), m.Logger, a.metrics.ToolObserver(o.Name)
	return server.NewMCP(o)
}

// buyerMCP is the MCP server of the buyers' tools.
func (a *app) buyerMCP(m *Main) *mcp.Server {
	w := widgets.New(a.checkout, a.catalog, &widgets.Options{PublicURL: a.cfg.PublicURL, Logger: m.Logger,
		Domain: a.cfg.WidgetDomain, RedirectDomains: a.redirectDomains(), ProductCheckout: a.policy.ProductCheckout})
	return a.mcpServer(m, server.MCPOptions{Name: "shop", Title: a.policy.Name, Resources: w.Resources(),
		Instructions: w.Instructions(a.policy.Name, a.policy.Currency().Code()),
		Challenge:    func(scopes []string) string { return a.accounts.Challenge("insufficient_scope", scopes) },
		Tools:        slices.Concat(a.catalog.Tools(), a.checkout.Tools(), a.orders.Tools(), a.returns.Tools(), a.accountData.Tools(), w.Tools())})
}

// acpMCP is the MCP server of the ACP binding (/acp/mcp).
func (a *app) acpMCP(m *Main) *mcp.Server {
	return a.mcpServer(m, server.MCPOptions{Name: "shop-acp", Title: a.policy.Name + " (Agentic Commerce Protocol)",
		Instructions: a.acp.Instructions(a.policy.Name), Tools: a.acp.Tools()})
}

// ucpDialect is the Universal Commerce Protocol's dialect of the shop.
func (a *app) ucpDialect(m *Main) *ucp.UCP {
	tokens, brands := payments.TestMethods()
	return ucp.New(ucp.Options{
		Checkout: a.checkout, Catalog: a.catalog, Orders: a.orders, Idempotency: a.idem, PublicURL: a.cfg.PublicURL,
		Sandbox: a.charger.Name() == "sandbox", TestTokens: tokens, CardBrands: brands,
		AllowLoopbackProfiles: a.cfg.UCPAllowLoopback, SigningKey: a.signingKey, Logger: m.Logger,
		ReturnPolicy: ucp.ReturnPolicy{Description: a.returns.Summary(), URL: a.returnPageURL()},
	})
}

// returnPageURL is the address of the return policy page: the merchant's
// own, or the one the shop makes from the policy.
func (a *app) returnPageURL() string {
	u := a.policy.Links.ReturnPolicy
	if u == "" {
		u = orders.ReturnPagePath
	}
	if strings.HasPrefix(u, "/") {
		u = strings.TrimRight(a.cfg.PublicURL, "/") + u
	}
	return u
}

// ucpMCP is the MCP server of the UCP dialect's tools, at /ucp/mcp.
func (a *app) ucpMCP(m *Main, u *ucp.UCP) *mcp.Server {
	return a.mcpServer(m, server.MCPOptions{Name: "shop-ucp", Title: a.policy.Name + " (UCP)",
		Instructions: u.Instructions(a.policy.Name, a.policy.Currency().Code()), Tools: u.Tools()})
}

// redirectDomains are the origins, beside the shop's own, of the pages the
// widgets open: Stripe Checkout's when Stripe hosts the payment pages, and
// the legal pages' hosts.
func (a *app) redirectDomains() []string {
	var out []string
	if _, ok := a.charger.(checkout.Linker); ok {
		out = append(out, payments.CheckoutOrigin)
	}
	return append(out, a.policy.Links.HTTPS()...)
}

// adminMCP is the MCP server of the staff's tools; actor, when set, is who
// every caller is (`shop admin`), otherwise each caller's token says.
func (a *app) adminMCP(m *Main, actor *shop.Actor) *mcp.Server {
	return a.mcpServer(m, server.MCPOptions{Name: "shop-admin", Title: a.policy.Name + " (staff)", Actor: actor,
		Instructions: a.admin.Instructions(a.policy.Name, a.policy.Currency().Code()), Tools: slices.Concat(a.admin.Tools(), a.returns.AdminTools(), a.accountData.AdminTools())})
}

// version is the module version the binary was built from, or "dev".
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// walletOf is w as checkout's Wallet: nil (no wallet) when w is nil.
func walletOf(w *payments.Wallet) checkout.Wallet {
	if w == nil {
		return nil
	}
	return w
}
