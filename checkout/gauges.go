package checkout

import (
	"context"
	"fmt"
	"time"

	"shop/database"
)

// SessionsByStatus counts the checkout sessions kept, by status, for the
// operator's metrics.
func (c *Checkout) SessionsByStatus(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Status string
		N      int64
	}
	if err := c.db.WithContext(ctx).Model(&sessionRow{}).Select("status, COUNT(*) AS n").Group("status").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("sessions by status: %w", err)
	}
	out := map[string]int64{}
	for _, s := range []Status{NotReady, Ready, InProgress, Completed, Canceled, Expired} {
		out[string(s)] = 0
	}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// Unsettled is what completion's reconciler has yet to settle: payment
// attempts whose outcome is unknown and surplus payments not refunded yet,
// with when the oldest of each began (zero: none).
type Unsettled struct {
	Attempts, Surplus            int64
	OldestAttempt, OldestSurplus time.Time
}

// Unsettled reads what the reconciler has yet to settle, for the
// operator's metrics.
func (c *Checkout) Unsettled(ctx context.Context) (Unsettled, error) {
	var u Unsettled
	var err error
	if u.Attempts, u.OldestAttempt, err = database.CountOldest(ctx, c.db.Model(&attemptRow{}).Where("status = ?", attemptPending), "created_at"); err != nil {
		return Unsettled{}, fmt.Errorf("unsettled payment attempts: %w", err)
	}
	if u.Surplus, u.OldestSurplus, err = database.CountOldest(ctx, c.db.Model(&surplusRow{}).Where("status = ?", surplusPending), "created_at"); err != nil {
		return Unsettled{}, fmt.Errorf("unsettled surplus payments: %w", err)
	}
	return u, nil
}
