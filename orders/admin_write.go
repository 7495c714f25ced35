package orders

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
)

// writeTools are the tools that change orders and stock: each calls the
// Go API of the same action (Fulfill, AddNote, Refund, Cancel,
// AdjustInventory).
func (a *Admin) writeTools() []shop.Tool {
	return []shop.Tool{
		shop.NewTool(shop.Tool{
			Name: "fulfill_order", Title: "Fulfil an order",
			Description: "Role support. Record a shipment: carrier, tracking number and URL, and which lines (line ids and quantities; " +
				"default every unshipped unit). An order may ship in several parts: its status becomes partially_shipped, then shipped. " +
				"With delivered: true (and nothing else) a shipped order becomes delivered. " +
				"Errors: not_found $.order_id; invalid when the order is canceled, refunded or shipped already, or a line is over-shipped.",
		}, a.Fulfill),
		shop.NewTool(shop.Tool{
			Name: "add_order_note", Title: "Add a note to an order",
			Description: "Role support. Add a note (what the buyer asked, what was promised) to an order; notes show in get_order. Errors: not_found $.order_id, invalid $.note.",
		}, a.AddNote),
		shop.NewTool(shop.Tool{
			Name: "refund_order", Title: "Refund an order",
			Description: "Role owner. Two steps: without confirm it changes nothing and previews the refund (amount, what is left) with a confirm token " +
				"bound to these arguments and to what the preview shows; " +
				"the same call with that token refunds through the payment provider. amount defaults to everything not yet refunded and never exceeds it; " +
				"restock puts chosen lines back on sale. Errors: not_found $.order_id; invalid $.amount, $.restock, $.confirm (used, expired, other arguments or actor, or the order changed since the preview so that the refund would differ).",
			Destructive: true,
			// A confirm token works once: the same call again changes nothing.
			Idempotent: true,
		}, a.Refund),
		shop.NewTool(shop.Tool{
			Name: "cancel_order", Title: "Cancel an order",
			Description: "Role owner. Two steps, like refund_order. Cancels an order nothing of which has shipped; by default it refunds what is left " +
				"and puts every unit back on sale (refund: false, restock: false to skip). Errors: not_found $.order_id; invalid when the order has shipped or ended, $.confirm.",
			Destructive: true,
			// A confirm token works once: the same call again changes nothing.
			Idempotent: true,
		}, a.Cancel),
		shop.NewTool(shop.Tool{
			Name: "adjust_inventory", Title: "Adjust a variant's stock",
			Description: "Role owner. Two steps, like refund_order. Set a variant's stock on hand (set) or change it by a number (add, negative to remove), with a reason. " +
				"The preview shows the units held by checkout sessions being paid (held_for_payment, by paying_sessions sessions): the stock cannot be lowered below them until those payments settle. " +
				"Errors: not_found $.variant_id; invalid $.set / $.add (the stock must stay from 0 up, and not go below the units held for payment), $.confirm.",
			Destructive: true,
			// A confirm token works once: the same call again changes nothing.
			Idempotent: true,
		}, a.AdjustInventory),
	}
}

// orderState is what the audit log records of an order before and after a change.
type orderState struct {
	Status   Status      `json:"status"`
	Refunded int64       `json:"refunded"`
	Lines    []lineState `json:"lines"`
}

type lineState struct {
	LineID    string `json:"line_id"`
	Quantity  int64  `json:"quantity"`
	Fulfilled int64  `json:"fulfilled"`
	Restocked int64  `json:"restocked"`
}

func stateOf(o *orderRow, lines []lineRow) orderState {
	s := orderState{Status: o.Status, Refunded: o.Refunded, Lines: make([]lineState, len(lines))}
	for i, l := range lines {
		s.Lines[i] = lineState{LineID: l.LineID, Quantity: l.Quantity, Fulfilled: l.Fulfilled, Restocked: l.Restocked}
	}
	return s
}

// load reads an order and its lines in db.
func (a *Admin) load(ctx context.Context, db *gorm.DB, id string) (*orderRow, []lineRow, error) {
	if id == "" {
		return nil, nil, shop.Errorf(shop.Missing, "$.order_id", "send the order's id (ord_…), as list_orders shows it")
	}
	var o orderRow
	err := db.WithContext(ctx).Where("id = ?", id).Take(&o).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil, shop.Errorf(shop.NotFound, "$.order_id", "no order has id %q; find it with list_orders", id)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load order %s: %w", id, err)
	}
	var lines []lineRow
	if err := db.WithContext(ctx).Where("order_id = ?", id).Order("position").Find(&lines).Error; err != nil {
		return nil, nil, fmt.Errorf("load order %s lines: %w", id, err)
	}
	return &o, lines, nil
}

// pick resolves line quantities against an order's lines; room says how
// many units of a line can still be taken.
func pick(param string, lines []lineRow, want []LineQty, room func(lineRow) int64) (map[int]int64, error) {
	byID := map[string]int{}
	for i, l := range lines {
		byID[l.LineID] = i
	}
	out := map[int]int64{}
	for k, w := range want {
		i, ok := byID[w.LineID]
		at := fmt.Sprintf("%s[%d]", param, k)
		switch {
		case !ok:
			return nil, shop.Errorf(shop.Invalid, at+".line_id", "the order has no line %q; its lines are shown by get_order", w.LineID)
		case w.Quantity < 1:
			return nil, shop.Errorf(shop.Invalid, at+".quantity", "must be at least 1")
		case out[i]+w.Quantity > room(lines[i]):
			return nil, shop.Errorf(shop.Invalid, at+".quantity", "only %d of %s can be taken", room(lines[i])-out[i], lines[i].Name)
		}
		out[i] += w.Quantity
	}
	return out, nil
}

func checkText(param, s string, max int) error {
	switch {
	case strings.TrimSpace(s) == "":
		return shop.Errorf(shop.Missing, param, "send a short text")
	case !utf8.ValidString(s) || utf8.RuneCountInString(s) > max:
		return shop.Errorf(shop.Invalid, param, "at most %d characters of text", max)
	}
	return nil
}

// fulfilmentRow is a row of fulfilments; Lines is JSON [{line_id, quantity}].
type fulfilmentRow struct {
	ID             string `gorm:"primaryKey"`
	OrderID        string
	Carrier        string
	TrackingNumber string
	TrackingURL    string
	Lines          string
	Actor          string
	CreatedAt      time.Time
}

func (fulfilmentRow) TableName() string { return "fulfilments" }

// Fulfill records a shipment of an order, or with args.Delivered its
// delivery (role support): fulfill_order.
func (a *Admin) Fulfill(ctx context.Context, args FulfillArgs) (FulfillResult, string, error) {
	actor, err := require(ctx, shop.Support)
	if err != nil {
		return FulfillResult{}, "", err
	}
	if args.Delivered {
		return a.delivered(ctx, actor, args)
	}
	if err := checkShipment(args); err != nil {
		return FulfillResult{}, "", err
	}
	out := &Shipment{}
	err = a.transact(ctx, func(tx *gorm.DB) error {
		o, lines, err := a.load(ctx, tx, args.OrderID)
		if err != nil {
			return err
		}
		if !slices.Contains(shipFrom, o.Status) {
			return shop.Errorf(shop.Invalid, "$.order_id", "order %d is %s; only a confirmed or partially shipped order can ship", o.Number, o.Status)
		}
		before := stateOf(o, lines)
		unshipped := func(l lineRow) int64 { return l.Quantity - l.Fulfilled }
		want := args.Lines
		if len(want) == 0 {
			for _, l := range lines {
				if unshipped(l) > 0 {
					want = append(want, LineQty{LineID: l.LineID, Quantity: unshipped(l)})
				}
			}
		}
		picked, err := pick("$.lines", lines, want, unshipped)
		if err != nil {
			return err
		}
		now := a.now().UTC()
		all, err := shipLines(tx, o.ID, lines, picked)
		if err != nil {
			return err
		}
		if err := shipOrder(ctx, tx, o, all, now); err != nil {
			return err
		}
		out.FulfilmentID, out.Status, out.Lines = "ful_"+randomID(), string(o.Status), want
		row := fulfilmentRow{ID: out.FulfilmentID, OrderID: o.ID, Carrier: args.Carrier, TrackingNumber: args.TrackingNumber,
			TrackingURL: args.TrackingURL, Lines: marshal(want), Actor: actor.String(), CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("fulfil %s: %w", o.ID, err)
		}
		if err := a.orders.emailShipped(ctx, tx, o, lines, picked, &row); err != nil {
			return err
		}
		if err := queueWebhook(tx, o.ID, WebhookFulfilled, o.ID+"/"+row.ID); err != nil {
			return err
		}
		return a.orders.Audit(ctx, tx, Event{Actor: actor.String(), Action: "fulfill_order", OrderID: o.ID,
			Arguments: args, Before: before, After: stateOf(o, lines)})
	})
	if err != nil {
		return FulfillResult{}, "", err
	}
	return FulfillResult{Shipped: out}, fmt.Sprintf("Shipped %d line(s) with %s %s; the order is now %s.",
		len(out.Lines), args.Carrier, args.TrackingNumber, out.Status), nil
}

// checkShipment checks fulfil_order's carrier, tracking number and link.
func checkShipment(args FulfillArgs) error {
	for _, f := range []struct {
		param, v string
		max      int
	}{{"$.carrier", args.Carrier, maxCarrierLen}, {"$.tracking_number", args.TrackingNumber, maxTrackingLen}} {
		if err := checkText(f.param, f.v, f.max); err != nil {
			return err
		}
	}
	if args.TrackingURL != "" && (!strings.HasPrefix(args.TrackingURL, "https://") || len(args.TrackingURL) > maxTrackingURLLen) {
		return shop.Errorf(shop.Invalid, "$.tracking_url", "send an https:// link of at most %d characters", maxTrackingURLLen)
	}
	return nil
}

// shipLines marks picked[i] more units of lines[i] fulfilled, each with a
// conditional UPDATE that never ships more than the line holds, and
// reports whether every line is now shipped in full.
func shipLines(tx *gorm.DB, orderID string, lines []lineRow, picked map[int]int64) (bool, error) {
	for i, q := range picked {
		res := tx.Model(&lineRow{}).Where("order_id = ? AND position = ? AND fulfilled + ? <= quantity", orderID, lines[i].Position, q).
			Update("fulfilled", gorm.Expr("fulfilled + ?", q))
		if res.Error != nil {
			return false, fmt.Errorf("fulfil %s: %w", orderID, res.Error)
		}
		if res.RowsAffected != 1 {
			return false, shop.Errorf(shop.Conflict, "$.lines", "the order changed meanwhile; look at it again with get_order")
		}
		lines[i].Fulfilled += q
	}
	all := true
	for _, l := range lines {
		if l.Fulfilled < l.Quantity {
			all = false
		}
	}
	return all, nil
}

// delivered marks a shipped order delivered.
func (a *Admin) delivered(ctx context.Context, actor shop.Actor, args FulfillArgs) (FulfillResult, string, error) {
	if args.Carrier != "" || args.TrackingNumber != "" || len(args.Lines) > 0 {
		return FulfillResult{}, "", shop.Errorf(shop.Invalid, "$.delivered", "send delivered: true alone, for an order that has shipped; record parcels without it")
	}
	var number int64
	err := a.transact(ctx, func(tx *gorm.DB) error {
		o, lines, err := a.load(ctx, tx, args.OrderID)
		if err != nil {
			return err
		}
		if !slices.Contains(deliverFrom, o.Status) {
			return shop.Errorf(shop.Invalid, "$.order_id", "order %d is %s; only a shipped order can be delivered", o.Number, o.Status)
		}
		number = o.Number
		before := stateOf(o, lines)
		if err := deliverOrder(ctx, tx, o, a.now().UTC()); err != nil {
			return err
		}
		if err := queueWebhook(tx, o.ID, WebhookUpdated, o.ID+"/delivered"); err != nil {
			return err
		}
		return a.orders.Audit(ctx, tx, Event{Actor: actor.String(), Action: "fulfill_order", OrderID: o.ID, Arguments: args, Before: before, After: stateOf(o, lines)})
	})
	if err != nil {
		return FulfillResult{}, "", err
	}
	return FulfillResult{Delivered: &Delivery{Status: string(StatusDelivered)}}, fmt.Sprintf("Order %d is delivered.", number), nil
}

// noteRow is a row of order_notes.
type noteRow struct {
	ID        string `gorm:"primaryKey"`
	OrderID   string
	Actor     string
	Note      string
	CreatedAt time.Time
}

func (noteRow) TableName() string { return "order_notes" }

// AddNote adds a staff note to an order (role support): add_order_note.
func (a *Admin) AddNote(ctx context.Context, args NoteArgs) (NoteResult, string, error) {
	actor, err := require(ctx, shop.Support)
	if err != nil {
		return NoteResult{}, "", err
	}
	if err := checkText("$.note", args.Note, maxNoteLen); err != nil {
		return NoteResult{}, "", err
	}
	row := noteRow{ID: "note_" + randomID(), OrderID: args.OrderID, Actor: actor.String(), Note: args.Note, CreatedAt: a.now().UTC()}
	err = a.transact(ctx, func(tx *gorm.DB) error {
		if _, _, err := a.load(ctx, tx, args.OrderID); err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("add note to %s: %w", args.OrderID, err)
		}
		return a.orders.Audit(ctx, tx, Event{Actor: actor.String(), Action: "add_order_note", OrderID: args.OrderID, Arguments: args, After: map[string]string{"note_id": row.ID}})
	})
	if err != nil {
		return NoteResult{}, "", err
	}
	return NoteResult{NoteID: row.ID}, "Note added.", nil
}

// AdjustInventory previews a change of a variant's stock, or with
// args.Confirm makes it (role owner, two steps): adjust_inventory.
func (a *Admin) AdjustInventory(ctx context.Context, args AdjustArgs) (AdjustAnswer, string, error) {
	actor, confirm, err := begin(ctx, &args)
	if err != nil {
		return AdjustAnswer{}, "", err
	}
	if (args.Set == nil) == (args.Add == nil) {
		return AdjustAnswer{}, "", shop.Errorf(shop.Invalid, "$.set", "send exactly one of set (the new stock) and add (a change, negative to remove)")
	}
	change := catalog.StockChange{Set: args.Set, Add: args.Add}
	type result = Adjustment
	var res result
	// The confirm token is bound to the stock before and after; the units
	// held for payment are checked again when the change is made.
	type plan struct {
		VariantID string `json:"variant_id"`
		Before    int64  `json:"before"`
		After     int64  `json:"after"`
	}
	bound := func(r result) plan { return plan{VariantID: r.VariantID, Before: r.Before, After: r.After} }
	// Both steps compute the change in a transaction; the preview's is
	// rolled back.
	errPreview := errors.New("preview")
	err = a.transact(ctx, func(tx *gorm.DB) error {
		adj, err := a.catalog.AdjustStock(ctx, tx, args.VariantID, change)
		if err != nil {
			return err
		}
		res = result{VariantID: args.VariantID, Before: adj.Before, After: adj.After,
			HeldForPayment: adj.Paying.Units, PayingSessions: adj.Paying.Sessions}
		if confirm == "" {
			return errPreview
		}
		// The token is bound to the stock before and after that the
		// preview showed; checked here, in the transaction of the change.
		stale := fmt.Sprintf("the stock of %s changed since the preview: it is %d now, and this call would take it to %d", args.VariantID, adj.Before, adj.After)
		if err := a.redeem(ctx, tx, actor, "adjust_inventory", args, bound(res), confirm, stale); err != nil {
			return err
		}
		return a.orders.Audit(ctx, tx, Event{Actor: actor.String(), Action: "adjust_inventory", Arguments: args,
			Before: map[string]any{"variant_id": args.VariantID, "stock": adj.Before},
			After:  map[string]any{"variant_id": args.VariantID, "stock": adj.After, "held_for_payment": adj.Paying.Units}})
	})
	if errors.Is(err, errPreview) {
		p, text, err := preview(ctx, a, actor, "adjust_inventory", args, bound(res), res,
			fmt.Sprintf("Preview: the stock of %s would go from %d to %d. %s", res.VariantID, res.Before, res.After, heldText(res.HeldForPayment, res.PayingSessions)))
		return AdjustAnswer{Preview: p}, text, err
	}
	if err != nil {
		return AdjustAnswer{}, "", err
	}
	return AdjustAnswer{Adjusted: &res}, fmt.Sprintf("The stock of %s is now %d (was %d).", res.VariantID, res.After, res.Before), nil
}

// heldText says how many units sessions being paid hold.
func heldText(units, sessions int64) string {
	if units == 0 {
		return "No units are held by checkout sessions being paid."
	}
	return fmt.Sprintf("%d unit(s) are held by %d checkout session(s) being paid; the stock cannot go below them until those payments settle.", units, sessions)
}
