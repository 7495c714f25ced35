package checkout

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database"
	"shop/orders"
	"shop/payments"
)

// settle records the provider's answer to an attempt: an order for a
// success, a ready session with a message for a decline, nothing yet for an
// unknown outcome (the reconciler asks again). It answers the session as
// the caller should see it. claimed is the session's row as the attempt's
// claim saved it (see finish), or nil.
func (c *Checkout) settle(ctx context.Context, att *attemptRow, claimed *sessionRow, res *payments.Result, chargeErr error) (*Session, error) {
	var out outcome
	var err error
	switch {
	case chargeErr == nil:
		out, err = c.record(ctx, att, claimed, res)
		if err == nil && res.Status == payments.Succeeded {
			c.closeLinks(ctx, att.SessionID, "")
		}
	case errors.Is(chargeErr, payments.ErrUnknownOutcome), errors.Is(chargeErr, context.Canceled), errors.Is(chargeErr, context.DeadlineExceeded):
		c.logger.WarnContext(ctx, "payment outcome unknown; the reconciler will settle it", "attempt", att.ID, "err", payments.RedactError(chargeErr, att.Token))
		row, err := c.load(context.WithoutCancel(ctx), att.SessionID)
		if err != nil {
			return nil, err
		}
		s, err := c.session(ctx, row)
		if err != nil {
			return nil, err
		}
		return c.processing(s), nil
	case errors.Is(chargeErr, payments.ErrKeyReused):
		return c.settleReused(ctx, att, claimed, chargeErr)
	default:
		// The provider refused the request itself: nothing was charged. Its
		// message may quote the token, which no log line shows.
		chargeErr = payments.RedactError(chargeErr, att.Token)
		if _, err := c.abandon(ctx, att, chargeErr.Error()); err != nil {
			return nil, err
		}
		var e *shop.Error
		if errors.As(chargeErr, &e) {
			return nil, e
		}
		return nil, fmt.Errorf("charge %s: %w", att.ID, chargeErr)
	}
	if err != nil {
		return nil, err
	}
	if out.completed != nil {
		c.known.forget(att.SessionID)
		c.faultAt("after_order") // the crash tests' point: the order (and its email) committed, nothing answered
		return c.sessionWith(ctx, out.completed, out.order)
	}
	row, err := c.load(ctx, att.SessionID)
	if err != nil {
		return nil, err
	}
	return c.session(ctx, row)
}

// outcome is what settling an attempt did.
type outcome struct {
	// settled: this call settled the attempt (false: another had first).
	settled bool
	// completed is the session as this call completed it, and order its
	// order, when the attempt's success made the order (else nil): the
	// answer needs no reading back.
	completed *sessionRow
	order     *contract.Order
}

// record settles an attempt with the provider's known answer; claimed is
// as for settle.
func (c *Checkout) record(ctx context.Context, att *attemptRow, claimed *sessionRow, res *payments.Result) (outcome, error) {
	if res.Status == payments.Succeeded {
		return c.finish(ctx, att, claimed, res)
	}
	settled, err := c.decline(ctx, att, res)
	return outcome{settled: settled}, err
}

// finish writes the order of a successful charge, in one transaction with
// the stock it takes, the attempt and the session. claimed, when not nil,
// is the session's row as the attempt's claim saved it: the transaction
// starts from it without reading the row, and the session's save over its
// version (errConflict when it moved since) makes it run again from the
// row as it is (see known.go).
func (c *Checkout) finish(ctx context.Context, att *attemptRow, claimed *sessionRow, res *payments.Result) (out outcome, err error) {
	surplus := false
	var short map[string]int64
	defer func() {
		if surplus && err == nil {
			c.refundNow(ctx, att.SessionID)
		}
		if short != nil && err == nil {
			c.logger.ErrorContext(ctx, "a paid order is short of stock (the catalog changed while it was paid): restock or refund it; list_orders with short: true shows it",
				"session", att.SessionID, "order", out.order.ID, "short", short)
		}
	}()
	for {
		err = c.transact(ctx, func(tx *gorm.DB) error {
			out, surplus, short = outcome{}, false, nil // a transaction run again starts afresh
			return c.finishIn(ctx, tx, att, claimed, res, &out, &surplus, &short)
		})
		if claimed == nil || !errors.Is(err, errConflict) {
			break
		}
		c.known.forget(att.SessionID)
		claimed = nil
	}
	if err != nil {
		return outcome{}, err
	}
	return out, nil
}

// finishIn is finish's transaction tx: it settles the attempt and writes
// out's order, or the surplus payment (surplus) of a session no longer
// being paid; short is what the stock did not cover.
func (c *Checkout) finishIn(ctx context.Context, tx *gorm.DB, att *attemptRow, claimed *sessionRow, res *payments.Result, out *outcome, surplus *bool, short *map[string]int64) error {
	ok, err := c.settleAttempt(ctx, tx, att.ID, attemptSucceeded, res)
	if err != nil {
		return err
	}
	if !ok {
		*surplus, err = c.orphan(ctx, tx, att, res, reasonGivenUp)
		return err
	}
	out.settled = true
	var row *sessionRow
	if claimed != nil && claimed.Status == InProgress {
		cp := *claimed // the caller's, and a transaction run again starts from it
		row = &cp
	} else if row, err = readRow(tx, att.SessionID); err != nil {
		return fmt.Errorf("finish %s: %w", att.ID, err)
	}
	if row.Status != InProgress {
		// A charge succeeded for a session that is no longer being paid:
		// no order takes the money, so it goes back. The row is the one
		// read here: nothing unchecked decides it.
		reason := reasonSessionEnd
		if row.Status == Completed {
			reason = reasonPaidTwice
		}
		*surplus = true
		if err := c.givePromoBack(ctx, tx, att); err != nil {
			return err
		}
		return c.recordSurplus(ctx, tx, row.ID, att.Provider, res.Reference, att.Amount, att.Currency, reason)
	}
	out.order, *short, err = c.placeOrder(ctx, tx, att, res, row)
	out.completed = row
	return err
}

// take takes a paid session's stock in tx and returns, by variant id, the
// units the stock on hand did not cover (nil when it covered every line):
// the order is written all the same, its shortfall recorded for the staff
// to restock or refund.
func (c *Checkout) take(ctx context.Context, tx *gorm.DB, row *sessionRow, st state) (map[string]int64, error) {
	want := lines(st.Items)
	short, err := c.catalog.Take(ctx, tx, row.ID, want)
	if err != nil {
		return nil, err
	}
	var out map[string]int64
	for i, n := range short {
		if n > 0 {
			if out == nil {
				out = map[string]int64{}
			}
			out[want[i].VariantID] += n
		}
	}
	return out, nil
}

// placeOrder writes, in tx, the order of a session being paid whose charge
// succeeded: the order is what the buyer paid for (the session's priced
// snapshot), whatever the catalog says now, and the stock takes what it can.
// The session (row) is completed. It returns the order and the units short
// by variant (nil when none).
func (c *Checkout) placeOrder(ctx context.Context, tx *gorm.DB, att *attemptRow, res *payments.Result, row *sessionRow) (*contract.Order, map[string]int64, error) {
	st, snap := row.state(), row.Priced
	orderID := att.OrderID
	if orderID == "" {
		orderID = row.OrderID // an attempt made before order ids were chosen with the session
	}
	in := orders.NewOrder{
		ID: orderID, SessionID: row.ID, Buyer: st.Buyer, Address: st.Address,
		LineItems: snap.LineItems, Totals: snap.Totals, Links: c.links(),
		Currency: row.Currency, Total: row.Total, Channel: row.Channel, AccountID: accountOf(row.BuyerKey),
		Payment: contract.Payment{Provider: att.Provider, Mode: att.Mode, Reference: res.Reference, Status: string(payments.Succeeded)},
		Display: c.policy.displayFor(st.Address), Locale: row.Locale,
	}
	if st.Buyer != nil {
		in.Email = st.Buyer.Email
	}
	for i := range snap.Options {
		if snap.Options[i].ID == snap.OptionID {
			in.FulfillmentOption = &snap.Options[i]
		}
	}
	short, err := c.take(ctx, tx, row, st)
	if err != nil {
		return nil, nil, err
	}
	if err := c.saveAddress(ctx, tx, row); err != nil {
		return nil, nil, err
	}
	in.Short = short
	ord, err := c.orders.Create(ctx, tx, in)
	if err != nil {
		return nil, nil, err
	}
	row.Status, row.UpdatedAt = Completed, database.Now(tx)
	row.Priced.Messages = []Message{}
	if err := c.save(tx, row); err != nil {
		return nil, nil, err
	}
	return ord, short, nil
}

// orphan handles a successful charge whose attempt was settled already. A
// charge the attempt also records is a replay (nothing to do); an attempt
// given up on (the provider showed no charge within the grace period, or
// its key held another charge) makes this charge an orphan: the buyer paid
// and has no order. It is recorded on the attempt and as a surplus payment
// (for what the provider says it was made, else the attempt's amount),
// which is refunded; orphan reports whether it recorded one.
func (c *Checkout) orphan(ctx context.Context, tx *gorm.DB, att *attemptRow, res *payments.Result, reason string) (bool, error) {
	orphaned, err := c.orphanAttempt(ctx, tx, att.ID, res)
	if err != nil {
		return false, err
	}
	if orphaned {
		amount, currency := att.Amount, att.Currency
		if res.Amount > 0 {
			amount, currency = res.Amount, res.Currency
		}
		c.logger.ErrorContext(ctx, "a charge succeeded for a payment attempt given up on: the buyer paid without an order; refunding it",
			"attempt", att.ID, "session", att.SessionID, "reference", res.Reference, "amount", amount)
		return true, c.recordSurplus(ctx, tx, att.SessionID, att.Provider, res.Reference, amount, currency, reason)
	}
	c.logger.InfoContext(ctx, "payment attempt already settled", "attempt", att.ID)
	return false, nil
}

// settleReused settles an attempt whose idempotency key the provider had
// seen with another request (Stripe's idempotency_error): a charge was made
// under the key before, by an attempt the shop no longer has (its database
// was restored from before it), so the outcome is not "nothing charged" but
// what the provider holds under the key. A charge found for this attempt's
// amount settles it as the charge's outcome; one for another amount is
// refunded and the attempt fails; none found (yet) leaves the attempt open,
// for the reconciler.
func (c *Checkout) settleReused(ctx context.Context, att *attemptRow, claimed *sessionRow, chargeErr error) (*Session, error) {
	res, found, err := c.charger.Lookup(ctx, att.IdempotencyKey)
	switch {
	case err != nil || !found:
		if err == nil {
			err = errors.New("the provider shows no charge under the key yet")
		}
		chargeErr = fmt.Errorf("%w: %v; looking the key up: %v", payments.ErrUnknownOutcome, chargeErr, err)
		return c.settle(ctx, att, claimed, nil, chargeErr)
	case res.Status == payments.Succeeded && !sameCharge(att, res):
		if err := c.keyTaken(ctx, att, res); err != nil {
			return nil, err
		}
		return nil, shop.Errorf(shop.Conflict, "$.checkout_session_id",
			"an earlier payment for this session, of another amount, is being refunded; nothing was charged now: call complete_checkout again")
	}
	c.logger.WarnContext(ctx, "the provider holds a charge under this attempt's key, made before the shop's records of it were lost; settling from it",
		"attempt", att.ID, "session", att.SessionID, "reference", res.Reference)
	return c.settle(ctx, att, claimed, res, nil)
}

// sameCharge reports whether a succeeded charge the provider holds under an
// attempt's key pays for that attempt: the same amount and currency (when
// the provider says them), nothing refunded.
func sameCharge(att *attemptRow, res *payments.Result) bool {
	if res.Amount == 0 {
		return true // a provider that does not say
	}
	return res.Amount == att.Amount && res.Currency == att.Currency && res.Refunded == 0
}

// keyTaken settles an attempt whose key holds a succeeded charge that is not
// the attempt's (another amount, or refunded): the attempt charged nothing
// and fails, giving the session back; the charge, unless refunded in full,
// is recorded on it as an orphan and refunded.
func (c *Checkout) keyTaken(ctx context.Context, att *attemptRow, res *payments.Result) error {
	if _, err := c.abandon(ctx, att, "the provider holds another charge under this attempt's key"); err != nil {
		return err
	}
	if res.Refunded >= res.Amount {
		return nil
	}
	surplus := false
	err := c.transact(ctx, func(tx *gorm.DB) error {
		var err error
		surplus, err = c.orphan(ctx, tx, att, res, reasonAmount)
		return err
	})
	if surplus && err == nil {
		c.refundNow(ctx, att.SessionID)
	}
	return err
}

// refundNow refunds a session's surplus payments just recorded; what fails
// is left to the reconciler.
func (c *Checkout) refundNow(ctx context.Context, sessionID string) {
	if _, err := c.RefundSurplus(context.WithoutCancel(ctx), sessionID); err != nil {
		c.logger.WarnContext(ctx, "refund surplus payment; the reconciler will try again", "session", sessionID, "err", err)
	}
}

// decline records a declined or unauthenticated charge: the session goes
// back to ready for payment (priced again, its stock held again) with a
// message the buyer can act on.
func (c *Checkout) decline(ctx context.Context, att *attemptRow, res *payments.Result) (bool, error) {
	status, code, key := attemptDeclined, shop.PaymentDeclined, KeyPaymentDeclined
	if res.Status == payments.RequiresAction {
		status, code, key = attemptRequiresAction, shop.Requires3DS, KeyPayment3DS
	}
	msg := res.Message
	if msg == "" {
		msg = "The payment was declined."
	}
	hint := " Try another card."
	if h := savedDeclineHint(att, res); h != "" {
		hint, key = h, KeyPayment3DSSaved
	}
	return c.release(ctx, att.ID, status, res, keyed(errorMessage(string(code), "$.payment_data", msg+hint), key))
}

// abandon gives up an attempt that charged nothing and makes its session
// payable again.
func (c *Checkout) abandon(ctx context.Context, att *attemptRow, why string) (bool, error) {
	c.logger.WarnContext(ctx, "payment attempt charged nothing", "attempt", att.ID, "why", why)
	return c.release(ctx, att.ID, attemptFailed, nil, Message{})
}

// release settles an attempt as status and gives its session back to the
// buyer: the promotion's use the attempt took is given back, and the
// session priced again and, when nothing else is wrong, ready for payment,
// with msg (when it has content) first among its messages.
func (c *Checkout) release(ctx context.Context, attemptID string, status attemptStatus, res *payments.Result, msg Message) (settled bool, err error) {
	err = c.transact(ctx, func(tx *gorm.DB) error {
		settled = false // a transaction run again starts afresh
		ok, err := c.settleAttempt(ctx, tx, attemptID, status, res)
		if err != nil || !ok {
			return err
		}
		settled = true
		var att attemptRow
		if err := tx.Where("id = ?", attemptID).Take(&att).Error; err != nil {
			return err
		}
		// The attempt ends without an order: the use of the promotion it
		// took goes back, before the session is priced again (and before
		// the variants are locked: see promo.go).
		if err := c.givePromoBack(ctx, tx, &att); err != nil {
			return err
		}
		var row sessionRow
		if err := tx.Where("id = ?", att.SessionID).Take(&row).Error; err != nil {
			return err
		}
		if row.Status != InProgress {
			return nil
		}
		now := database.Now(tx)
		if _, err := c.reprice(ctx, tx, &row, row.state(), now); err != nil {
			var se *shop.Error
			if !errors.As(err, &se) {
				return err
			}
			// The session no longer prices as it stands (a variant left
			// the catalog): it holds nothing, is not ready and says why,
			// rather than the attempt staying open forever.
			if err := c.catalog.Release(ctx, tx, row.ID); err != nil {
				return err
			}
			row.Status, row.UpdatedAt = NotReady, now
			row.addMessages(keyed(errorMessage(string(se.Code), se.Param, se.Message), KeyUnpriceable))
		}
		if msg.Content != "" {
			row.addMessages(msg)
		}
		return c.save(tx, &row)
	})
	return settled, err
}

// Reconcile settles the payment attempts left open longer than the grace
// period (a process that ended mid-payment, a lost answer): it asks the
// provider by the attempt's idempotency key and completes the order,
// records the decline, or, when the provider never saw the charge, makes
// the session payable again. It also settles the hosted payment pages paid
// without word from the provider (ReconcileLinks), refunds the surplus
// payments not refunded yet. It returns how many things it settled.
func (c *Checkout) Reconcile(ctx context.Context) (int, error) {
	var open []attemptRow
	err := c.db.WithContext(ctx).Where("status = ? AND updated_at <= ?", attemptPending, c.now().UTC().Add(-c.grace)).
		Order("created_at").Limit(100).Find(&open).Error
	if err != nil {
		return 0, fmt.Errorf("reconcile: %w", err)
	}
	settled := 0
	for i := range open {
		ok, err := c.reconcileAttempt(ctx, &open[i], true)
		if err != nil {
			c.logger.ErrorContext(ctx, "reconcile payment attempt", "attempt", open[i].ID, "err", err)
			continue
		}
		if ok {
			settled++
		}
	}
	links, err := c.ReconcileLinks(ctx)
	if err != nil {
		c.logger.ErrorContext(ctx, "reconcile payment links", "err", err)
	}
	refunded, err := c.RefundSurplus(ctx, "")
	if err != nil {
		c.logger.ErrorContext(ctx, "refund surplus payments", "err", err)
	}
	return settled + links + refunded, nil
}

// ReconcileSession settles at once the open attempts of a session that the
// provider knows, as its webhook asks. An attempt the provider does not show
// (yet) is left to Reconcile, which gives up on it only after the grace
// period.
func (c *Checkout) ReconcileSession(ctx context.Context, sessionID string) error {
	var open []attemptRow
	if err := c.db.WithContext(ctx).Where("session_id = ? AND status = ?", sessionID, attemptPending).Find(&open).Error; err != nil {
		return fmt.Errorf("reconcile session %s: %w", sessionID, err)
	}
	for i := range open {
		if _, err := c.reconcileAttempt(ctx, &open[i], false); err != nil {
			return err
		}
	}
	return nil
}

// reconcileAttempt asks the provider about an open attempt and settles it,
// reporting whether this call did; an attempt the provider has no charge for
// is given up when giveUp is set.
func (c *Checkout) reconcileAttempt(ctx context.Context, att *attemptRow, giveUp bool) (bool, error) {
	res, found, err := c.charger.Lookup(ctx, att.IdempotencyKey)
	if err != nil {
		return false, err
	}
	if !found {
		if !giveUp {
			return false, nil
		}
		return c.abandon(ctx, att, "the provider has no charge with this key")
	}
	return c.settleFound(ctx, att, res)
}

// settleFound settles an attempt with the charge the provider holds under
// its key, reporting whether this call did.
func (c *Checkout) settleFound(ctx context.Context, att *attemptRow, res *payments.Result) (bool, error) {
	if res.Status == payments.Succeeded && !sameCharge(att, res) {
		return true, c.keyTaken(ctx, att, res)
	}
	out, err := c.record(ctx, att, nil, res)
	return out.settled, err
}
