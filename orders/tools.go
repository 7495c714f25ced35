package orders

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"shop"
	"shop/contract"
	"shop/money"
)

// ReceiptResult is get_order's structured content: {order: Receipt}.
type ReceiptResult struct {
	Order contract.Receipt `json:"order"`
}

// Tools returns the buyer tool get_order.
func (o *Orders) Tools() []shop.Tool {
	return []shop.Tool{shop.NewTool(shop.Tool{
		Name:  "get_order",
		Title: "Get an order",
		Description: "Get the receipt of an order the buyer placed: lines, shipping address and option, totals in minor units " +
			"of the currency (1250 = 12.50 USD), payment, the legal links, once shipped, tracking per parcel (carrier, number, link), and the buyer's returns (id, status, refund_amount; request_return starts one). Needs the order id and the email the order was " +
			"placed with, both as in the order confirmation; an order whose email does not match is answered like an unknown one. " +
			"Errors: missing or invalid order_id, missing or invalid email, not_found.",
		ReadOnly:   true,
		Idempotent: true,
	}, o.getOrderTool)}
}

// GetOrderArgs are the buyer's get_order arguments.
type GetOrderArgs struct {
	OrderID string `json:"order_id" jsonschema:"The order id from the order confirmation, \"ord_…\"."`
	Email   string `json:"email" jsonschema:"The buyer's email address the order was placed with (case does not matter)."`
}

// RefineSchema bounds the id as ValidID checks it and the email as Get does.
func (GetOrderArgs) RefineSchema(s *jsonschema.Schema) {
	refineOrderID(s.Properties["order_id"])
	s.Properties["email"].MinLength, s.Properties["email"].MaxLength = jsonschema.Ptr(3), jsonschema.Ptr(MaxEmailLen)
}

// The lengths of an order id: "ord_" and 26 characters before ids carried
// their time, "ord_" and 35 since (idPattern).
const (
	minIDLen = len("ord_") + 26
	maxIDLen = minIDLen + shop.IDTimeLen
)

// refineOrderID bounds the schema of an order id as ValidID checks it.
func refineOrderID(s *jsonschema.Schema) {
	s.MinLength, s.MaxLength, s.Pattern = jsonschema.Ptr(minIDLen), jsonschema.Ptr(maxIDLen), idPattern.String()
}

func (o *Orders) getOrderTool(ctx context.Context, args GetOrderArgs) (ReceiptResult, string, error) {
	ord, err := o.Get(ctx, args.OrderID, args.Email)
	if err != nil {
		return ReceiptResult{}, "", err
	}
	return ReceiptResult{Order: ord.Receipt}, summary(ord, shop.LocaleFrom(ctx)), nil
}

// summary is a one-paragraph account of an order for people and models,
// its amounts in locale (a BCP 47 tag, "" for English) and as the order's
// session displayed them, its address in its country's order, its refunds
// with their amounts; the payment provider's internals are staff's
// (detailText), not the buyer's.
func summary(ord *contract.Order, locale string) string {
	r := &ord.Receipt
	format := amountFormatter(r.Currency, locale)
	d := r.Display
	var sb strings.Builder
	fmt.Fprintf(&sb, "Order %d (%s) is %s; placed %s by %s.", r.Number, r.OrderID, r.Status,
		r.CreatedAt.UTC().Format("2 January 2006 15:04 UTC"), r.Email)
	for i, li := range r.LineItems {
		sep := ", "
		if i == 0 {
			sep = " Items: "
		}
		fmt.Fprintf(&sb, "%s%d × %s (%s)", sep, li.Item.Quantity, li.Name, format(d.Line(li)))
	}
	if len(r.LineItems) > 0 {
		sb.WriteString(".")
	}
	if opt := r.FulfillmentOption; opt != nil {
		fmt.Fprintf(&sb, " Shipping: %s", opt.Title)
		if opt.Carrier != "" {
			fmt.Fprintf(&sb, " by %s", opt.Carrier)
		}
		if a := r.FulfillmentAddress; a != nil {
			fmt.Fprintf(&sb, " to %s", strings.Join(a.Lines(a.Country), ", "))
		}
		sb.WriteString(".")
	}
	var rows []string
	for _, row := range d.Rows(r.LineItems, r.Totals) {
		rows = append(rows, d.EnglishLabel(row.Type)+" "+format(row.Amount))
	}
	if len(rows) > 0 {
		fmt.Fprintf(&sb, " %s.", strings.Join(rows, ", "))
	}
	for _, rf := range r.Refunds {
		fmt.Fprintf(&sb, " Refunded %s on %s.", format(rf.Amount), rf.CreatedAt.UTC().Format("2 January 2006"))
	}
	for _, t := range r.Tracking {
		fmt.Fprintf(&sb, " Shipped %s with %s, tracking number %s", t.ShippedAt.Format("2 January 2006"), t.Carrier, t.TrackingNumber)
		if t.TrackingURL != "" {
			fmt.Fprintf(&sb, " (%s)", t.TrackingURL)
		}
		sb.WriteString(".")
	}
	for _, x := range r.Returns {
		fmt.Fprintf(&sb, " Return %s (%d line(s), %s): %s, refund %s.", x.ID, len(x.Lines), x.CreatedAt.Format("2 January 2006"), x.Status, format(x.RefundAmount))
	}
	fmt.Fprintf(&sb, " Payment %s (%s mode).", r.Payment.Status, r.Payment.Mode)
	fmt.Fprintf(&sb, " Receipt: %s", ord.PermalinkURL)
	return sb.String()
}

// amountFormatter formats amounts of a currency for people, or as minor
// units with the code when the currency is not one the shop knows.
func amountFormatter(code, locale string) func(int64) string {
	cur, err := money.Lookup(code)
	if err != nil {
		return func(a int64) string { return fmt.Sprintf("%d %s (minor units)", a, strings.ToUpper(code)) }
	}
	return func(a int64) string { return cur.FormatIn(locale, a) }
}
