package checkout

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/database"
)

// payTier is one cap of card payments an hour: the sessions it counts (by
// a condition on s, the session, with one argument, value), the lock its
// claims take, and who it caps, for the message.
type payTier struct {
	where, value, lock string
	cap                int64
	who                string
}

// paymentCaps refuses, in the claim's transaction of complete_checkout, a
// card payment of row's session past the policy's caps (Limits): a session
// with DeclinesBeforeLock declined payments in the last
// DeclineLockMinutes, and the sessions of a buyer (the one who created
// them) or of a client address with PaymentsPerHour or
// PaymentsPerAddressHour attempts in the last hour (and an IPv6 address's
// /48 with NetworkMultiple times as many, addrlimits.go). Declines in a row are
// card testing; the payment page is the provider's, with its own checks,
// and stays open. The claim takes the buyer's and the address's locks here,
// after the promotion's and before the variants' (the order of
// holdlimits.go and addrlimits.go), so concurrent claims count each other.
// Everything is counted in one statement, after the locks, the session's
// payment attempts so far included: their number is what paymentCaps
// answers, for the attempt the claim writes (newAttempt).
func (c *Checkout) paymentCaps(ctx context.Context, tx *gorm.DB, row *sessionRow, now time.Time) (int64, error) {
	tx = tx.WithContext(ctx)
	l := c.policy.BuyerLimits()
	lock := time.Duration(l.DeclineLockMinutes) * time.Minute
	var counted []payTier
	for i, by := range []payTier{
		{"s.buyer_key = ?", row.BuyerKey, catalog.BuyerLock(row.BuyerKey), l.PaymentsPerHour, "one buyer"},
		{"s.buyer_address = ?", row.BuyerAddress, catalog.AddressLock(row.BuyerAddress), l.PaymentsPerAddressHour * l.forAddress(row.BuyerAddress).scale, "one network address"},
		// The address's lock is its /48's: taken above.
		{"s." + byNetwork, row.BuyerNetwork, "", l.PaymentsPerAddressHour * l.forNetwork(row.BuyerNetwork).scale, "one network (an IPv6 /48)"},
	} {
		if by.value == "" || by.cap >= maxPerHour { // none, or the caps are lifted
			continue
		}
		if by.lock != "" {
			if err := database.LockKey(tx, by.lock); err != nil {
				return 0, fmt.Errorf("lock payer: %w", err)
			}
		}
		if i == 0 && !shop.IsHostUser(by.value) {
			continue // a buyer keyed by the address: the address's cap is theirs
		}
		counted = append(counted, by)
	}
	declines, attempts, n, err := c.countPayments(tx, row, counted, now.Add(-lock).UTC(), now)
	if err != nil {
		return 0, err
	}
	if declines >= l.DeclinesBeforeLock {
		return 0, shop.Errorf(shop.PaymentDeclined, "$.payment_data.token",
			"%d payments of this checkout were declined in the last %d minutes, so it takes no more card payments for now: try another card in %d minutes, or pay on the payment page (create_payment_link)",
			declines, l.DeclineLockMinutes, l.DeclineLockMinutes)
	}
	for i, by := range counted {
		if n[i] >= by.cap {
			return 0, shop.Errorf(shop.Unavailable, "$.payment_data.token",
				"at most %d card payments an hour may be tried for %s, and that many were: nothing was charged; try again later, or pay on the payment page (create_payment_link)", by.cap, by.who)
		}
	}
	return attempts, nil
}

// countPayments counts, in one statement, the session's payments declined
// since declinedAfter, all its payment attempts, and the attempts of the
// last hour of each tier's sessions (n, in tiers' order).
func (c *Checkout) countPayments(tx *gorm.DB, row *sessionRow, tiers []payTier, declinedAfter, now time.Time) (declines, attempts int64, n []int64, err error) {
	since := now.Add(-time.Hour).UTC()
	// A session pays only within its lifetime: a day's margin bounds the
	// sessions read.
	created := now.Add(-c.policy.SessionLifetime() - 24*time.Hour).UTC()
	var q strings.Builder
	q.WriteString("SELECT (SELECT COUNT(*) FROM payment_attempts WHERE session_id = ? AND status = ? AND updated_at > ?)," +
		" (SELECT COUNT(*) FROM payment_attempts WHERE session_id = ?)")
	args := []any{row.ID, attemptDeclined, declinedAfter, row.ID}
	for _, by := range tiers {
		// Counting stops at the cap: past it the answer is the same.
		q.WriteString(", (SELECT COUNT(*) FROM (SELECT 1 FROM payment_attempts a JOIN checkout_sessions s ON s.id = a.session_id" +
			" WHERE " + by.where + " AND s.created_at > ? AND a.created_at > ? LIMIT ?) capped)")
		args = append(args, by.value, created, since, by.cap)
	}
	n = make([]int64, len(tiers))
	dest := []any{&declines, &attempts}
	for i := range n {
		dest = append(dest, &n[i])
	}
	if err := database.QueryRow(tx, q.String(), args...).Scan(dest...); err != nil {
		return 0, 0, nil, fmt.Errorf("count payment attempts: %w", err)
	}
	return declines, attempts, n, nil
}
