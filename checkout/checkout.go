// Package checkout turns a buyer's wish into a priced checkout session: the
// merchant policy (links, shipping, tax, promotions), pricing, stock holds and
// completion.
//
// Every write to a session is a conditional update on its version, inside one
// transaction (database.Transact) with the stock holds it takes or releases;
// a writer that loses a race retries on the fresh state (retryConflicts).
// The database is the one truth, so any number of replicas may serve the
// same sessions: what a process keeps in memory (known.go: the sessions it
// wrote last) is written over only by a save over the version it was kept
// at, and an answer that saves nothing is checked against that version.
//
// # Life cycles
//
// Four rows move as completion goes; each transition is one transaction,
// so a crash leaves a row in the state before it or after it, never
// between. A session moves by saves over its version (save), the others by
// named transitions whose UPDATE names the statuses they leave (states.go).
//
// The session (checkout_sessions, Status):
//
//	create ─→ not_ready_for_payment ⇄ ready_for_payment ─claim─→ in_progress ─finish─→ completed
//	              │                        │    ↑                   │
//	              │                        │    └──── release ──────┘ (declined, failed)
//	              └── cancel, expiry ──────┴──→ canceled, expired
//
// Who moves it, what guards it, and a crash:
//   - The buyer's calls (Create, Update, Cancel) and the claim of a payment
//     (Complete, a paid page's payLink) move it, each saving over the
//     version it read (save); the sweeper expires it (ExpireDue, from
//     not_ready or ready only). finish and release move it inside the
//     attempt's transition, so only the caller that settles the attempt
//     moves the session.
//   - Crash after claim: the session stays in_progress with a pending
//     attempt and its stock held (claimHold); the reconciler settles the
//     attempt after the grace period, which completes or releases it.
//
// The payment attempt (payment_attempts, attemptStatus), written in the
// claim's transaction with its idempotency key before the provider is
// called:
//
//	pending ─success─────────→ succeeded                 (finish: order, stock, session completed)
//	   ├────decline, 3DS─────→ declined, requires_action (release: session ready again)
//	   └────refused, no charge→ failed ─charge found later─→ orphaned (surplus, refunded)
//
// Who moves it, what guards it, and a crash:
//   - Whoever learns the outcome first: Complete's caller after the
//     charge, the webhook (ReconcileSession), the reconciler (Reconcile:
//     asks the provider by the attempt's key once the grace period is over,
//     and fails it when the provider has no charge), a paid page (payLink).
//     The row's status guards it: settleAttempt leaves pending only,
//     orphanAttempt failed only, so one caller wins.
//   - Crash before the charge: pending; the reconciler finds no charge and
//     fails it (the session is released). Crash after the charge, before
//     finish: pending; the reconciler finds the charge (same key) and
//     finishes it. finish is one transaction: order, stock, attempt and
//     session together or not at all.
//
// The surplus payment (surplus_payments, surplusStatus): a payment no order
// takes (the session was paid already or had ended, the attempt had been
// given up on, a page paid after its session changed), recorded in the
// transaction that finds it so:
//
//	pending ─refund accepted─→ refunded
//	   └─────refund refused──→ failed (for staff to refund by hand)
//
// Who moves it, what guards it, and a crash:
//   - refundNow refunds it at once, the reconciler (RefundSurplus) later,
//     both with the key "shop_surplus_<id>"; settleSurplus leaves pending
//     only, and the unique reference keeps a payment reported twice once.
//   - Crash after recording, or a refund whose answer was lost: pending;
//     the reconciler refunds it, the same key making the refund happen once.
//
// The payment link (payment_links, linkStatus), written before the provider
// is asked to make the page:
//
//	open ─paid (SettleHosted → payLink)─────────────────→ paid
//	  ├───expired at the provider, superseded, session paid → expired
//	  └───the provider could not make it ────────────────→ failed
//
// Who moves it, what guards it, and a crash:
//   - SettleHosted (the webhook, the success page, ReconcileLinks) settles
//     a paid page through the same claim, attempt (keyed by the link) and
//     finish as Complete; closeLinks expires a session's other pages.
//     endLink leaves open only.
//   - Crash before the provider made the page: open without an external
//     id, never paid, its holds lapse. Crash between payLink's claim and
//     finish: the page's attempt exists (its key is the link's) and the
//     next settler finishes it. A page paid while another payment of its
//     session is in flight answers errNotYet and is settled on the
//     provider's next delivery or by the reconciler.
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
	"shop/payments"
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
	charged func(payments.Request, *payments.Result, error)
	moved   func(from, to string, n int64)
	// account is Options.AccountAddress (accounts.go).
	account func(ctx context.Context, accountID string) (*Address, error)
	// known keeps the sessions this process wrote last (known.go).
	known *known
	// wallet is Options.Wallet (saved.go).
	wallet Wallet
	// keepAddress is Options.SaveAddress (accounts.go).
	keepAddress func(ctx context.Context, tx *gorm.DB, accountID string, a Address) error
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
	// Fault, for tests only, is called at named points of completion
	// ("before_charge", "after_charge", "after_order"), where a test makes
	// it end the process, and where a change or a completion has the
	// session's row in hand, kept or read, before its transaction
	// ("change", "claim"), where a test holds calls to start them from one
	// version.
	Fault func(point string)
	// SessionMoved, when set, is told of sessions' changes of status once
	// they are committed: n sessions went from one status ("new" for a
	// session just created) to another (the operator's metrics).
	SessionMoved func(from, to string, n int64)
	// Charged, when set, is told of every charge asked of the Charger and
	// its answer, a result or an error (the operator's metrics).
	Charged func(r payments.Request, res *payments.Result, err error)
	// AccountAddress, when set, gives a linked buyer's default address
	// (nil when they saved none), which their new sessions start with
	// (accounts.go).
	AccountAddress func(ctx context.Context, accountID string) (*Address, error)
	// SaveAddress, when set, keeps the address of a linked buyer's order in
	// their account, in tx, the order's transaction, when the session's
	// save_address is true (accounts.go).
	SaveAddress func(ctx context.Context, tx *gorm.DB, accountID string, a Address) error
	// Wallet, when set, keeps linked buyers' saved cards: their sessions
	// offer them and complete_checkout charges one off-session (saved.go).
	Wallet Wallet
}

// New returns the checkout of the shop whose policy and catalog are given.
func New(db *gorm.DB, policy *Policy, cat *catalog.Catalog, opts *Options) *Checkout {
	c := &Checkout{
		db: db, policy: policy, catalog: cat, publicURL: catalog.DefaultPublicURL,
		ttl: DefaultTTL, now: time.Now, logger: slog.New(slog.DiscardHandler), grace: DefaultReconcileGrace,
		known: newKnown(),
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
		c.linker, c.linkKey, c.moved = opts.Linker, opts.LinkKey, opts.SessionMoved
		c.charged, c.account = opts.Charged, opts.AccountAddress
		c.wallet, c.keepAddress = opts.Wallet, opts.SaveAddress
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

// links are the policy's pages as the session (and the order it becomes)
// lists them, the support page twice: as support (ACP 2026-04-17's name)
// and as support_url (ChatGPT's Checkout API reference's).
func (c *Checkout) links() []Link {
	abs := func(u string) string {
		if strings.HasPrefix(u, "/") {
			return c.publicURL + u
		}
		return u
	}
	l := c.policy.Links
	if l.ReturnPolicy == "" { // the page the shop makes from the policy's returns:
		l.ReturnPolicy = orders.ReturnPagePath
	}
	return []Link{
		{Type: "terms_of_use", URL: abs(l.TermsOfUse)},
		{Type: "privacy_policy", URL: abs(l.PrivacyPolicy)},
		{Type: "return_policy", URL: abs(l.ReturnPolicy)},
		{Type: "support", URL: abs(l.Support)},
		{Type: "support_url", URL: abs(l.Support)},
	}
}

// HTTPS are the pages of l served over https (an absolute https URL), in
// the order of l's fields: the hosts beside the shop's own that the widgets
// may send the buyer to.
func (l Links) HTTPS() []string {
	var out []string
	for _, u := range []string{l.TermsOfUse, l.PrivacyPolicy, l.ReturnPolicy, l.Support} {
		if strings.HasPrefix(u, "https://") {
			out = append(out, u)
		}
	}
	return out
}

// paymentProvider is the payment_provider block of every session: Stripe
// taking cards of the policy's brands, and the wallets its payment sheet
// offers, for the merchant id of the policy's mode.
func (c *Checkout) paymentProvider() PaymentProvider {
	methods := []PaymentMethod{{Type: "card", AllowedCardBrands: c.policy.AllowedCardBrands()}}
	for _, w := range c.policy.PaymentSheet.Wallets {
		methods = append(methods, PaymentMethod{Type: w})
	}
	return PaymentProvider{Provider: "stripe", MerchantID: c.policy.sheetMerchantID(), SupportedPaymentMethods: methods}
}
