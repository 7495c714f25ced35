package checkout

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// retentionBatch bounds the sessions (and the attempts) one transaction of
// DeleteEnded deletes, so that no statement holds its locks for long and
// the sweep's work is shared fairly with the buyers' writes. Tests make it
// smaller.
var retentionBatch = 500

// droppedSessions are the statuses of the ended sessions DeleteEnded
// deletes: a completed session has an order, which keeps it. They are the
// statuses of the partial index checkout_sessions_ended, in its order.
var droppedSessions = []Status{Canceled, Expired}

// moneylessAttempts are the statuses of the payment attempts that took no
// money: nothing an order or a refund needs.
var moneylessAttempts = []attemptStatus{attemptDeclined, attemptRequiresAction, attemptFailed}

// DeleteEnded deletes what the shop keeps of the checkout sessions that
// ended more than the policy's retention ago (sessions.retention_days), or
// more than UnheldRetention ago for those that never held stock, in
// transactions of at most retentionBatch rows, until none is left or ctx
// is done. It returns how many sessions it deleted.
//
//   - A canceled or expired session goes with its stock holds, payment
//     links and payment attempts, unless a payment arrived for it (a
//     surplus payment, refunded and kept as the record of the money) or an
//     attempt of it is still open; such a session is kept with its rows.
//   - A completed session is kept, with its order: orders, receipts and the
//     staff's get_order read the order's own rows, and the order refers to
//     its session. Only its attempts that took no money (declined,
//     requires_action, failed) are deleted, as are those of a session kept
//     for its surplus payment; the attempts that charged stay.
//   - A cart goes when it expires (CartTTL after its last change), or the
//     retention after it was canceled.
//
// An ended session never changes again and never takes a new attempt, so
// what is deleted is read by nobody. Replicas may run it at once: a row is
// deleted once, and a session that gained an order or a payment meanwhile
// is refused by the foreign keys, failing only that batch.
func (c *Checkout) DeleteEnded(ctx context.Context) (int64, error) {
	now := c.now().UTC()
	cutoff := now.Add(-c.policy.SessionRetention())
	var sessions int64
	for _, pass := range []struct {
		unheld bool
		cutoff time.Time
	}{{true, now.Add(-UnheldRetention)}, {false, cutoff}} {
		for _, status := range droppedSessions {
			for ctx.Err() == nil {
				n, err := c.deleteEndedBatch(ctx, status, pass.cutoff, pass.unheld)
				sessions += n
				if err != nil {
					return sessions, err
				}
				if n < int64(retentionBatch) {
					break
				}
			}
		}
	}
	if err := c.deleteOldCarts(ctx, cutoff); err != nil {
		return sessions, err
	}
	for ctx.Err() == nil {
		n, err := c.deleteMoneylessAttempts(ctx, cutoff)
		if err != nil {
			return sessions, err
		}
		if n < int64(retentionBatch) {
			break
		}
	}
	return sessions, nil
}

// deleteEndedBatch deletes up to retentionBatch sessions of status
// (canceled or expired) that ended before cutoff, with their rows, in one
// transaction; only those that never held stock when unheld is set.
func (c *Checkout) deleteEndedBatch(ctx context.Context, status Status, cutoff time.Time, unheld bool) (int64, error) {
	var deleted int64
	cond := endedBefore(status)
	if unheld {
		cond = unheldBefore(status)
	}
	err := c.transact(ctx, func(tx *gorm.DB) error {
		deleted = 0
		var ids []string
		err := tx.Model(&sessionRow{}).Where(cond, cutoff).
			Where("NOT EXISTS (SELECT 1 FROM orders o WHERE o.checkout_session_id = checkout_sessions.id)").
			Where("NOT EXISTS (SELECT 1 FROM surplus_payments p WHERE p.session_id = checkout_sessions.id)").
			Where("NOT EXISTS (SELECT 1 FROM payment_attempts a WHERE a.session_id = checkout_sessions.id AND a.status = ?)", attemptPending).
			Limit(retentionBatch).Pluck("id", &ids).Error
		if err != nil || len(ids) == 0 {
			return err
		}
		if err := c.catalog.ReleaseHolders(ctx, tx, ids); err != nil {
			return fmt.Errorf("holds of ended sessions: %w", err)
		}
		for _, d := range []struct{ table, column string }{
			{"payment_links", "session_id"}, {"payment_attempts", "session_id"},
		} {
			if err := tx.Exec("DELETE FROM "+d.table+" WHERE "+d.column+" IN ?", ids).Error; err != nil {
				return fmt.Errorf("%s of ended sessions: %w", d.table, err)
			}
		}
		res := tx.Where("id IN ? AND status IN ? AND updated_at <= ?", ids, droppedSessions, cutoff).Delete(&sessionRow{})
		deleted = res.RowsAffected
		return res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("delete ended sessions: %w", err)
	}
	return deleted, nil
}

// endedBefore is the condition of the sessions of status (canceled or
// expired) that ended before a time (its argument). The partial index
// checkout_sessions_ended serves a query that names its statuses, as
// SQLite needs, and one of them apart, which PostgreSQL reads as the first
// column of the index's range: it drops the statuses the index's condition
// implies from the range.
func endedBefore(status Status) string {
	return statusIn(droppedSessions...) + " AND " + statusIn(status) + " AND updated_at <= ?"
}

// unheldBefore is endedBefore for the sessions that never held stock, as
// the partial index checkout_sessions_unheld holds them.
func unheldBefore(status Status) string {
	return "ever_held = FALSE AND " + endedBefore(status)
}

// UnheldRetention is how long a session that ended without ever holding
// stock is kept (whatever sessions.retention_days says, when that is
// longer): such sessions cost storage and record nothing anyone needs.
const UnheldRetention = 24 * time.Hour

// deleteMoneylessAttempts deletes up to retentionBatch attempts that took no
// money, settled before cutoff, of the sessions that ended before cutoff
// and are kept (completed, or with a surplus payment).
func (c *Checkout) deleteMoneylessAttempts(ctx context.Context, cutoff time.Time) (int64, error) {
	res := c.db.WithContext(ctx).Exec(`DELETE FROM payment_attempts WHERE id IN (
  SELECT a.id FROM payment_attempts a JOIN checkout_sessions s ON s.id = a.session_id
  WHERE a.status IN ? AND a.updated_at <= ? AND s.status IN ? AND s.updated_at <= ?
  LIMIT ?)`, moneylessAttempts, cutoff, []Status{Completed, Canceled, Expired}, cutoff, retentionBatch)
	if res.Error != nil {
		return 0, fmt.Errorf("delete settled payment attempts of ended sessions: %w", res.Error)
	}
	return res.RowsAffected, nil
}
