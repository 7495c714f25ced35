package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/money"
	"shop/payments"
)

// refundStatus is where a refund (refunds) stands: recorded pending, its
// amount reserved on the order, before the provider is called; settled
// after, by the staff member's call or the reconciler (ReconcileRefunds).
type refundStatus string

// The statuses of a refund.
const (
	refundPending   refundStatus = "pending"
	refundSucceeded refundStatus = "succeeded"
	refundFailed    refundStatus = "failed"
)

// settleRefund moves a pending refund, in tx, to its outcome (succeeded or
// failed, with the provider's reference when it gave one). A refund that is
// not pending any more (another settler won) is an error: the caller's
// transaction, which would settle it twice, is rolled back.
func settleRefund(ctx context.Context, tx *gorm.DB, id string, to refundStatus, reference *string, now time.Time) error {
	set := map[string]any{"status": to, "updated_at": now}
	if reference != nil {
		set["reference"] = *reference
	}
	res := tx.WithContext(ctx).Model(&refundRow{}).Where("id = ? AND status IN ?", id, []refundStatus{refundPending}).Updates(set)
	if res.Error != nil || res.RowsAffected != 1 {
		return fmt.Errorf("settle refund %s: %v (%d rows)", id, res.Error, res.RowsAffected)
	}
	return nil
}

// refundRow is a row of refunds.
type refundRow struct {
	ID             string `gorm:"primaryKey"`
	OrderID        string
	Amount         int64
	Reason         string
	IdempotencyKey string
	Status         refundStatus
	Reference      string
	Actor          string
	// Restock is the JSON of the units the refund puts back on sale when it
	// succeeds ("" for none).
	Restock string
	// ReturnID is the return the refund pays ("" for refund_order's own).
	ReturnID  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (refundRow) TableName() string { return "refunds" }

// Refund previews a refund of an order, or with args.Confirm makes it
// through the payment provider (role owner, two steps): refund_order.
func (a *Admin) Refund(ctx context.Context, args RefundArgs) (RefundAnswer, string, error) {
	actor, confirm, err := begin(ctx, &args)
	if err != nil {
		return RefundAnswer{}, "", err
	}
	o, lines, err := a.load(ctx, a.db, args.OrderID)
	if err != nil {
		return RefundAnswer{}, "", err
	}
	plan, restock, err := a.planRefund(o, lines, args)
	if err != nil {
		return RefundAnswer{}, "", err
	}
	// The token is bound to what the preview showed would happen: the
	// amount (what was left, when the call names none), the units put back
	// and the order's status.
	bind := refundBinding{Status: o.Status, Amount: plan.Amount.Amount, Restock: restock}
	if confirm == "" {
		p, text, err := preview(ctx, a, actor, "refund_order", args, bind, plan,
			fmt.Sprintf("Preview: refund %s of order %d; %s would be left.", plan.Amount.Display, plan.Number, plan.LeftAfter.Display))
		return RefundAnswer{Preview: p}, text, err
	}
	stale := fmt.Sprintf("order %d changed since the preview: it is %s now, and this call would refund %s, leaving %s",
		o.Number, o.Status, plan.Amount.Display, plan.LeftAfter.Display)
	var ref *refundRow
	err = a.transact(ctx, func(tx *gorm.DB) error {
		if err := a.redeem(ctx, tx, actor, "refund_order", args, bind, confirm, stale); err != nil {
			return err
		}
		ref, err = a.reserve(ctx, tx, actor, o, plan.Amount.Amount, args.Reason, "refund_order", args, restock)
		return err
	})
	if err != nil {
		return RefundAnswer{}, "", err
	}
	done, err := a.sendRefund(ctx, actor, o, ref, restock, plan)
	if err != nil {
		return RefundAnswer{}, "", err
	}
	return RefundAnswer{Refund: done}, refundText(done), nil
}

// refundText is what a refund that went through says.
func refundText(p *RefundPlan) string {
	return fmt.Sprintf("Refunded %s of order %d (refund %s); %s left.", p.Amount.Display, p.Number, p.RefundID, p.LeftAfter.Display)
}

// refundBinding is what a refund's confirm token is bound to beside its
// arguments: what it does and the order's status it was planned in.
type refundBinding struct {
	Status  Status             `json:"status"`
	Amount  int64              `json:"amount"`
	Restock []catalog.HoldLine `json:"restock"`
}

// planRefund checks a refund against the order as read, and returns it with
// the lines it restocks.
func (a *Admin) planRefund(o *orderRow, lines []lineRow, args RefundArgs) (RefundPlan, []catalog.HoldLine, error) {
	cur, err := money.Lookup(o.Currency)
	if err != nil {
		return RefundPlan{}, nil, fmt.Errorf("order %s: %w", o.ID, err)
	}
	if err := a.refundable(o); err != nil {
		return RefundPlan{}, nil, err
	}
	left := o.Total - o.Refunded
	amount := left
	if args.Amount != nil {
		amount = *args.Amount
	}
	if amount < 1 || amount > left {
		return RefundPlan{}, nil, shop.Errorf(shop.Invalid, "$.amount", "%s is left to refund of order %d (%s paid, %s refunded); send from 1 to %d",
			cur.Format(left), o.Number, cur.Format(o.Total), cur.Format(o.Refunded), left)
	}
	picked, err := pick("$.restock", lines, args.Restock, restockable)
	if err != nil {
		return RefundPlan{}, nil, err
	}
	var restock []catalog.HoldLine
	for i, q := range picked {
		restock = append(restock, catalog.HoldLine{VariantID: lines[i].VariantID, Quantity: q})
	}
	return RefundPlan{
		OrderID: o.ID, Number: o.Number, Amount: cur.Price(amount),
		RefundedAfter: cur.Price(o.Refunded + amount), LeftAfter: cur.Price(left - amount), Restock: args.Restock,
	}, restock, nil
}

// refundable refuses refunds of an order paid through another provider or
// with nothing left to refund.
func (a *Admin) refundable(o *orderRow) error {
	if o.PaymentProvider != a.refunder.Name() {
		return shop.Errorf(shop.Invalid, "$.order_id", "order %d was paid through %s, but the shop now runs %s; refund it there", o.Number, o.PaymentProvider, a.refunder.Name())
	}
	if o.Refunded >= o.Total {
		return shop.Errorf(shop.Invalid, "$.order_id", "order %d is refunded in full already", o.Number)
	}
	return nil
}

// reserve records a refund in tx before the provider is called: the
// order's refunded amount grows by a conditional update that can never
// pass its total, whatever runs at the same time.
func (a *Admin) reserve(ctx context.Context, tx *gorm.DB, actor shop.Actor, o *orderRow, amount int64, reason, tool string, args any, restock []catalog.HoldLine) (*refundRow, error) {
	res := tx.WithContext(ctx).Model(&orderRow{}).Where("id = ? AND refunded + ? <= total", o.ID, amount).
		Updates(map[string]any{"refunded": gorm.Expr("refunded + ?", amount), "updated_at": a.now().UTC()})
	if res.Error != nil {
		return nil, fmt.Errorf("reserve refund of %s: %w", o.ID, res.Error)
	}
	if res.RowsAffected != 1 {
		return nil, shop.Errorf(shop.Invalid, "$.amount", "order %d no longer has that much left to refund (another refund ran meanwhile); call get_order and try again", o.Number)
	}
	now := a.now().UTC()
	id := "re_" + randomID()
	ref := &refundRow{ID: id, OrderID: o.ID, Amount: amount, Reason: reason, IdempotencyKey: "shop_refund_" + id,
		Status: refundPending, Actor: actor.String(), CreatedAt: now, UpdatedAt: now}
	if len(restock) > 0 {
		b, err := json.Marshal(restock)
		if err != nil {
			return nil, fmt.Errorf("record refund of %s: restock: %w", o.ID, err)
		}
		ref.Restock = string(b)
	}
	if err := tx.Create(ref).Error; err != nil {
		return nil, fmt.Errorf("record refund of %s: %w", o.ID, err)
	}
	err := a.orders.Audit(ctx, tx, Event{Actor: actor.String(), Action: tool, OrderID: o.ID, Arguments: args,
		Before: map[string]any{"status": o.Status, "refunded": o.Refunded},
		After:  map[string]any{"refund_id": id, "refund_status": refundPending, "refunded": o.Refunded + amount}})
	return ref, err
}

// sendRefund sends a recorded (pending) refund to the payment provider and
// settles it with the answer: on success the refund is marked succeeded,
// restock's units go back on sale and a fully refunded order becomes
// refunded; on a refusal it is marked failed and the reservation is given
// back. An unknown outcome leaves the refund pending, its amount reserved,
// for the reconciler (ReconcileRefunds).
func (a *Admin) sendRefund(ctx context.Context, actor shop.Actor, o *orderRow, ref *refundRow, restock []catalog.HoldLine, plan RefundPlan) (*RefundPlan, error) {
	got, perr := a.refunder.Refund(ctx, payments.RefundRequest{
		Reference: o.PaymentReference, Amount: ref.Amount, IdempotencyKey: ref.IdempotencyKey, Reason: ref.Reason,
	})
	if perr != nil && errors.Is(perr, payments.ErrUnknownOutcome) {
		return nil, shop.Errorf(shop.Unavailable, "", "the payment provider did not answer; refund %s stays pending with its amount reserved, and nothing will be refunded twice", ref.ID)
	}
	status := refundSucceeded
	if perr != nil || (got.Status != "succeeded" && got.Status != "pending") {
		status = refundFailed
	}
	err := a.transact(ctx, func(tx *gorm.DB) error {
		now := a.now().UTC()
		var reference *string
		if got != nil {
			reference = &got.Reference
		}
		if err := settleRefund(ctx, tx, ref.ID, status, reference, now); err != nil {
			return err
		}
		cur, lines, err := a.load(ctx, tx, o.ID)
		if err != nil {
			return err
		}
		before := stateOf(cur, lines)
		if status == refundFailed {
			if err := tx.Model(&orderRow{}).Where("id = ?", o.ID).Update("refunded", gorm.Expr("refunded - ?", ref.Amount)).Error; err != nil {
				return err
			}
			cur.Refunded -= ref.Amount
		} else {
			if err := a.restock(ctx, tx, cur, lines, restock); err != nil {
				return err
			}
			if ref.ReturnID == "" { // a return's refund tells the buyer as the return's (settleReturn)
				if err := a.orders.emailRefunded(ctx, tx, cur, lines, ref); err != nil {
					return err
				}
			}
			if err := queueWebhook(tx, cur.ID, WebhookRefunded, cur.ID+"/"+ref.ID); err != nil {
				return err
			}
			if cur.Refunded >= cur.Total && cur.Status != StatusCanceled {
				if err := markRefunded(ctx, tx, cur, now); err != nil {
					return err
				}
			}
		}
		if err := a.orders.settleReturn(ctx, tx, cur, lines, ref, status); err != nil {
			return err
		}
		plan.Status, plan.RefundID = string(status), ref.ID
		if got != nil {
			plan.Reference = got.Reference
		}
		return a.orders.Audit(ctx, tx, Event{Actor: actor.String(), Action: "refund.settled", OrderID: o.ID,
			Arguments: map[string]any{"refund_id": ref.ID}, Before: before, After: stateOf(cur, lines)})
	})
	if err != nil {
		return nil, err
	}
	if status == refundFailed {
		why := "the provider refused it"
		if perr != nil {
			why = perr.Error()
		}
		return nil, shop.Errorf(shop.Invalid, "$.order_id", "refund %s of order %d failed: %s; nothing was refunded", ref.ID, o.Number, why)
	}
	return &plan, nil
}

// restock puts units of an order's lines back on sale and records it on
// the lines, never more than the units each line took from stock.
func (a *Admin) restock(ctx context.Context, tx *gorm.DB, o *orderRow, lines []lineRow, units []catalog.HoldLine) error {
	for _, u := range units {
		for i := range lines {
			if lines[i].VariantID != u.VariantID {
				continue
			}
			res := tx.Model(&lineRow{}).Where("order_id = ? AND position = ? AND restocked + ? <= quantity - short_quantity", o.ID, lines[i].Position, u.Quantity).
				Update("restocked", gorm.Expr("restocked + ?", u.Quantity))
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return shop.Errorf(shop.Invalid, "$.restock", "%s cannot be restocked %d more times", lines[i].Name, u.Quantity)
			}
			lines[i].Restocked += u.Quantity
			break
		}
	}
	return a.catalog.Restock(ctx, tx, units)
}

// cancelBinding is what a cancellation's confirm token is bound to beside
// its arguments.
type cancelBinding struct {
	Status  Status    `json:"status"`
	Refund  int64     `json:"refund"`
	Restock []LineQty `json:"restock"`
}

// Cancel previews the cancellation of an order nothing of which has
// shipped, or with args.Confirm cancels it, refunding and restocking as
// asked (role owner, two steps): cancel_order.
func (a *Admin) Cancel(ctx context.Context, args CancelArgs) (CancelAnswer, string, error) {
	actor, confirm, err := begin(ctx, &args)
	if err != nil {
		return CancelAnswer{}, "", err
	}
	refund, restock := args.Refund == nil || *args.Refund, args.Restock == nil || *args.Restock
	o, lines, err := a.load(ctx, a.db, args.OrderID)
	if err != nil {
		return CancelAnswer{}, "", err
	}
	if !slices.Contains(cancelFrom, o.Status) {
		return CancelAnswer{}, "", shop.Errorf(shop.Invalid, "$.order_id", "order %d is %s; only an order nothing of which has shipped can be canceled (refund it instead)", o.Number, o.Status)
	}
	var plan RefundPlan
	if refund && o.Refunded < o.Total {
		if plan, _, err = a.planRefund(o, lines, RefundArgs{OrderID: o.ID, TwoStep: TwoStep{Reason: args.Reason}}); err != nil {
			return CancelAnswer{}, "", err
		}
	}
	var units []catalog.HoldLine
	var back []LineQty
	if restock {
		units, back = restockAll(lines)
	}
	what := &CancelPlan{OrderID: o.ID, Number: o.Number, StatusAfter: string(StatusCanceled), Refund: plan.Amount, Restock: back}
	// The token is bound to the refund and the units the preview showed.
	bind := cancelBinding{Status: o.Status, Refund: plan.Amount.Amount, Restock: back}
	text := cancelText(o.Number, plan, back)
	if confirm == "" {
		p, text, err := preview(ctx, a, actor, "cancel_order", args, bind, *what, "Preview: "+text+".")
		return CancelAnswer{Preview: p}, text, err
	}
	stale := fmt.Sprintf("order %d changed since the preview (a refund or a restock ran meanwhile): this call would now %s", o.Number, text)
	var ref *refundRow
	err = a.transact(ctx, func(tx *gorm.DB) error {
		if err := a.redeem(ctx, tx, actor, "cancel_order", args, bind, confirm, stale); err != nil {
			return err
		}
		// The moves below change the order and its lines in memory: each
		// try starts from the order as read.
		o, lines := new(*o), slices.Clone(lines)
		before := stateOf(o, lines)
		if err := cancelOrder(ctx, tx, o, a.now().UTC()); err != nil {
			return err
		}
		if err := a.restock(ctx, tx, o, lines, units); err != nil {
			return err
		}
		if err := a.orders.Audit(ctx, tx, Event{Actor: actor.String(), Action: "cancel_order", OrderID: o.ID, Arguments: args,
			Before: before, After: stateOf(o, lines)}); err != nil {
			return err
		}
		if err := a.orders.emailCanceled(ctx, tx, o, lines, plan.Amount.Amount); err != nil {
			return err
		}
		if err := queueWebhook(tx, o.ID, WebhookCanceled, o.ID+"/canceled"); err != nil {
			return err
		}
		if plan.Amount.Amount > 0 {
			ref, err = a.reserve(ctx, tx, actor, o, plan.Amount.Amount, args.Reason, "cancel_order", args, nil)
		}
		return err
	})
	if err != nil {
		return CancelAnswer{}, "", err
	}
	if ref == nil {
		return CancelAnswer{Canceled: what}, fmt.Sprintf("Order %d canceled.", o.Number), nil
	}
	done, err := a.sendRefund(ctx, actor, o, ref, nil, plan)
	var e *shop.Error
	if errors.As(err, &e) {
		return CancelAnswer{}, "", shop.Errorf(e.Code, e.Param, "order %d is canceled, but its refund did not go through: %s", o.Number, e.Message)
	}
	if err != nil {
		return CancelAnswer{}, "", err
	}
	return CancelAnswer{Refund: done}, fmt.Sprintf("Order %d canceled. %s", o.Number, refundText(done)), nil
}

// cancelText says what cancel_order does: "cancel order 1001, refunding
// $12.00, restocking 2 line(s)".
func cancelText(number int64, plan RefundPlan, back []LineQty) string {
	text := fmt.Sprintf("cancel order %d", number)
	if plan.Amount.Amount > 0 {
		text += ", refunding " + plan.Amount.Display
	}
	if len(back) > 0 {
		text += fmt.Sprintf(", restocking %d line(s)", len(back))
	}
	return text
}

// restockAll is every unit of lines that can go back on sale, as stock to
// put back and as the lines' quantities.
func restockAll(lines []lineRow) ([]catalog.HoldLine, []LineQty) {
	var units []catalog.HoldLine
	var back []LineQty
	for _, l := range lines {
		if q := restockable(l); q > 0 {
			units = append(units, catalog.HoldLine{VariantID: l.VariantID, Quantity: q})
			back = append(back, LineQty{LineID: l.LineID, Quantity: q})
		}
	}
	return units, back
}

// restockable is how many units of a line can still go back on sale: those
// taken from stock (not short) and not restocked yet.
func restockable(l lineRow) int64 { return l.Quantity - l.ShortQuantity - l.Restocked }
