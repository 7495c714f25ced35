package orders

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database"
)

// Returns are the returns buyers start from the chat (docs/returns.md):
// the buyer's request_return and cancel_return, the staff's list_returns,
// accept_return (the refund, through refund_order's machinery) and
// reject_return.
//
// A return moves (returns.status, ReturnStatus):
//
//	requested ─cancel_return (buyer)──→ canceled
//	    ├─────reject_return (staff)───→ rejected
//	    └─────accept_return (staff)───→ accepted ─refund succeeded─→ refunded
//	                                       └───refund refused─→ requested
//
// A requested or accepted return holds its units (order_lines.returned,
// raised by a conditional update that never passes the units shipped), so
// the same units are never returned twice; canceled and rejected give them
// back. Its refund is reserved like refund_order's (orders.refunded +
// amount <= total), so returns and refunds together never pass what was paid.
type Returns struct {
	admin  *Admin
	policy ReturnPolicy
}

// NewReturns returns the returns of a's orders under policy.
func NewReturns(a *Admin, policy ReturnPolicy) *Returns {
	return &Returns{admin: a, policy: policy}
}

// ReturnStatus is where a return stands.
type ReturnStatus string

// The statuses of a return.
const (
	ReturnRequested ReturnStatus = "requested"
	ReturnCanceled  ReturnStatus = "canceled"
	ReturnRejected  ReturnStatus = "rejected"
	ReturnAccepted  ReturnStatus = "accepted"
	ReturnRefunded  ReturnStatus = "refunded"
)

// ReturnReasons are the reasons a buyer may give.
var ReturnReasons = []string{"damaged", "defective", "wrong_item", "not_as_described", "no_longer_needed", "other"}

// Bounds of a return request.
const (
	maxReturnLines = 50
	maxReturnNote  = 1000
)

// returnRow is a row of returns; Lines is JSON [{line_item_id, quantity}].
type returnRow struct {
	ID           string `gorm:"primaryKey"`
	OrderID      string
	Status       ReturnStatus
	Reason       string
	Note         string
	Lines        string
	RefundAmount int64
	RefundID     string
	RejectReason string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (returnRow) TableName() string { return "returns" }

// lines decodes the return's lines.
func (r *returnRow) lines() []contract.ReturnLine {
	var out []contract.ReturnLine
	_ = unmarshalIf(r.Lines, &out) // written by marshal only
	return out
}

func (r *returnRow) contract() contract.Return {
	return contract.Return{ID: r.ID, Status: string(r.Status), Lines: r.lines(), Reason: r.Reason, RefundAmount: r.RefundAmount,
		RejectReason: r.RejectReason, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// moveReturn is every transition of a return: a conditional UPDATE from
// the statuses it may leave, so of two callers at once one wins; the
// loser's transaction rolls back with a conflict.
func moveReturn(ctx context.Context, tx *gorm.DB, r *returnRow, from []ReturnStatus, to ReturnStatus, set map[string]any) error {
	if set == nil {
		set = map[string]any{}
	}
	now := database.Now(tx).UTC()
	set["status"], set["updated_at"] = to, now
	res := tx.WithContext(ctx).Model(&returnRow{}).Where("id = ? AND status IN ?", r.ID, from).Updates(set)
	if res.Error != nil {
		return fmt.Errorf("return %s status: %w", r.ID, res.Error)
	}
	if res.RowsAffected != 1 {
		return shop.Errorf(shop.Conflict, "$.return_id", "return %s changed meanwhile (someone else acted on it); look at it again", r.ID)
	}
	r.Status, r.UpdatedAt = to, now
	return nil
}

// holdUnits marks q more units of each line returned, never more than
// shipped (reserve) or gives them back (release, q negative).
func holdUnits(ctx context.Context, tx *gorm.DB, orderID string, lines []lineRow, picked map[int]int64, sign int64) error {
	for i, q := range picked {
		q *= sign
		res := tx.WithContext(ctx).Model(&lineRow{}).
			Where("order_id = ? AND position = ? AND returned + ? <= fulfilled AND returned + ? >= 0", orderID, lines[i].Position, q, q).
			Update("returned", gorm.Expr("returned + ?", q))
		if res.Error != nil {
			return fmt.Errorf("return units of %s: %w", orderID, res.Error)
		}
		if res.RowsAffected != 1 {
			return shop.Errorf(shop.Conflict, "$.lines", "these units of %s are in another return already (or the order changed meanwhile); look at the order again", lines[i].Name)
		}
	}
	return nil
}

// picked resolves a return's lines against the order's, by index.
func pickedOf(lines []lineRow, rl []contract.ReturnLine) map[int]int64 {
	out := map[int]int64{}
	for _, l := range rl {
		for i := range lines {
			if lines[i].LineID == l.LineItemID {
				out[i] += l.Quantity
			}
		}
	}
	return out
}

// returnsOf reads the returns of the orders ids, oldest first, by order.
func returnsOf(ctx context.Context, db *gorm.DB, ids []string) (map[string][]contract.Return, error) {
	var rows []returnRow
	if err := db.WithContext(ctx).Where("order_id IN ?", ids).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read returns: %w", err)
	}
	out := make(map[string][]contract.Return, len(ids))
	for i := range rows {
		out[rows[i].OrderID] = append(out[rows[i].OrderID], rows[i].contract())
	}
	return out, nil
}

// loadReturn reads a return by id in db.
func loadReturn(ctx context.Context, db *gorm.DB, id string) (*returnRow, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, shop.Errorf(shop.Missing, "$.return_id", "send the return's id (ret_…), as the order's returns list it")
	}
	var r returnRow
	err := db.WithContext(ctx).Where("id = ?", id).Take(&r).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, shop.Errorf(shop.NotFound, "$.return_id", "no return has id %q; the order's returns list them", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load return %s: %w", id, err)
	}
	return &r, nil
}

// lastShipped is when the order's last parcel shipped (zero for none).
func lastShipped(ctx context.Context, tx *gorm.DB, orderID string) (time.Time, error) {
	var f fulfilmentRow
	err := tx.WithContext(ctx).Where("order_id = ?", orderID).Order("created_at DESC").Limit(1).Find(&f).Error
	if err != nil {
		return time.Time{}, fmt.Errorf("read shipments of %s: %w", orderID, err)
	}
	return f.CreatedAt, nil
}

// refundFor is what returning picked units refunds: each line's total
// (after discounts, with tax) in proportion to the units, less the return
// shipping fee, never below 0.
func (p ReturnPolicy) refundFor(lines []lineRow, picked map[int]int64) int64 {
	var sum int64
	idx := make([]int, 0, len(picked))
	for i := range picked {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		l := lines[i]
		if l.Quantity > 0 {
			sum += l.Total * picked[i] / l.Quantity
		}
	}
	return max(0, sum-p.ShippingFee)
}
