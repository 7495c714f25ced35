package checkout

import (
	"context"
	"time"

	"gorm.io/gorm"

	"shop"
)

// A session lives the TTL after its last real change, and never past its
// lifetime from its creation (policy sessions.lifetime_hours). A real change
// is one the buyer makes (a field sent with another value) or one of the
// session's figures (a price, stock, the options, a problem). What the
// buyer agreed to (the lines, the totals, the option and its delivery
// window, the expiry) does not move otherwise: not on an update that changes
// nothing, not when complete_checkout claims the session, not when a decline
// gives it back, not when a payment link is made. updated_at records the
// last real change.

// expiry is when a session priced at now expires: the TTL from now, but no
// later than the end of its lifetime.
func (c *Checkout) expiry(row *sessionRow, now time.Time) time.Time {
	t := now.Add(c.ttl)
	if end := c.lifetimeEnd(row); end.Before(t) {
		t = end
	}
	return t.Truncate(time.Second)
}

// lifetimeEnd is when a session expires whatever happens: its creation plus
// the policy's session lifetime.
func (c *Checkout) lifetimeEnd(row *sessionRow) time.Time {
	return row.CreatedAt.Add(c.policy.SessionLifetime()).Truncate(time.Second)
}

// keepAgreed, the last step of reprice, undoes what a pricing that changed
// nothing moved: when the buyer's input is as it was (st.changed is false),
// the session has not expired and row is priced as was (samePricing), row
// keeps was's expiry, its last change and the delivery window of its
// options, and its holds that expiry (extend: not holds being paid, which
// last until the payment settles); it answers whether it did. was is the
// row before the pricing, prev its snapshot.
func (c *Checkout) keepAgreed(ctx context.Context, tx *gorm.DB, was, row *sessionRow, prev snapshot, st state, now time.Time, extend bool) (kept bool, err error) {
	if st.changed || !now.Before(was.ExpiresAt) || !samePricing(was, row) {
		return false, nil
	}
	row.Priced.Options = prev.Options // the same options, with the dates the buyer saw
	row.ExpiresAt, row.UpdatedAt = was.ExpiresAt, was.UpdatedAt
	if row.Status != Ready || !extend {
		return true, nil // it holds nothing, or its holds are being paid
	}
	return true, c.catalog.ExtendHolds(ctx, tx, row.ID, row.ExpiresAt)
}

// samePricing reports whether row is priced as was: the same status (a
// session being paid counts as ready), total, lines, options but for their
// delivery estimates (which are counted from the time of pricing), chosen
// option, promotion and messages, but for the messages about a past payment
// (a decline, a payment page left), which are not the pricing's.
func samePricing(was, row *sessionRow) bool {
	status := was.Status
	if status == InProgress {
		status = Ready
	}
	if status != row.Status || was.Total != row.Total || was.Currency != row.Currency {
		return false
	}
	return figures(was.Priced) == figures(row.Priced)
}

// figures is a snapshot as samePricing compares it: encoded, without its
// delivery estimates and the messages about a past payment.
func figures(snap snapshot) string {
	snap = snap.clone() // the row's own are left as they are
	for i := range snap.Options {
		snap.Options[i].EarliestDeliveryTime, snap.Options[i].LatestDeliveryTime = time.Time{}, time.Time{}
	}
	kept := snap.Messages[:0:0] // nil stays nil, as it was stored
	for _, m := range snap.Messages {
		switch m.Code {
		case PaymentCanceled, string(shop.PaymentDeclined), string(shop.Requires3DS):
		default:
			kept = append(kept, m)
		}
	}
	snap.Messages = kept
	return marshal(snap)
}
