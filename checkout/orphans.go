package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"shop/database"
	"shop/orders"
	"shop/payments"
)

// PaymentLister is a provider that lists the shop's succeeded charges made
// since a time, with their metadata: payments.Stripe and payments.Sandbox
// satisfy it.
type PaymentLister interface {
	Payments(ctx context.Context, since time.Time) ([]payments.Result, error)
}

// ScanWindow is how far back ScanPayments asks the provider for payments.
const ScanWindow = 7 * 24 * time.Hour

// errNotPayable ends the claim of a payment that no attempt accounts for
// when the session no longer costs what was paid.
var errNotPayable = errors.New("the session is not payable at the payment's amount")

// ScanPayments asks the provider for the shop's succeeded payments of the
// last ScanWindow and settles those no attempt accounts for (see
// SettlePayment), so that a payment the shop lost its records of (a
// database restored from before it) is settled without waiting for a
// webhook that may never come. It returns how many it settled.
func (c *Checkout) ScanPayments(ctx context.Context) (int, error) {
	lister, ok := c.charger.(PaymentLister)
	if !ok {
		return 0, nil
	}
	found, err := lister.Payments(ctx, c.now().Add(-ScanWindow))
	if err != nil {
		return 0, fmt.Errorf("payments without an attempt: %w", err)
	}
	settled := 0
	var errs []error
	for i := range found {
		ok, err := c.settlePayment(ctx, &found[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("payment %s: %w", found[i].Reference, err))
		}
		if ok {
			settled++
		}
	}
	return settled, errors.Join(errs...)
}

// SettlePayment settles the charge the provider holds under an idempotency
// key, as the webhook reports it (asking the provider rather than trusting
// the event's copy). A succeeded charge made by the shop (its metadata
// names the session and the key) that no attempt accounts for becomes the
// session's order when the session is still payable at that amount, as
// after a crash; otherwise it is refunded, recorded as a surplus payment
// with an audit event. A charge of an attempt given up on is refunded; one
// of a pending attempt is left to that attempt's settlement.
func (c *Checkout) SettlePayment(ctx context.Context, key string) error {
	res, found, err := c.charger.Lookup(ctx, key)
	if err != nil || !found || res.Status != payments.Succeeded {
		return err
	}
	_, err = c.settlePayment(ctx, res)
	return err
}

// settlePayment settles a succeeded charge as SettlePayment says, reporting
// whether this call did.
func (c *Checkout) settlePayment(ctx context.Context, res *payments.Result) (bool, error) {
	key, sessionID := res.Metadata["idempotency_key"], res.Metadata["checkout_session_id"]
	if res.Metadata[payments.ChargedBy] != payments.ChargedByShop || key == "" || sessionID == "" || (res.Amount > 0 && res.Refunded >= res.Amount) {
		return false, nil // not the shop's charge, or refunded already
	}
	var att attemptRow
	err := c.db.WithContext(ctx).Where("idempotency_key = ?", key).Take(&att).Error
	switch {
	case err == nil:
		if att.Status != attemptFailed {
			// Settled with its outcome, or pending: settled by whoever
			// learns it (the caller, ReconcileSession, Reconcile after
			// its grace period).
			return false, nil
		}
		return c.settleFound(ctx, &att, res) // given up on, the charge made after all: refunded
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return false, fmt.Errorf("payment attempt %s: %w", key, err)
	}
	// No attempt has the key: the payment's attempt was lost.
	for range 2 { // a claim that finds the session moved decides again
		row, payable, err := c.decideLost(ctx, res, key, sessionID)
		if err != nil || row == nil || !payable {
			return row != nil && err == nil, err
		}
		ok, err := c.recoverOrder(ctx, row, res, key)
		if !errors.Is(err, errNotPayable) {
			return ok, err
		}
	}
	return false, nil
}

// decideLost reads, with its row locked, the session of a succeeded charge
// that no attempt had, and decides: row is nil when there is nothing to do
// (something accounts for the charge by now, an attempt of the session is
// in flight, or the session is not this shop's); payable when the session
// may become the order; otherwise the charge is recorded, in the same
// transaction, as a surplus payment, and refunded after it.
func (c *Checkout) decideLost(ctx context.Context, res *payments.Result, key, sessionID string) (out *sessionRow, payable bool, err error) {
	err = c.transact(ctx, func(tx *gorm.DB) error {
		out, payable = nil, false // a transaction run again starts afresh
		var row sessionRow
		err := tx.Clauses(database.Lock()).Where("id = ?", sessionID).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			c.logger.ErrorContext(ctx, "a payment names a checkout session this shop does not have: refund it by hand if it is this shop's",
				"session", sessionID, "reference", res.Reference, "amount", res.Amount)
			return nil
		}
		if err != nil {
			return err
		}
		var n int64
		err = database.QueryRow(tx, "SELECT (SELECT COUNT(*) FROM payment_attempts WHERE idempotency_key = ? OR reference = ?) + "+
			"(SELECT COUNT(*) FROM surplus_payments WHERE reference = ?)", key, res.Reference, res.Reference).Scan(&n)
		if err != nil || n > 0 || row.Status == InProgress {
			return err // accounted for by now, or an attempt in flight settles first
		}
		out = &row
		if row.Status == Ready && row.Total == res.Amount && row.Currency == res.Currency && c.now().Before(row.ExpiresAt) {
			payable = true
			return nil
		}
		c.logger.ErrorContext(ctx, "a payment the shop had no attempt for (its records were lost), for a session no longer payable at its amount: refunding it",
			"session", sessionID, "reference", res.Reference, "amount", res.Amount, "status", row.Status)
		return c.recordSurplus(ctx, tx, row.ID, c.charger.Name(), res.Reference, res.Amount, res.Currency, lostReason(&row, res))
	})
	if err == nil && out != nil && !payable {
		c.refundNow(ctx, sessionID)
	}
	return out, payable, err
}

// lostReason says why a payment no attempt had is not the session's order.
func lostReason(row *sessionRow, res *payments.Result) string {
	switch {
	case row.Status == Completed:
		return reasonPaidTwice
	case row.Status == Canceled || row.Status == Expired:
		return reasonSessionEnd
	case row.Total != res.Amount || row.Currency != res.Currency:
		return reasonAmount
	case row.Status == Ready:
		return reasonSessionEnd // past its expiry
	}
	return reasonChanged
}

// recoverOrder makes a payable session the order of a succeeded charge that
// no attempt had, as the crash path does: the session is claimed with an
// attempt under the charge's key (prices and stock checked again), which is
// finished with the charge. It answers errNotPayable when the claim found
// the session moved, for the caller to decide again.
func (c *Checkout) recoverOrder(ctx context.Context, row *sessionRow, res *payments.Result, key string) (bool, error) {
	att, err := c.claim(ctx, row, row.state(), false, func(tx *gorm.DB, prior int64) (*attemptRow, error) {
		if row.Total != res.Amount || row.Currency != res.Currency {
			return nil, errNotPayable
		}
		return c.newAttempt(ctx, tx, row, prior, c.charger.Name(), "", key, "")
	})
	switch {
	case err != nil:
		return false, err
	case att == nil: // prices or stock moved: not ready now
		return false, errNotPayable
	}
	c.logger.WarnContext(ctx, "a payment the shop had no attempt for (its records were lost) becomes the session's order",
		"session", row.ID, "reference", res.Reference, "attempt", att.ID)
	out, err := c.finish(ctx, att, row, res)
	if err != nil {
		return false, err
	}
	if out.completed != nil {
		c.known.forget(row.ID)
		c.closeLinks(ctx, row.ID, "")
		err = c.orders.Audit(ctx, nil, orders.Event{Actor: "checkout", Action: "payment.recovered", OrderID: out.order.ID, SessionID: row.ID,
			Arguments: map[string]any{"attempt_id": att.ID, "reference": res.Reference, "amount": res.Amount, "currency": res.Currency}})
	}
	return out.settled, err
}
