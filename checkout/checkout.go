// Package checkout turns a buyer's wish into a priced checkout session: the
// merchant policy (links, shipping, tax, promotions), pricing, stock holds and
// completion.
//
// Every write to a session is a conditional update on its version, inside one
// transaction with the stock holds it takes or releases; a writer that loses
// a race retries on the fresh state. Nothing is kept in memory, so any number
// of replicas may serve the same sessions.
package checkout

import (
	"context"
	"crypto/rand"
	"log/slog"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop/catalog"
	"shop/orders"
)

// Defaults of a Checkout.
const (
	DefaultTTL   = 30 * time.Minute
	DefaultSweep = time.Minute
	// DefaultReconcileGrace is how long a payment attempt may stay open
	// before the reconciler asks the provider about it: longer than any
	// charge call with its retries takes.
	DefaultReconcileGrace = 5 * time.Minute
	MaxLines              = 50
	MaxQuantity           = 999
	conflictRetries       = 5
)

// Checkout keeps the shop's checkout sessions.
type Checkout struct {
	db        *gorm.DB
	policy    *Policy
	catalog   *catalog.Catalog
	publicURL string
	ttl       time.Duration
	now       func() time.Time
	logger    *slog.Logger

	orders  *orders.Orders
	charger Charger
	grace   time.Duration
	fault   func(point string)
	linker  Linker
	linkKey []byte
	refunds func(context.Context) (int, error)
}

// Options configure a Checkout; zero fields take defaults.
type Options struct {
	// PublicURL resolves the policy's links that are paths ("/static/…").
	PublicURL string
	// TTL is how long a session, and the stock it holds, lives after its
	// last change (default 30 minutes).
	TTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives the sweeper's and the reconciler's lines.
	Logger *slog.Logger
	// Orders keeps the orders completed sessions become.
	Orders *orders.Orders
	// Charger is the payment provider.
	Charger Charger
	// ReconcileGrace is how long a payment attempt may stay open before the
	// reconciler settles it (default 5 minutes: longer than any charge call
	// with its retries takes).
	ReconcileGrace time.Duration
	// Linker, when set, hosts the payment pages of create_payment_link
	// (Stripe Checkout); without it the shop serves its sandbox page.
	Linker Linker
	// LinkKey signs the addresses of the sandbox payment page (the
	// receipt key serves); random when unset.
	LinkKey []byte
	// OrderRefunds, when set, settles the staff's refunds left pending (an
	// answer lost); the reconciler runs it with its own work.
	OrderRefunds func(context.Context) (int, error)
	// Fault, for tests only, is called at named points of completion
	// ("before_charge", "after_charge"); a test makes it end the process.
	Fault func(point string)
}

// New returns the checkout of the shop whose policy and catalog are given.
func New(db *gorm.DB, policy *Policy, cat *catalog.Catalog, opts *Options) *Checkout {
	c := &Checkout{
		db: db, policy: policy, catalog: cat, publicURL: catalog.DefaultPublicURL,
		ttl: DefaultTTL, now: time.Now, logger: slog.New(slog.DiscardHandler), grace: DefaultReconcileGrace,
	}
	if opts != nil {
		if opts.PublicURL != "" {
			c.publicURL = strings.TrimRight(opts.PublicURL, "/")
		}
		if opts.TTL > 0 {
			c.ttl = opts.TTL
		}
		if opts.Now != nil {
			c.now = opts.Now
		}
		if opts.Logger != nil {
			c.logger = opts.Logger
		}
		c.orders, c.charger, c.fault = opts.Orders, opts.Charger, opts.Fault
		c.linker, c.linkKey, c.refunds = opts.Linker, opts.LinkKey, opts.OrderRefunds
		if opts.ReconcileGrace > 0 {
			c.grace = opts.ReconcileGrace
		}
	}
	if len(c.linkKey) == 0 {
		c.linkKey = make([]byte, 32)
		_, _ = rand.Read(c.linkKey) // crypto/rand.Read never fails
	}
	return c
}

// links are the policy's pages as the session lists them.
func (c *Checkout) links() []Link {
	abs := func(u string) string {
		if strings.HasPrefix(u, "/") {
			return c.publicURL + u
		}
		return u
	}
	l := c.policy.Links
	return []Link{
		{Type: "terms_of_use", URL: abs(l.TermsOfUse)},
		{Type: "privacy_policy", URL: abs(l.PrivacyPolicy)},
		{Type: "return_policy", URL: abs(l.ReturnPolicy)},
		{Type: "support", URL: abs(l.Support)},
	}
}
