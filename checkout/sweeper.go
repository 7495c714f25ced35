package checkout

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// ExpireDue marks expired the open sessions past their expiry and drops the
// stock holds that have run out. It returns how many sessions expired.
// Replicas may run it at once: each row changes once.
func (c *Checkout) ExpireDue(ctx context.Context) (int64, error) {
	now := c.now().UTC()
	var expired int64
	for _, from := range []Status{NotReady, Ready} { // one status at a time, to tell SessionMoved
		res := c.db.WithContext(ctx).Model(&sessionRow{}).
			Where("status = ? AND expires_at <= ?", from, now).
			Updates(map[string]any{"status": Expired, "version": gorm.Expr("version + 1"), "updated_at": now})
		if res.Error != nil {
			return expired, fmt.Errorf("expire sessions: %w", res.Error)
		}
		c.noteMove(c.db, from, Expired, res.RowsAffected)
		expired += res.RowsAffected
	}
	if _, err := c.catalog.ReleaseExpired(ctx); err != nil {
		return expired, err
	}
	return expired, nil
}
