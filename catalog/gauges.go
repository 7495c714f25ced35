package catalog

import (
	"context"
	"fmt"
)

// HeldUnits is how many units of stock checkout sessions hold now: holds
// not expired, and holds of sessions being paid (kept until the payment
// settles), for the operator's metrics.
func (c *Catalog) HeldUnits(ctx context.Context) (int64, error) {
	var n int64
	err := c.db.WithContext(ctx).Model(&holdRow{}).Where("expires_at > ? OR paying", c.now().UTC()).
		Select("COALESCE(SUM(quantity), 0)").Scan(&n).Error
	if err != nil {
		return 0, fmt.Errorf("held units: %w", err)
	}
	return n, nil
}
