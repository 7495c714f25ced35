package orders

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/contract"
	"shop/database"
)

// RequestReturnArgs are request_return's arguments.
type RequestReturnArgs struct {
	OrderID string                `json:"order_id" jsonschema:"The order id from the order confirmation, \"ord_…\"."`
	Email   string                `json:"email,omitempty" jsonschema:"The email the order was placed with; not needed when the buyer's account is connected."`
	Lines   []contract.ReturnLine `json:"lines" jsonschema:"The units to return: line_item_id as get_order lists the order's line_items (li_…), and how many."`
	Reason  string                `json:"reason" jsonschema:"Why: damaged, defective, wrong_item, not_as_described, no_longer_needed or other."`
	Note    string                `json:"note,omitempty" jsonschema:"Anything the buyer wants the shop to know, in their words."`
}

// CancelReturnArgs are cancel_return's arguments.
type CancelReturnArgs struct {
	OrderID  string `json:"order_id" jsonschema:"The order id, \"ord_…\"."`
	Email    string `json:"email,omitempty" jsonschema:"The email the order was placed with; not needed when the buyer's account is connected."`
	ReturnID string `json:"return_id" jsonschema:"The return's id, \"ret_…\", as request_return or get_order shows it."`
}

// ReturnDetail is a return as request_return and cancel_return answer it:
// the return and how to send the parcel.
type ReturnDetail struct {
	contract.Return
	// Instructions say how to pack and where to send the parcel.
	Instructions string `json:"instructions"`
}

// ReturnAnswer is request_return's and cancel_return's structured content.
type ReturnAnswer struct {
	Return ReturnDetail `json:"return"`
}

// buyerOrder reads, in tx, the order id the caller may act on: with the
// email it was placed with, or as the linked buyer whose order it is.
func buyerOrder(ctx context.Context, tx *gorm.DB, id, email string) (*orderRow, []lineRow, error) {
	id, err := orderID(id)
	if err != nil {
		return nil, nil, err
	}
	q := tx.WithContext(ctx).Where("id = ?", id)
	b := shop.BuyerFrom(ctx)
	switch norm := normalizeEmail(email); {
	case norm != "":
		if !plausibleEmail(norm) {
			return nil, nil, shop.Errorf(shop.Invalid, "$.email", "send the email address the order was placed with, such as jane@example.com")
		}
		q = q.Where("email = ?", norm)
	case b.Linked() && b.HasScope(shop.ScopeOrdersRead):
		q = q.Where(buyerCond, b.AccountID, normalizeEmail(b.AccountEmail))
	default:
		return nil, nil, shop.Errorf(shop.Missing, "$.email", "send the email address the order was placed with (or connect the buyer's account)")
	}
	var o orderRow
	err = q.Take(&o).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil, errNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read order %s: %w", id, err)
	}
	var lines []lineRow
	if err := tx.WithContext(ctx).Where("order_id = ?", id).Order("position").Find(&lines).Error; err != nil {
		return nil, nil, fmt.Errorf("read order %s lines: %w", id, err)
	}
	return &o, lines, nil
}

// checkRequest checks what a buyer sent, before anything is read.
func checkRequest(args RequestReturnArgs) error {
	switch {
	case !slices.Contains(ReturnReasons, args.Reason):
		return shop.Errorf(shop.Invalid, "$.reason", "send one of %s", strings.Join(ReturnReasons, ", "))
	case len(args.Note) > maxReturnNote:
		return shop.Errorf(shop.Invalid, "$.note", "at most %d characters", maxReturnNote)
	case len(args.Lines) == 0:
		return shop.Errorf(shop.Missing, "$.lines", "send the lines to return: [{line_item_id, quantity}], as get_order lists the order's line_items")
	case len(args.Lines) > maxReturnLines:
		return shop.Errorf(shop.Invalid, "$.lines", "at most %d lines", maxReturnLines)
	}
	return nil
}

// RequestReturn records a buyer's return of shipped units within the
// policy's window: request_return. The units are held for the return at
// once, so the same units cannot be returned twice.
//
// Errors: missing or invalid $.order_id, $.email, $.reason, $.note;
// invalid $.lines[i].line_item_id (no such line, or not returnable) and
// $.lines[i].quantity (more than bought, not shipped, returned already);
// invalid $.order_id when the window has passed; not_found.
func (r *Returns) RequestReturn(ctx context.Context, args RequestReturnArgs) (ReturnAnswer, string, error) {
	if err := checkRequest(args); err != nil {
		return ReturnAnswer{}, "", err
	}
	if r.policy.Window() == 0 {
		return ReturnAnswer{}, "", shop.Errorf(shop.Invalid, "$.order_id", "this shop takes no returns through the chat; the buyer can contact support")
	}
	excluded, err := r.excludedVariants(ctx)
	if err != nil {
		return ReturnAnswer{}, "", err
	}
	var row *returnRow
	var number int64
	var currency string
	err = r.admin.transact(ctx, func(tx *gorm.DB) error {
		o, lines, err := buyerOrder(ctx, tx, args.OrderID, args.Email)
		if err != nil {
			return err
		}
		number, currency = o.Number, o.Currency
		picked, err := r.checkLines(ctx, tx, o, lines, args.Lines, excluded)
		if err != nil {
			return err
		}
		if err := holdUnits(ctx, tx, o.ID, lines, picked, 1); err != nil {
			return err
		}
		now := database.Now(tx).UTC()
		row = &returnRow{ID: "ret_" + randomID(), OrderID: o.ID, Status: ReturnRequested, Reason: args.Reason,
			Note: strings.TrimSpace(args.Note), Lines: marshal(args.Lines), RefundAmount: r.policy.refundFor(lines, picked),
			CreatedAt: now, UpdatedAt: now}
		if err := tx.Create(row).Error; err != nil {
			return fmt.Errorf("record return of %s: %w", o.ID, err)
		}
		return r.told(ctx, tx, o, lines, row, "request_return", args)
	})
	if err != nil {
		return ReturnAnswer{}, "", err
	}
	d := ReturnDetail{Return: row.contract(), Instructions: r.policy.instructions()}
	format := amountFormatter(currency, shop.LocaleFrom(ctx))
	return ReturnAnswer{Return: d}, fmt.Sprintf("Return %s of order %d is requested; %s will be refunded to the card paid with once the shop receives the parcel. %s "+
		"The buyer can cancel it with cancel_return until then.", row.ID, number, format(row.RefundAmount), d.Instructions), nil
}

// checkLines checks the units a buyer asks to return against the order as
// read in tx: the window, each line's units bought, shipped and returned
// already, and the policy's exclusions. It answers the units by line index.
func (r *Returns) checkLines(ctx context.Context, tx *gorm.DB, o *orderRow, lines []lineRow, want []contract.ReturnLine, excluded map[string]bool) (map[int]int64, error) {
	if o.Status == StatusCanceled {
		return nil, shop.Errorf(shop.Invalid, "$.order_id", "order %d is canceled; there is nothing to return", o.Number)
	}
	shipped, err := lastShipped(ctx, tx, o.ID)
	if err != nil {
		return nil, err
	}
	if end := r.policy.windowEnd(o.DeliveredAt, shipped); !end.IsZero() && !database.Now(tx).Before(end) {
		return nil, shop.Errorf(shop.Invalid, "$.order_id", "the return window of order %d (%d days) ended on %s; the buyer can contact support",
			o.Number, r.policy.Window(), end.UTC().Format("2 January 2006"))
	}
	byID := map[string]int{}
	for i, l := range lines {
		byID[l.LineID] = i
	}
	out := map[int]int64{}
	for k, w := range want {
		at := fmt.Sprintf("$.lines[%d]", k)
		i, ok := byID[w.LineItemID]
		if !ok {
			return nil, shop.Errorf(shop.Invalid, at+".line_item_id", "order %d has no line %q; get_order lists its line_items (li_…)", o.Number, w.LineItemID)
		}
		l := lines[i]
		q := out[i] + w.Quantity
		switch {
		case w.Quantity < 1:
			return nil, shop.Errorf(shop.Invalid, at+".quantity", "must be at least 1")
		case excluded[l.VariantID]:
			return nil, shop.Errorf(shop.Invalid, at+".line_item_id", "%s cannot be returned under the shop's return policy", l.Name)
		case q > l.Quantity:
			return nil, shop.Errorf(shop.Invalid, at+".quantity", "more than bought: the order has %d of %s", l.Quantity, l.Name)
		case l.Fulfilled == 0:
			return nil, shop.Errorf(shop.Invalid, at+".quantity", "%s has not shipped yet; an order that has not shipped can be canceled by the shop instead (contact support)", l.Name)
		case q > l.Fulfilled-l.Returned:
			return nil, shop.Errorf(shop.Invalid, at+".quantity", "only %d of %s can be returned: %d shipped, %d in returns already", max(0, l.Fulfilled-l.Returned), l.Name, l.Fulfilled, l.Returned)
		}
		out[i] = q
	}
	return out, nil
}

// excludedVariants reads which variants the policy's not_returnable names
// (by variant, product or category), read outside any transaction.
func (r *Returns) excludedVariants(ctx context.Context) (map[string]bool, error) {
	n := r.policy.NotReturnable
	out := map[string]bool{}
	for _, id := range n.Products {
		out[id] = true
	}
	if len(n.Products)+len(n.Categories) == 0 {
		return out, nil
	}
	err := r.admin.catalog.Each(ctx, func(p *catalog.Product) error {
		for _, v := range p.Variants {
			if r.policy.excluded(v.ID, p.ID, p.Category) {
				out[v.ID] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the catalog for the return policy: %w", err)
	}
	return out, nil
}

// CancelReturn cancels a buyer's return that is still requested (its
// parcel not received): cancel_return. Its units may be returned again.
//
// Errors: missing or invalid $.order_id, $.email, $.return_id; invalid
// $.return_id when the return is past requested; not_found.
func (r *Returns) CancelReturn(ctx context.Context, args CancelReturnArgs) (ReturnAnswer, string, error) {
	var row *returnRow
	err := r.admin.transact(ctx, func(tx *gorm.DB) error {
		o, lines, err := buyerOrder(ctx, tx, args.OrderID, args.Email)
		if err != nil {
			return err
		}
		if row, err = loadReturn(ctx, tx, args.ReturnID); err != nil {
			return err
		}
		if row.OrderID != o.ID {
			return shop.Errorf(shop.NotFound, "$.return_id", "order %d has no return %q; get_order lists its returns", o.Number, args.ReturnID)
		}
		if row.Status != ReturnRequested {
			return shop.Errorf(shop.Invalid, "$.return_id", "return %s is %s; only a requested return (parcel not received yet) can be canceled", row.ID, row.Status)
		}
		if err := moveReturn(ctx, tx, row, []ReturnStatus{ReturnRequested}, ReturnCanceled, nil); err != nil {
			return err
		}
		if err := holdUnits(ctx, tx, o.ID, lines, pickedOf(lines, row.lines()), -1); err != nil {
			return err
		}
		return r.told(ctx, tx, o, lines, row, "cancel_return", args)
	})
	if err != nil {
		return ReturnAnswer{}, "", err
	}
	return ReturnAnswer{Return: ReturnDetail{Return: row.contract()}}, fmt.Sprintf("Return %s is canceled; nothing will be refunded for it.", row.ID), nil
}

// told records a return's change in tx: the audit event (the buyer's own
// or a staff member's), the buyer's email and the order's webhook.
func (r *Returns) told(ctx context.Context, tx *gorm.DB, o *orderRow, lines []lineRow, row *returnRow, tool string, args any) error {
	actor := "buyer"
	if a, ok := shop.ActorFrom(ctx); ok {
		actor = a.String()
	}
	err := r.admin.orders.Audit(ctx, tx, Event{Actor: actor, Action: tool, OrderID: o.ID, Arguments: args,
		After: map[string]any{"return_id": row.ID, "return_status": row.Status, "refund_amount": row.RefundAmount}})
	if err != nil {
		return err
	}
	if err := r.admin.orders.emailReturn(ctx, tx, o, lines, row, r.policy.instructions()); err != nil {
		return err
	}
	return queueWebhook(tx, o.ID, WebhookUpdated, o.ID+"/return/"+row.ID+"/"+string(row.Status))
}
