package orders

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
)

// Status is where an order (orders.status) stands; the package doc draws
// its life cycle. Each move is one of the transitions below (shipOrder,
// deliverOrder, cancelOrder, markRefunded), whose conditional UPDATE names
// the statuses it may leave.
type Status string

// The statuses of an order.
const (
	// StatusConfirmed is an order whose payment succeeded, nothing shipped.
	StatusConfirmed Status = "confirmed"
	// StatusPartiallyShipped is an order some of whose units have shipped.
	StatusPartiallyShipped Status = "partially_shipped"
	// StatusShipped is an order every unit of which has shipped.
	StatusShipped Status = "shipped"
	// StatusDelivered is a shipped order the carrier delivered.
	StatusDelivered Status = "delivered"
	// StatusCanceled is an order canceled before anything shipped.
	StatusCanceled Status = "canceled"
	// StatusRefunded is an order refunded in full (not canceled).
	StatusRefunded Status = "refunded"
)

// The statuses each transition may leave.
var (
	// shipFrom: an order ships (in part or the rest) while not all of it has.
	shipFrom = []Status{StatusConfirmed, StatusPartiallyShipped}
	// deliverFrom: only a shipped order is delivered.
	deliverFrom = []Status{StatusShipped}
	// cancelFrom: only an order nothing of which has shipped is canceled.
	cancelFrom = []Status{StatusConfirmed}
	// refundedFrom: any order but a canceled one becomes refunded when its
	// refunds reach its total.
	refundedFrom = []Status{StatusConfirmed, StatusPartiallyShipped, StatusShipped, StatusDelivered, StatusRefunded}
)

// shipOrder moves an order that shipped more units to partially_shipped, or
// to shipped when every unit has (all).
func shipOrder(ctx context.Context, tx *gorm.DB, o *orderRow, all bool, now time.Time) error {
	to := StatusPartiallyShipped
	if all {
		to = StatusShipped
	}
	return moveOrder(ctx, tx, o, shipFrom, to, now)
}

// deliverOrder moves a shipped order to delivered.
func deliverOrder(ctx context.Context, tx *gorm.DB, o *orderRow, now time.Time) error {
	if err := moveOrder(ctx, tx, o, deliverFrom, StatusDelivered, now); err != nil {
		return err
	}
	// The delivery starts the return window (returns.go).
	if err := tx.WithContext(ctx).Model(&orderRow{}).Where("id = ?", o.ID).Update("delivered_at", now).Error; err != nil {
		return fmt.Errorf("order %s delivered at: %w", o.ID, err)
	}
	o.DeliveredAt = &now
	return nil
}

// cancelOrder moves a confirmed order to canceled.
func cancelOrder(ctx context.Context, tx *gorm.DB, o *orderRow, now time.Time) error {
	return moveOrder(ctx, tx, o, cancelFrom, StatusCanceled, now)
}

// markRefunded moves an order that is not canceled to refunded (its
// refunds reached its total).
func markRefunded(ctx context.Context, tx *gorm.DB, o *orderRow, now time.Time) error {
	return moveOrder(ctx, tx, o, refundedFrom, StatusRefunded, now)
}

// moveOrder is the conditional UPDATE of every transition: the order moves
// to to only when its status is one of from and is still the status it was
// read in (o.Status), so that of two staff acting at once one wins and the
// other is told to look again (a conflict, as for an order read in a
// status not in from: callers check o.Status against from first, to say
// why the move is not allowed).
func moveOrder(ctx context.Context, tx *gorm.DB, o *orderRow, from []Status, to Status, now time.Time) error {
	res := tx.WithContext(ctx).Model(&orderRow{}).
		Where("id = ? AND status IN ?", o.ID, from).Where("status = ?", o.Status).
		Updates(map[string]any{"status": to, "updated_at": now})
	if res.Error != nil {
		return fmt.Errorf("order %s status: %w", o.ID, res.Error)
	}
	if res.RowsAffected != 1 {
		return shop.Errorf(shop.Conflict, "$.order_id", "the order changed meanwhile; look at it again with get_order")
	}
	o.Status = to
	return nil
}

// joinStatuses lists statuses, comma-separated.
func joinStatuses(ss []Status) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}
