package checkout

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/database"
	"shop/orders"
	"shop/payments"
)

// Linker is what external checkout needs of a provider that hosts payment
// pages: payments.Stripe (Stripe Checkout) satisfies it. Without one, the
// shop serves its own sandbox page, GET /pay/{session}.
type Linker interface {
	CreateHostedCheckout(ctx context.Context, r payments.HostedCheckoutRequest) (*payments.HostedCheckout, error)
	HostedCheckout(ctx context.Context, id string) (*payments.HostedPayment, error)
	ExpireHostedCheckout(ctx context.Context, id string) error
}

// linkTTL is how long a payment page stays open: Stripe Checkout's shortest.
// The session's stock is held a little longer, so that a page can never be
// paid after the hold ran out because of the page's own expiry.
const (
	linkTTL      = 31 * time.Minute
	linkHoldTail = 2 * time.Minute
)

// PaymentCanceled is the code of the info message a session carries after
// the buyer left the payment page without paying.
const PaymentCanceled = "payment_canceled"

// linkRow is a row of payment_links: a hosted payment page made for a
// session, written before the provider is asked for it.
type linkRow struct {
	ID         string `gorm:"primaryKey"`
	SessionID  string
	Provider   string
	ExternalID string
	URL        string
	Amount     int64
	Currency   string
	Status     linkStatus
	ExpiresAt  time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

func (linkRow) TableName() string { return "payment_links" }

// key is the idempotency key of the page's creation and of the payment
// attempt its payment becomes; Stripe keeps it in the PaymentIntent's
// metadata, where Lookup finds it.
func (l *linkRow) key() string { return "shop_link_" + l.ID }

// PayToken is the signed token of the sandbox payment page of a session,
// GET /pay/{session}?t=…: base64url(HMAC-SHA256(key, "pay:" + id)).
func (c *Checkout) PayToken(sessionID string) string {
	return base64.RawURLEncoding.EncodeToString(c.payMAC(sessionID))
}

// ValidPayToken reports whether token is the pay token of sessionID,
// comparing in constant time.
func (c *Checkout) ValidPayToken(sessionID, token string) bool {
	got, err := base64.RawURLEncoding.Strict().DecodeString(token)
	return err == nil && len(got) == sha256.Size && hmac.Equal(got, c.payMAC(sessionID))
}

func (c *Checkout) payMAC(id string) []byte {
	m := hmac.New(sha256.New, c.linkKey)
	m.Write([]byte("pay:" + id))
	return m.Sum(nil)
}

// payURL is the shop's address under /pay for a session: its sandbox page
// when suffix is "", else /return or /cancel.
func (c *Checkout) payURL(sessionID, suffix string) string {
	return c.publicURL + "/pay/" + url.PathEscape(sessionID) + suffix + "?t=" + c.PayToken(sessionID)
}

// Sandboxed reports whether payment links are the shop's own sandbox page
// (no provider hosts pages).
func (c *Checkout) Sandboxed() bool { return c.linker == nil }

// CreateLink makes a page where the buyer pays for a ready session outside
// the host: a Stripe Checkout page with the session's own figures when a
// provider hosts pages, else the shop's sandbox page. The session is priced
// again first (keeping its figures and delivery window when nothing
// changed), and its stock held at least as long as the page stays open,
// within the session's lifetime.
//
// Errors: those of Get; invalid $.checkout_session_id for a session that
// is not ready for payment (with what to fix), or, with a provider's page,
// that ends before the page would close; missing $.buyer.email;
// unavailable when the provider cannot make the page now.
func (c *Checkout) CreateLink(ctx context.Context, id string) (*PaymentLink, error) {
	var until time.Time
	var orderID, account string
	s, err := c.change(ctx, id, func(tx *gorm.DB, row *sessionRow) error {
		if err := c.writable(row); err != nil {
			return err
		}
		st := row.state()
		if st.Buyer == nil || st.Buyer.Email == "" {
			return shop.Errorf(shop.Missing, "$.buyer.email", "the order needs the buyer's email, for the receipt; add it with update_checkout_session, then make the link")
		}
		now := database.Now(tx)
		if _, err := c.reprice(ctx, tx, row, st, now); err != nil {
			return err
		}
		if row.Status != Ready {
			return nil // saved as it stands; refused below with its first problem
		}
		if row.OrderID == "" {
			row.OrderID = orders.NewID() // a session made before order ids were chosen with it
		}
		orderID, account = row.OrderID, accountOf(row.BuyerKey)
		until = now.Add(linkTTL).Truncate(time.Second)
		hold := until.Add(linkHoldTail)
		if end := c.lifetimeEnd(row); end.Before(hold) {
			// The session expires at the end of its lifetime whatever
			// happens: the sandbox page closes with it; a provider's page,
			// which stays open linkTTL, would outlive it.
			if c.linker != nil {
				return shop.Errorf(shop.Invalid, "$.checkout_session_id", "this session ends at %s (sessions last at most %d hours), before a payment page, open %d minutes, would close; start a new one with create_checkout_session",
					end.UTC().Format("15:04 UTC"), int(c.policy.SessionLifetime().Hours()), int(linkTTL.Minutes()))
			}
			hold = end
		}
		if row.ExpiresAt.Before(hold) {
			row.ExpiresAt = hold
			return c.catalog.ExtendHolds(ctx, tx, row.ID, hold)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.Status != Ready {
		return nil, notReady(s)
	}
	if c.linker == nil {
		return &PaymentLink{URL: c.payURL(s.ID, ""), ExpiresAt: s.ExpiresAt, Provider: "sandbox"}, nil
	}
	return c.hostedLink(ctx, s, orderID, account, until)
}

// hostedLink records a payment page for s, whose order will have id
// orderID, and has the provider make it; the page of a linked account's
// session offers to save the card to the account's customer.
func (c *Checkout) hostedLink(ctx context.Context, s *Session, orderID, account string, until time.Time) (*PaymentLink, error) {
	var total int64
	for _, t := range s.Totals {
		if t.Type == TotalTotal {
			total = t.Amount
		}
	}
	now := c.now().UTC()
	link := &linkRow{
		ID: shop.NewID("pl_"), SessionID: s.ID, Provider: c.charger.Name(),
		Amount: total, Currency: s.Currency, Status: linkOpen, ExpiresAt: until, CreatedAt: now, UpdatedAt: now,
	}
	if err := c.db.WithContext(ctx).Create(link).Error; err != nil {
		return nil, fmt.Errorf("record payment link: %w", err)
	}
	req := hostedRequest(s, total, now)
	req.Metadata = map[string]string{"checkout_session_id": s.ID, "order_id": orderID, "payment_link_id": link.ID}
	req.SuccessURL = c.payURL(s.ID, "/return") + "&checkout={CHECKOUT_SESSION_ID}"
	req.CancelURL = c.payURL(s.ID, "/cancel")
	req.ExpiresAt, req.IdempotencyKey = until, link.key()
	req.Customer = c.pageCustomer(ctx, s.ID, account, req.Email)
	hc, err := c.linker.CreateHostedCheckout(ctx, req)
	if err != nil {
		c.logger.ErrorContext(ctx, "create hosted checkout", "session", s.ID, "link", link.ID, "err", err)
		_ = c.endLink(context.WithoutCancel(ctx), link.ID, linkFailed)
		var e *shop.Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, shop.Errorf(shop.Unavailable, "$.checkout_session_id", "the payment provider could not make a payment page just now; try again in a moment")
	}
	err = c.db.WithContext(ctx).Model(link).Updates(map[string]any{
		"external_id": hc.ID, "url": hc.URL, "expires_at": hc.ExpiresAt.UTC(), "updated_at": c.now().UTC(),
	}).Error
	if err != nil {
		return nil, fmt.Errorf("record payment link %s: %w", link.ID, err)
	}
	// A new page supersedes the session's older ones, which may show a
	// cart since changed: they close, so only this one can be paid.
	c.closeLinks(ctx, s.ID, link.ID)
	return &PaymentLink{URL: hc.URL, ExpiresAt: hc.ExpiresAt.UTC(), Provider: c.charger.Name()}, nil
}

// hostedRequest is the page of a session with the session's own figures:
// its lines at their unit prices, every discount as one, its shipping and
// its tax, adding up to total.
func hostedRequest(s *Session, total int64, now time.Time) payments.HostedCheckoutRequest {
	r := payments.HostedCheckoutRequest{Currency: s.Currency, Total: total, ClientReference: s.ID}
	if s.Buyer != nil {
		r.Email = s.Buyer.Email
	}
	for _, l := range s.LineItems {
		hl := payments.HostedLine{Name: l.Name, Quantity: l.Item.Quantity, UnitAmount: l.UnitAmount}
		if len(l.Images) > 0 {
			hl.ImageURL = l.Images[0]
		}
		r.Lines = append(r.Lines, hl)
	}
	for _, t := range s.Totals {
		switch t.Type {
		case TotalItemsDiscount, TotalDiscount:
			r.Discount += t.Amount
		case TotalTax:
			r.Tax = t.Amount
		}
	}
	for _, o := range s.FulfillmentOptions {
		if o.ID == s.FulfillmentOptionID {
			// The option's tax is in the session's tax total already.
			r.Shipping = &payments.HostedShipping{Name: o.Title, Amount: o.Subtotal, MinDays: businessDays(now, o.EarliestDeliveryTime), MaxDays: businessDays(now, o.LatestDeliveryTime)}
		}
	}
	return r
}

// businessDays is how many business days after now t is, roughly: what a payment
// page shows as a delivery estimate (0 when t is unset or past).
func businessDays(now, t time.Time) int {
	if t.IsZero() {
		return 0
	}
	d := int(t.Sub(now).Hours()/24 + 0.5)
	return max(d*5/7, 0)
}

// errNotYet says a paid page cannot be settled now (another payment of the
// session is being processed); the provider's next delivery or the
// reconciler settles it.
var errNotYet = errors.New("another payment of this session is being processed; try again later")

// SettleHosted settles a hosted payment page as the provider reports it now
// (a webhook, the success page and the reconciler all call it, in any order
// and any number of times): a paid page completes its session's order
// through the same claim, attempt and transaction as complete_checkout; a
// paid page no order can take (the session was paid already, has ended, or
// changed under the page) is refunded in full and kept in
// surplus_payments; an expired page is marked so. A page the shop did not
// make is ignored. A card the buyer chose to save on a paid page is then
// recorded as the session owner's saved card (recordPageCard), once.
func (c *Checkout) SettleHosted(ctx context.Context, externalID string) error {
	if c.linker == nil || externalID == "" {
		return nil
	}
	var link linkRow
	err := c.db.WithContext(ctx).Where("external_id = ?", externalID).Take(&link).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		c.logger.InfoContext(ctx, "hosted checkout the shop did not make; ignored", "checkout", externalID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("payment link %s: %w", externalID, err)
	}
	hp, err := c.linker.HostedCheckout(ctx, externalID)
	if err != nil {
		return err
	}
	if hp.ClientReference != "" && hp.ClientReference != link.SessionID {
		return fmt.Errorf("hosted checkout %s names session %s, its link %s", externalID, hp.ClientReference, link.SessionID)
	}
	if !hp.Paid || hp.PaymentIntent == "" {
		if hp.Status == "expired" {
			return c.endLink(ctx, link.ID, linkExpired)
		}
		return nil
	}
	if err := c.payLink(ctx, &link, hp); err != nil {
		return err
	}
	if err := c.endLink(ctx, link.ID, linkPaid); err != nil {
		return err
	}
	// Settled; a card the buyer chose to save there is then offered by
	// their next sessions (an error here has the webhook delivered again).
	return c.recordPageCard(ctx, link.SessionID, hp)
}

// payLink turns a paid page into its session's order, or into a surplus
// payment that is refunded: a page is fixed-price, so one paid for another
// amount than the session's total, or after the session really changed, is
// refunded. While another payment of the session is being settled, it
// answers errNotYet: the provider's next delivery or the reconciler settles
// the page once that payment's outcome is known.
func (c *Checkout) payLink(ctx context.Context, link *linkRow, hp *payments.HostedPayment) error {
	res := &payments.Result{Status: payments.Succeeded, Reference: hp.PaymentIntent, CardBrand: hp.CardBrand, CardLast4: hp.CardLast4}
	var att *attemptRow
	var claimed bool
	var reason string
	err := retryConflicts(func() error {
		var err error
		att, claimed, reason, err = c.claimForLink(ctx, link, hp)
		return err
	})
	switch {
	case errors.Is(err, errConflict):
		return errNotYet
	case err != nil:
		return err
	case att != nil:
		_, err = c.finish(ctx, att, nil, res)
		if err == nil && claimed {
			c.closeLinks(ctx, att.SessionID, link.ID)
		}
		return err
	}
	err = c.transact(ctx, func(tx *gorm.DB) error {
		return c.recordSurplus(ctx, tx, link.SessionID, link.Provider, hp.PaymentIntent, hp.Amount, hp.Currency, reason)
	})
	if err != nil {
		return err
	}
	c.refundNow(ctx, link.SessionID)
	return nil
}

// claimForLink finds the attempt a paid page's payment settles: the one
// written for it already (a replay, or a settler that stopped midway;
// finish is conditional on the attempt being open), or a new one that
// claims its session (claimed); else, with no attempt, why the payment is
// surplus. errConflict: the claim lost a race.
func (c *Checkout) claimForLink(ctx context.Context, link *linkRow, hp *payments.HostedPayment) (att *attemptRow, claimed bool, reason string, err error) {
	// The session is read before the page's attempt: a session found
	// completed without that attempt was completed by another payment,
	// never by a settler of this page racing this one.
	row, err := c.load(ctx, link.SessionID)
	if err != nil {
		return nil, false, "", err
	}
	var existing attemptRow
	err = c.db.WithContext(ctx).Where("idempotency_key = ?", link.key()).Take(&existing).Error
	switch {
	case err == nil:
		return &existing, false, "", nil
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return nil, false, "", fmt.Errorf("payment attempt of link %s: %w", link.ID, err)
	}
	switch status := row.Status; {
	case status == InProgress:
		// Another payment of the session is being settled (this page's
		// own settlers always find its attempt above).
		return nil, false, "", errNotYet
	case status == Completed:
		return nil, false, reasonPaidTwice, nil
	case status.Final() || c.writable(row) != nil:
		return nil, false, reasonSessionEnd, nil
	case hp.Amount != row.Total || hp.Currency != row.Currency:
		return nil, false, reasonAmount, nil
	case row.UpdatedAt.After(link.CreatedAt):
		// A real change since the page was made (updated_at records
		// the last): the page shows another cart, even at this total.
		return nil, false, reasonChanged, nil
	}
	att, err = c.claim(ctx, row, row.state(), false, func(tx *gorm.DB, prior int64) (*attemptRow, error) {
		// The page's payment: its key is the page's, its token the page's id.
		return c.newAttempt(ctx, tx, row, prior, link.Provider, hp.ID, link.key(), "")
	})
	if err != nil || att != nil {
		return att, att != nil, "", err
	}
	return nil, false, reasonMoved, nil
}

// closeLinks expires a session's other open pages once it is paid, so that
// the buyer cannot pay it again there; what fails is only logged (a payment
// there would be refunded).
func (c *Checkout) closeLinks(ctx context.Context, sessionID, except string) {
	if c.linker == nil {
		return
	}
	var open []linkRow
	if err := c.db.WithContext(ctx).Where("session_id = ? AND status = ? AND id <> ? AND external_id <> ''", sessionID, linkOpen, except).Find(&open).Error; err != nil {
		c.logger.WarnContext(ctx, "open payment links", "session", sessionID, "err", err)
		return
	}
	for i := range open {
		if err := c.linker.ExpireHostedCheckout(ctx, open[i].ExternalID); err != nil {
			c.logger.WarnContext(ctx, "expire payment link", "link", open[i].ID, "err", err)
			continue
		}
		_ = c.endLink(ctx, open[i].ID, linkExpired)
	}
}

// CancelPayment records that the buyer left a session's payment page
// without paying (the page's cancel address): a ready session carries a
// payment_canceled info message until it next changes, for the widget to go
// back to the cart, and its open hosted pages are expired. Any other session
// is left as it is.
func (c *Checkout) CancelPayment(ctx context.Context, id string) (*Session, error) {
	s, err := c.change(ctx, id, func(tx *gorm.DB, row *sessionRow) error {
		if row.Status != Ready || c.writable(row) != nil {
			return errUnchanged
		}
		for _, m := range row.Priced.Messages {
			if m.Code == PaymentCanceled {
				return errUnchanged
			}
		}
		row.addMessages(keyed(infoMessage(PaymentCanceled, "", "The payment page was closed without paying; the cart is kept."), KeyPaymentCanceled))
		return nil
	})
	if err == nil {
		c.closeLinks(ctx, id, "")
	}
	return s, err
}

// ReconcileLinks asks the provider about the hosted pages still open a
// while after they were made (a webhook that never came, a buyer who closed
// the tab before the success page) and settles them. It returns how many it
// found paid or expired.
func (c *Checkout) ReconcileLinks(ctx context.Context) (int, error) {
	if c.linker == nil {
		return 0, nil
	}
	var open []linkRow
	err := c.db.WithContext(ctx).Where("status = ? AND external_id <> '' AND updated_at <= ?", linkOpen, c.now().UTC().Add(-time.Minute)).
		Order("updated_at").Limit(100).Find(&open).Error
	if err != nil {
		return 0, fmt.Errorf("open payment links: %w", err)
	}
	n := 0
	for i := range open {
		l := &open[i]
		if err := c.SettleHosted(ctx, l.ExternalID); err != nil {
			if !errors.Is(err, errNotYet) {
				c.logger.WarnContext(ctx, "settle payment link", "link", l.ID, "err", err)
			}
			continue
		}
		var now linkRow
		if err := c.db.WithContext(ctx).Where("id = ?", l.ID).Take(&now).Error; err == nil && now.Status != linkOpen {
			n++
			continue
		}
		// Still open: ask again in a minute, after the others.
		_ = c.db.WithContext(ctx).Model(&linkRow{}).Where("id = ? AND status = ?", l.ID, linkOpen).Update("updated_at", c.now().UTC()).Error
	}
	return n, nil
}

// PayURL is the address of the shop's own payment page of a session, GET
// /pay/{session}?t=…: where a buyer whose agent cannot pay continues.
func (c *Checkout) PayURL(sessionID string) string { return c.payURL(sessionID, "") }
