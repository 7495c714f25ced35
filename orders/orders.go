// Package orders keeps the shop's orders: each order and its lines as the
// buyer paid for them, the receipt (figures from the database, never from a
// caller), and the audit log of every change.
//
// Checkout creates an order inside its own completion transaction
// ([Orders.Create]); buyers read it back with the order id and their email
// (the get_order tool) or through the signed receipt link ([Orders.PermalinkURL]).
// With [Options.Emails], the order's confirmation, and the notices of its
// parcels, refunds and cancellation, go to notify's outbox in the
// transaction of each change (emails.go), so none is lost or written twice.
//
// # Life cycles
//
// The order (orders.status, Status), written confirmed by checkout's
// completion; each arrow is a transition of status.go, named after it:
//
//	confirmed ─shipOrder (some)─→ partially_shipped ─shipOrder (the rest)─→ shipped ─deliverOrder─→ delivered
//	    │    └─shipOrder (all)─────────────────────────────────────────────↗
//	    └─cancelOrder─→ canceled
//	any but canceled ─markRefunded (refunds reach the total)─→ refunded
//
// (shipOrder of some more units of a partially shipped order leaves it
// partially_shipped.)
//
// Staff move it (the admin tools). Each transition's conditional UPDATE
// names the statuses it may leave and the status the order was read in
// (WHERE id = ? AND status IN ? AND status = ?), so of two staff acting at
// once one wins and the other is told to look again. Each move is one
// transaction (database.Transact) with its audit event: a crash leaves the
// order as it was.
//
// The refund (refunds.status, refundStatus):
//
//	(reserve: order.refunded grows, in the staff's transaction) → pending
//	pending ─provider refunded──→ succeeded (units restocked; order refunded when in full)
//	   └─────provider refused───→ failed    (the reserved amount given back)
//
// The staff member's call (sendRefund) settles it when the provider
// answers, the reconciler (ReconcileRefunds) when the answer was lost or the process
// ended between recording and settling: it asks again with the refund's own
// idempotency key, so nothing is refunded twice. settleRefund leaves
// pending only; the reservation is a conditional update (refunded + amount
// <= total), so concurrent refunds never pass the order's total.
//
// The return a buyer starts (returns.status, ReturnStatus) has its own
// machine, drawn on [Returns]; its refund is one of the refunds above.
package orders

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/contract"
)

// Statuses of an order's payment (the order's own are Status).
const (
	// PaymentSucceeded is a payment the provider accepted.
	PaymentSucceeded = "succeeded"
)

// Bounds of the buyer's input.
const (
	// MaxEmailLen bounds an email address (RFC 5321's path limit).
	MaxEmailLen = 254
)

// idPattern is what newOrderID makes: "ord_" and 35 base32 letters (the
// time and 26 random ones, shop.NewID); before ids carried their time, 26.
var idPattern = regexp.MustCompile(fmt.Sprintf(`^ord_(?:[a-z2-7]{%d})?[a-z2-7]{26}$`, shop.IDTimeLen))

// NewID returns a new order id, "ord_" and shop.NewID's, for a caller
// that names an order before it is written: checkout chooses a session's
// order id before the charge, so that the payment provider receives it,
// and hands it to Create in NewOrder.ID.
func NewID() string { return newOrderID() }

// ValidID reports whether id has the shape of an order id (as NewID makes).
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Orders keeps the orders.
type Orders struct {
	db        *gorm.DB
	publicURL string
	key       []byte
	now       func() time.Time
	emails    *Emails
	// paymentAttempts is Options.PaymentAttempts.
	paymentAttempts PaymentAttemptsFunc
}

// Options configure Orders; nil means defaults.
type Options struct {
	// PublicURL is the base of permalink_url (default http://127.0.0.1:8000).
	PublicURL string
	// ReceiptKey is the HMAC key of receipt links; see LoadReceiptKey. When
	// empty, a random key is made, and links then live only as long as the
	// process: production wiring passes the loaded key.
	ReceiptKey []byte
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Emails, when set, has orders email their buyer (written to the
	// outbox in each change's transaction); nil sends none.
	Emails *Emails
	// PaymentAttempts reads a checkout session's payment attempts for the
	// staff's get_order: checkout.PaymentAttempts, since checkout owns
	// them (docs/architecture.md). Production wiring sets it; when nil,
	// get_order fails (other tools do not need it).
	PaymentAttempts PaymentAttemptsFunc
}

// New returns the orders kept in db.
func New(db *gorm.DB, opts *Options) *Orders {
	o := &Orders{db: db, publicURL: catalog.DefaultPublicURL, now: time.Now}
	if opts != nil {
		if opts.PublicURL != "" {
			o.publicURL = strings.TrimRight(opts.PublicURL, "/")
		}
		o.key = append([]byte(nil), opts.ReceiptKey...)
		if opts.Now != nil {
			o.now = opts.Now
		}
		o.paymentAttempts = opts.PaymentAttempts
		if opts.Emails != nil {
			e := *opts.Emails
			if e.Logger == nil {
				e.Logger = slog.Default()
			}
			o.emails = &e
		}
	}
	if len(o.key) == 0 {
		o.key = make([]byte, 32)
		_, _ = rand.Read(o.key) // crypto/rand.Read never fails
	}
	return o
}

// errNotFound is the one answer for an order a caller may not see, whether
// it does not exist or the proof (email, token) does not match: the same
// error either way, so the answer tells nothing about which.
var errNotFound = shop.Errorf(shop.NotFound, "",
	"no order matches this order id and email; check both as they appear in the order confirmation")

// errNoReceipt is ByPermalink's not_found.
var errNoReceipt = shop.Errorf(shop.NotFound, "", "no such receipt")

// Get returns the order when email matches its buyer's email
// (case-insensitive, trimmed); otherwise the same not_found error as for an
// unknown id, so that the answer is no oracle for either.
//
// Errors: missing or invalid $.order_id, missing or invalid $.email, not_found.
func (o *Orders) Get(ctx context.Context, id, email string) (*contract.Order, error) {
	id, err := orderID(id)
	if err != nil {
		return nil, err
	}
	norm := normalizeEmail(email)
	switch {
	case norm == "":
		return nil, shop.Errorf(shop.Missing, "$.email", "send the email address the order was placed with")
	case !plausibleEmail(norm):
		return nil, shop.Errorf(shop.Invalid, "$.email", "send the email address the order was placed with, such as jane@example.com (at most %d characters)", MaxEmailLen)
	}
	// One query whether the id or the email is wrong: no timing difference either.
	return o.findOr(ctx, errNotFound, "id = ? AND email = ?", id, norm)
}

// BySession returns the order of a session, or nil, nil when there is none.
// db may be a transaction or nil.
func (o *Orders) BySession(ctx context.Context, db *gorm.DB, sessionID string) (*contract.Order, error) {
	return o.find(ctx, db, "checkout_session_id = ?", sessionID)
}

// ByID returns the order with id, for a caller that holds its id (an
// unguessable bearer secret, like a checkout session's): the agent that
// completed its checkout. Unlike Get it needs no email.
//
// Errors: missing, invalid or not_found $.order_id.
func (o *Orders) ByID(ctx context.Context, id string) (*contract.Order, error) {
	id, err := orderID(id)
	if err != nil {
		return nil, err
	}
	return o.findOr(ctx, errNotFound, "id = ?", id)
}

// ByPermalink returns the order when token is the valid HMAC for id
// (compared in constant time); otherwise not_found.
func (o *Orders) ByPermalink(ctx context.Context, id, token string) (*contract.Order, error) {
	if !idPattern.MatchString(id) || !o.validToken(id, token) {
		return nil, errNoReceipt
	}
	return o.findOr(ctx, errNoReceipt, "id = ?", id)
}

// orderID checks an order id a caller sent ($.order_id), trimmed.
func orderID(id string) (string, error) {
	id = strings.TrimSpace(id)
	switch {
	case id == "":
		return "", shop.Errorf(shop.Missing, "$.order_id", `send the order id from the order confirmation, such as "ord_…"`)
	case !idPattern.MatchString(id):
		return "", shop.Errorf(shop.Invalid, "$.order_id", `an order id is "ord_" followed by 35 letters and digits, as in the order confirmation`)
	}
	return id, nil
}

// findOr returns the one order matching the condition, or missing when
// there is none.
func (o *Orders) findOr(ctx context.Context, missing error, cond string, args ...any) (*contract.Order, error) {
	ord, err := o.find(ctx, nil, cond, args...)
	if err == nil && ord == nil {
		err = missing
	}
	if err != nil {
		return nil, err
	}
	return ord, nil
}

// find returns the one order matching the condition, or nil, nil.
func (o *Orders) find(ctx context.Context, db *gorm.DB, cond string, args ...any) (*contract.Order, error) {
	if db == nil {
		db = o.db
	}
	var row orderRow
	err := db.WithContext(ctx).Where(cond, args...).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read order: %w", err)
	}
	var lines []lineRow
	if err := db.WithContext(ctx).Where("order_id = ?", row.ID).Order("position").Find(&lines).Error; err != nil {
		return nil, fmt.Errorf("read order %s lines: %w", row.ID, err)
	}
	ord, err := o.order(&row, lines)
	if err != nil {
		return nil, err
	}
	if row.Refunded > 0 {
		refunds, err := refundsOf(ctx, db, []string{row.ID})
		if err != nil {
			return nil, err
		}
		withRefunds(&ord.Receipt, refunds[row.ID])
	}
	if row.Status == StatusConfirmed { // a confirmed order has shipped nothing yet
		return ord, nil
	}
	tracks, err := tracking(ctx, db, []string{row.ID})
	if err != nil {
		return nil, err
	}
	ord.Receipt.Tracking = tracks[row.ID]
	rets, err := returnsOf(ctx, db, []string{row.ID})
	if err != nil {
		return nil, err
	}
	ord.Receipt.Returns = rets[row.ID]
	return ord, nil
}

// order is the contract's Order of a stored order.
func (o *Orders) order(r *orderRow, lines []lineRow) (*contract.Order, error) {
	rec := contract.Receipt{
		OrderID: r.ID, Number: r.Number, Status: string(r.Status), CreatedAt: r.CreatedAt.UTC(),
		Email: r.Email, Currency: r.Currency, LineItems: make([]contract.LineItem, 0, len(lines)),
		Totals: []contract.Total{}, Links: []contract.Link{},
		Payment: contract.Payment{Provider: r.PaymentProvider, Mode: r.PaymentMode, Reference: r.PaymentReference, Status: r.PaymentStatus},
	}
	for _, f := range []struct {
		col string
		src string
		dst any
	}{
		{"address", r.Address, &rec.FulfillmentAddress},
		{"fulfillment_option", r.FulfillmentOption, &rec.FulfillmentOption},
		{"totals", r.Totals, &rec.Totals},
		{"links", r.Links, &rec.Links},
		{"display", r.Display, &rec.Display},
	} {
		if err := unmarshalIf(f.src, f.dst); err != nil {
			return nil, fmt.Errorf("order %s %s: %w", r.ID, f.col, err)
		}
	}
	for _, l := range lines {
		li := contract.LineItem{
			ID: l.LineID, Item: contract.Item{ID: l.VariantID, Quantity: l.Quantity}, Name: l.Name, Images: []string{},
			UnitAmount: l.UnitAmount, BaseAmount: l.BaseAmount, Discount: l.Discount,
			Subtotal: l.Subtotal, Tax: l.Tax, Total: l.Total,
		}
		if err := unmarshalIf(l.Images, &li.Images); err != nil {
			return nil, fmt.Errorf("order %s line %d images: %w", r.ID, l.Position, err)
		}
		if li.Images == nil {
			li.Images = []string{}
		}
		rec.LineItems = append(rec.LineItems, li)
	}
	if rec.Totals == nil {
		rec.Totals = []contract.Total{}
	}
	if rec.Display.TaxName == "" { // placed before orders kept it: tax was its own line
		rec.Display.TaxName = contract.TaxSales
	}
	if rec.Links == nil {
		rec.Links = []contract.Link{}
	}
	return &contract.Order{
		ID: r.ID, CheckoutSessionID: r.CheckoutSessionID, PermalinkURL: o.PermalinkURL(r.ID),
		Number: r.Number, Status: string(r.Status), Receipt: rec,
	}, nil
}

// normalizeEmail is how emails are stored and compared: trimmed, lower-cased.
func normalizeEmail(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// plausibleEmail checks the shape only: bounded, one "@" with text on both
// sides, no spaces or control characters.
func plausibleEmail(s string) bool {
	if len(s) > MaxEmailLen {
		return false
	}
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}
