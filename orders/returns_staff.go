package orders

import (
	"context"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/contract"
	"shop/money"
)

// ListReturnsArgs are list_returns' arguments.
type ListReturnsArgs struct {
	Status string `json:"status,omitempty" jsonschema:"Only returns in this status: requested, canceled, rejected, accepted, refunded."`
	Limit  *int   `json:"limit,omitempty" jsonschema:"Returns per page, 1 to 100 (default 20)."`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page."`
}

// RefineSchema lists the statuses.
func (ListReturnsArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["status"].Enum = []any{"requested", "canceled", "rejected", "accepted", "refunded"}
	s.Properties["cursor"].MaxLength = jsonschema.Ptr(500)
}

// StaffReturn is a return as staff see it: the return, its order and the
// buyer's note.
type StaffReturn struct {
	contract.Return
	OrderID string `json:"order_id"`
	Note    string `json:"note,omitempty"`
	// RefundID is the refund that pays it, once accepted.
	RefundID string `json:"refund_id,omitempty"`
}

// ReturnList is list_returns' answer.
type ReturnList struct {
	Returns    []StaffReturn `json:"returns"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// AcceptReturnArgs are accept_return's arguments.
type AcceptReturnArgs struct {
	ReturnID string `json:"return_id" jsonschema:"The return's id, \"ret_…\", as list_returns shows it."`
	Confirm  string `json:"confirm,omitempty" jsonschema:"The token of this call's preview."`
}

// RejectReturnArgs are reject_return's arguments.
type RejectReturnArgs struct {
	ReturnID string `json:"return_id" jsonschema:"The return's id, \"ret_…\"."`
	Reason   string `json:"reason" jsonschema:"Why, in words the buyer reads (their email and the order show it)."`
}

// AcceptPlan is an acceptance as previewed and as done.
type AcceptPlan struct {
	ReturnID string      `json:"return_id"`
	OrderID  string      `json:"order_id"`
	Number   int64       `json:"number"`
	Refund   money.Price `json:"refund"`
	Restock  []LineQty   `json:"restock"`
	Status   string      `json:"status,omitempty"`
	RefundID string      `json:"refund_id,omitempty"`
}

// AcceptAnswer is what AcceptReturn answers: the preview, or the return accepted.
type AcceptAnswer struct {
	shop.OneOf
	Preview  *Preview[AcceptPlan]
	Accepted *AcceptPlan
}

// ListReturns lists returns, newest first, by status (role viewer): list_returns.
func (r *Returns) ListReturns(ctx context.Context, args ListReturnsArgs) (ReturnList, string, error) {
	if _, err := require(ctx, shop.Viewer); err != nil {
		return ReturnList{}, "", err
	}
	q := r.admin.db.WithContext(ctx).Table("returns")
	if args.Status != "" {
		q = q.Where("status = ?", args.Status)
	}
	k := keyset{timeCol: "created_at", idCol: "id", limit: args.Limit, def: 20, cursor: args.Cursor, fp: fingerprint("list_returns", args.Status)}
	rows, next, err := readPage(q, k, func(x returnRow) (time.Time, string) { return x.CreatedAt, x.ID })
	if err != nil {
		return ReturnList{}, "", err
	}
	out := ReturnList{Returns: make([]StaffReturn, len(rows)), NextCursor: next}
	texts := make([]string, len(rows))
	for i := range rows {
		x := &rows[i]
		out.Returns[i] = StaffReturn{Return: x.contract(), OrderID: x.OrderID, Note: x.Note, RefundID: x.RefundID}
		texts[i] = fmt.Sprintf("%s (order %s): %s, %d line(s), reason %s, refund %d minor units", x.ID, x.OrderID, x.Status, len(x.lines()), x.Reason, x.RefundAmount)
	}
	return out, listText(texts, "No returns.", next), nil
}

// acceptBinding is what an acceptance's confirm token is bound to.
type acceptBinding struct {
	Status  ReturnStatus `json:"status"`
	Amount  int64        `json:"amount"`
	Restock []LineQty    `json:"restock"`
}

// AcceptReturn previews the acceptance of a requested return, or with
// args.Confirm accepts it: its refund goes through the payment provider
// once, and its units go back on sale when the policy restocks (role
// owner, two steps): accept_return.
func (r *Returns) AcceptReturn(ctx context.Context, args AcceptReturnArgs) (AcceptAnswer, string, error) {
	actor, err := require(ctx, shop.Owner)
	if err != nil {
		return AcceptAnswer{}, "", err
	}
	confirm := args.Confirm
	args.Confirm = ""
	a := r.admin
	row, err := loadReturn(ctx, a.db, args.ReturnID)
	if err != nil {
		return AcceptAnswer{}, "", err
	}
	if row.Status != ReturnRequested {
		return AcceptAnswer{}, "", shop.Errorf(shop.Invalid, "$.return_id", "return %s is %s; only a requested return can be accepted", row.ID, row.Status)
	}
	o, lines, err := a.load(ctx, a.db, row.OrderID)
	if err != nil {
		return AcceptAnswer{}, "", err
	}
	cur, err := money.Lookup(o.Currency)
	if err != nil {
		return AcceptAnswer{}, "", fmt.Errorf("order %s: %w", o.ID, err)
	}
	if row.RefundAmount > 0 {
		if err := a.refundable(o); err != nil {
			return AcceptAnswer{}, "", err
		}
	}
	units, back := r.restockOf(lines, row)
	plan := AcceptPlan{ReturnID: row.ID, OrderID: o.ID, Number: o.Number, Refund: cur.Price(row.RefundAmount), Restock: back}
	bind := acceptBinding{Status: row.Status, Amount: row.RefundAmount, Restock: back}
	if confirm == "" {
		p, text, err := preview(ctx, a, actor, "accept_return", args, bind, plan,
			fmt.Sprintf("Preview: accept return %s of order %d, refunding %s and restocking %d line(s).", row.ID, o.Number, plan.Refund.Display, len(back)))
		return AcceptAnswer{Preview: p}, text, err
	}
	var ref *refundRow
	err = a.transact(ctx, func(tx *gorm.DB) error {
		if err := a.redeem(ctx, tx, actor, "accept_return", args, bind, confirm, "the return changed since the preview"); err != nil {
			return err
		}
		ref, err = r.accepted(ctx, tx, actor, new(*row), new(*o), append([]lineRow(nil), lines...), units, args)
		return err
	})
	if err != nil {
		return AcceptAnswer{}, "", err
	}
	if ref == nil {
		plan.Status = string(ReturnRefunded)
		return AcceptAnswer{Accepted: &plan}, fmt.Sprintf("Return %s accepted; nothing was due to refund.", row.ID), nil
	}
	done, err := a.sendRefund(ctx, actor, o, ref, units, RefundPlan{OrderID: o.ID, Number: o.Number, Amount: plan.Refund})
	if err != nil {
		return AcceptAnswer{}, "", err
	}
	plan.Status, plan.RefundID = string(ReturnRefunded), done.RefundID
	return AcceptAnswer{Accepted: &plan}, fmt.Sprintf("Return %s accepted: refunded %s of order %d (refund %s).", row.ID, plan.Refund.Display, o.Number, done.RefundID), nil
}

// accepted accepts a requested return in tx, the confirmation's: a return
// with nothing to refund ends refunded (restocked, the buyer told); any
// other reserves its refund, linked both ways, for sendRefund. row, o and
// lines are copies this try may change.
func (r *Returns) accepted(ctx context.Context, tx *gorm.DB, actor shop.Actor, row *returnRow, o *orderRow, lines []lineRow, units []catalog.HoldLine, args AcceptReturnArgs) (*refundRow, error) {
	a := r.admin
	if err := moveReturn(ctx, tx, row, []ReturnStatus{ReturnRequested}, ReturnAccepted, nil); err != nil {
		return nil, err
	}
	if row.RefundAmount == 0 { // nothing to pay: the return ends here
		if err := moveReturn(ctx, tx, row, []ReturnStatus{ReturnAccepted}, ReturnRefunded, nil); err != nil {
			return nil, err
		}
		if err := a.restock(ctx, tx, o, lines, units); err != nil {
			return nil, err
		}
		return nil, r.told(ctx, tx, o, lines, row, "accept_return", args)
	}
	ref, err := a.reserve(ctx, tx, actor, o, row.RefundAmount, "return "+row.ID, "accept_return", args, units)
	if err != nil {
		return nil, err
	}
	ref.ReturnID = row.ID
	if err := tx.Model(&refundRow{}).Where("id = ?", ref.ID).Update("return_id", row.ID).Error; err != nil {
		return nil, fmt.Errorf("link refund %s to return %s: %w", ref.ID, row.ID, err)
	}
	return ref, tx.Model(&returnRow{}).Where("id = ?", row.ID).Update("refund_id", ref.ID).Error
}

// restockOf is what accepting a return puts back on sale: its units, as
// far as they were taken from stock and not restocked yet, when the policy
// restocks; none otherwise.
func (r *Returns) restockOf(lines []lineRow, row *returnRow) ([]catalog.HoldLine, []LineQty) {
	if !r.policy.restocks() {
		return nil, []LineQty{}
	}
	var units []catalog.HoldLine
	back := []LineQty{}
	picked := pickedOf(lines, row.lines())
	for i := range lines { // in the lines' order: the preview's token is bound to it
		if q := min(picked[i], restockable(lines[i])); q > 0 {
			units = append(units, catalog.HoldLine{VariantID: lines[i].VariantID, Quantity: q})
			back = append(back, LineQty{LineID: lines[i].LineID, Quantity: q})
		}
	}
	return units, back
}

// RejectReturn rejects a requested return with a reason the buyer reads
// (role support): reject_return. Its units may be returned again.
func (r *Returns) RejectReturn(ctx context.Context, args RejectReturnArgs) (ReturnAnswer, string, error) {
	if _, err := require(ctx, shop.Support); err != nil {
		return ReturnAnswer{}, "", err
	}
	if err := checkText("$.reason", args.Reason, maxReasonLen); err != nil {
		return ReturnAnswer{}, "", err
	}
	var row *returnRow
	err := r.admin.transact(ctx, func(tx *gorm.DB) error {
		var err error
		if row, err = loadReturn(ctx, tx, args.ReturnID); err != nil {
			return err
		}
		if row.Status != ReturnRequested {
			return shop.Errorf(shop.Invalid, "$.return_id", "return %s is %s; only a requested return can be rejected", row.ID, row.Status)
		}
		o, lines, err := r.admin.load(ctx, tx, row.OrderID)
		if err != nil {
			return err
		}
		if err := moveReturn(ctx, tx, row, []ReturnStatus{ReturnRequested}, ReturnRejected, map[string]any{"reject_reason": args.Reason}); err != nil {
			return err
		}
		row.RejectReason = args.Reason
		if err := holdUnits(ctx, tx, o.ID, lines, pickedOf(lines, row.lines()), -1); err != nil {
			return err
		}
		return r.told(ctx, tx, o, lines, row, "reject_return", args)
	})
	if err != nil {
		return ReturnAnswer{}, "", err
	}
	return ReturnAnswer{Return: ReturnDetail{Return: row.contract()}}, fmt.Sprintf("Return %s rejected; the buyer is told: %s", row.ID, args.Reason), nil
}

// settleReturn ends, in tx, the return a settled refund paid: refunded
// when the provider refunded (the buyer told), back to requested when it
// refused, so staff may accept it again.
func (r *Orders) settleReturn(ctx context.Context, tx *gorm.DB, o *orderRow, lines []lineRow, ref *refundRow, status refundStatus) error {
	if ref.ReturnID == "" {
		return nil
	}
	row, err := loadReturn(ctx, tx, ref.ReturnID)
	if err != nil {
		return err
	}
	if status == refundFailed {
		return moveReturn(ctx, tx, row, []ReturnStatus{ReturnAccepted}, ReturnRequested, map[string]any{"refund_id": ""})
	}
	if err := moveReturn(ctx, tx, row, []ReturnStatus{ReturnAccepted}, ReturnRefunded, nil); err != nil {
		return err
	}
	if err := r.emailReturn(ctx, tx, o, lines, row, ""); err != nil {
		return err
	}
	return queueWebhook(tx, o.ID, WebhookUpdated, o.ID+"/return/"+row.ID+"/"+string(row.Status))
}
