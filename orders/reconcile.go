package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"shop"
	"shop/catalog"
)

// reconciler is who settles refunds left pending, as the audit log names it.
var reconciler = shop.Actor{Role: "system", Label: "refund reconciler"}

// ReconcileRefunds settles the refunds left pending longer than grace (the
// provider's answer was lost, or the process ended between recording a
// refund and settling it): it asks the provider again with the refund's own
// idempotency key, so nothing is refunded twice, and settles it as the staff
// member's call would have: units back on sale and the order refunded on
// success, the reserved amount given back on a refusal. A refund whose
// answer is still unknown stays pending for the next run. It returns how
// many it settled. Replicas may run it at once: each refund settles once.
func (a *Admin) ReconcileRefunds(ctx context.Context, grace time.Duration) (int, error) {
	var due []refundRow
	err := a.db.WithContext(ctx).Where("status = ? AND updated_at <= ?", refundPending, a.now().UTC().Add(-grace)).
		Order("created_at").Limit(100).Find(&due).Error
	if err != nil {
		return 0, fmt.Errorf("pending refunds: %w", err)
	}
	settled := 0
	var errs []error
	for i := range due {
		ref := &due[i]
		o, _, err := a.load(ctx, a.db, ref.OrderID)
		if err != nil {
			errs = append(errs, fmt.Errorf("refund %s: %w", ref.ID, err))
			continue
		}
		var restock []catalog.HoldLine
		if ref.Restock != "" {
			if err := json.Unmarshal([]byte(ref.Restock), &restock); err != nil {
				errs = append(errs, fmt.Errorf("refund %s: restock: %w", ref.ID, err))
				continue
			}
		}
		_, err = a.sendRefund(ctx, reconciler, o, ref, restock, RefundPlan{OrderID: o.ID, Number: o.Number})
		switch code := shop.ErrorCode(err); {
		case err == nil, code == shop.Invalid: // settled: refunded, or refused and given back
			settled++
		case code == shop.Unavailable: // still unknown: next run
		default:
			errs = append(errs, fmt.Errorf("refund %s: %w", ref.ID, err))
		}
	}
	return settled, errors.Join(errs...)
}
