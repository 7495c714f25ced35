package orders

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"shop"
	"shop/contract"
	"shop/money"
)

// Bounds of the staff's read tools.
const (
	listOrdersDefault  = 20
	listEventsDefault  = 50
	maxListLimit       = 100
	maxSearchTextLen   = 200
	maxActorFilterLen  = 100
	maxActionFilterLen = 64
	maxAccountIDLen    = 64
	maxReportDays      = 366
	defaultReportDays  = 7
	maxListCursorLen   = 300
	listCursorVersion  = 1
	dayLayout          = "2006-01-02"
)

// orderStatuses are the statuses list_orders filters on.
var orderStatuses = []Status{StatusConfirmed, StatusPartiallyShipped, StatusShipped, StatusDelivered, StatusCanceled, StatusRefunded}

// OrderSummary is an order as list_orders shows it; Items counts units.
type OrderSummary struct {
	ID        string      `json:"id"`
	Number    int64       `json:"number"`
	Status    string      `json:"status"`
	Email     string      `json:"email"`
	Total     money.Price `json:"total"`
	Refunded  money.Price `json:"refunded"`
	CreatedAt time.Time   `json:"created_at"`
	Items     int64       `json:"items"`
	// ShortUnits are units sold that the stock on hand did not cover when
	// the order was written (see OrderDetail.ShortUnits).
	ShortUnits int64 `json:"short_units"`
	// Channel is the endpoint the order came through: mcp, acp or ucp.
	Channel string `json:"channel"`
	// AccountID is the linked buyer account that placed the order, absent
	// for a guest's (or a deleted account's).
	AccountID string `json:"account_id,omitempty"`
}

// OrderList is list_orders' structured content, newest first.
type OrderList struct {
	Orders     []OrderSummary `json:"orders"`
	NextCursor string         `json:"next_cursor,omitempty"`
}

// OrderDetail is the staff's view of an order: the order with its receipt,
// the amount refunded, the units short of stock, each line's progress, and
// the payment attempts, refunds, fulfilments, notes and audit trail, each
// oldest first.
type OrderDetail struct {
	contract.Order
	Refunded money.Price `json:"refunded"`
	// ShortUnits are the units the stock on hand did not cover when the
	// order was written (the catalog changed while the buyer paid): they
	// were paid for and not taken from stock; the staff restock or refund
	// them. Each line says how many of its units (LineProgress.Short).
	ShortUnits int64 `json:"short_units"`
	// Channel is the endpoint the order came through: mcp (the ChatGPT
	// Apps dialect), acp (the ACP MCP binding) or ucp.
	Channel string `json:"channel"`
	// AccountID is the linked buyer account that placed the order, absent
	// for a guest's (or a deleted account's).
	AccountID string         `json:"account_id,omitempty"`
	Lines     []LineProgress `json:"lines"`
	// PaymentAttempts are the tries to pay for the order's checkout
	// session, the one that paid among them: the AttemptsPage newest (or
	// those below attempts_cursor), oldest first. PaymentAttemptsTotal
	// counts them all; NextAttemptsCursor, passed as attempts_cursor, gives
	// the page of older ones ("" when there are none).
	PaymentAttempts      []PaymentAttemptRecord `json:"payment_attempts"`
	PaymentAttemptsTotal int64                  `json:"payment_attempts_total"`
	NextAttemptsCursor   string                 `json:"next_attempts_cursor,omitempty"`
	// SurplusPayments are payments for the session that no order took,
	// each with its refund.
	SurplusPayments []SurplusPaymentRecord `json:"surplus_payments"`
	Refunds         []RefundRecord         `json:"refunds"`
	Fulfilments     []FulfilmentRecord     `json:"fulfilments"`
	Notes           []NoteRecord           `json:"notes"`
	// Emails are the emails the order sent or is sending its buyer (and
	// the staff's copy), oldest first.
	Emails     []EmailRecord `json:"emails"`
	AuditTrail []AuditEntry  `json:"audit_trail"`
}

// OrderDetailResult is the staff's get_order structured content.
type OrderDetailResult struct {
	Order OrderDetail `json:"order"`
}

// LineProgress is how much of an order line has shipped and been restocked.
type LineProgress struct {
	ID        string `json:"id"`
	VariantID string `json:"variant_id"`
	Name      string `json:"name"`
	Quantity  int64  `json:"quantity"`
	Fulfilled int64  `json:"fulfilled"`
	Restocked int64  `json:"restocked"`
	// Short is how many of the line's units were not on hand when the order
	// was written.
	Short int64 `json:"short"`
}

// RefundRecord is a refund as recorded (status pending, succeeded or failed).
type RefundRecord struct {
	ID        string      `json:"id"`
	Amount    money.Price `json:"amount"`
	Reason    string      `json:"reason"`
	Status    string      `json:"status"`
	Reference string      `json:"reference"`
	Actor     string      `json:"actor"`
	CreatedAt time.Time   `json:"created_at"`
}

// FulfilmentRecord is a shipment; Lines is the stored JSON [{line_id, quantity}].
type FulfilmentRecord struct {
	ID             string          `json:"id"`
	Carrier        string          `json:"carrier"`
	TrackingNumber string          `json:"tracking_number"`
	TrackingURL    string          `json:"tracking_url"`
	Lines          json.RawMessage `json:"lines"`
	Actor          string          `json:"actor"`
	CreatedAt      time.Time       `json:"created_at"`
}

// EmailRecord is an email of an order: its kind (confirmation, staff_copy,
// shipped, refunded, canceled), to whom, and where it stands (pending,
// sending, sent, failed: last_error says why).
type EmailRecord struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	To        string     `json:"to"`
	Subject   string     `json:"subject"`
	Status    string     `json:"status"`
	Attempts  int        `json:"attempts"`
	LastError string     `json:"last_error,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	SentAt    *time.Time `json:"sent_at,omitempty"`
}

// NoteRecord is a staff note on an order.
type NoteRecord struct {
	ID        string    `json:"id"`
	Note      string    `json:"note"`
	Actor     string    `json:"actor"`
	CreatedAt time.Time `json:"created_at"`
}

// AuditEntry is an audit event; Arguments, Before and After are its JSON or null.
type AuditEntry struct {
	ID        string          `json:"id"`
	At        time.Time       `json:"at"`
	Actor     string          `json:"actor"`
	Action    string          `json:"action"`
	OrderID   string          `json:"order_id"`
	SessionID string          `json:"session_id"`
	Arguments json.RawMessage `json:"arguments"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
}

// AuditList is list_audit_events' structured content, newest first.
type AuditList struct {
	Events     []AuditEntry `json:"events"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

const rangeHelp = `RFC 3339 time (2025-10-01T09:00:00Z) or date (2025-10-01: that UTC day's start)`

// readTools returns the staff's read-only tools, each for the viewer role.
func (a *Admin) readTools() []shop.Tool {
	errs := " Role viewer (any admin token). Errors: forbidden, "
	read := func(name, title, desc string) shop.Tool {
		return shop.Tool{Name: name, Title: title, Description: desc, ReadOnly: true, Idempotent: true}
	}
	return []shop.Tool{
		shop.NewTool(read("list_orders", "List orders", "List orders, newest first: number, status, email, total and refunded (minor units and display), "+
			"created_at, units and the linked account that placed it (account_id, absent for a guest). Filters combine: status, email (exact), account_id (exact), text (an order number, or part of the buyer's email or name), "+
			"created_from (inclusive), created_to (exclusive), short (true: only orders short of stock, whose short_units the stock did not cover when they were paid). "+
			"For the next page pass next_cursor as cursor with the same filters."+
			errs+"invalid (status, email, account_id, text, created_from, created_to, short, limit, cursor)."), viewer(a.listOrders)),
		shop.NewTool(read("get_order", "Get an order (staff)", "Get everything about an order: the receipt (lines, address, shipping, totals, payment, tracking), "+
			"the linked account that placed it (account_id, absent for a guest), "+
			"the amount refunded, each line's fulfilled and restocked units, the payment attempts (declined ones too, with the card's "+
			"brand and last four digits; the "+strconv.Itoa(AttemptsPage)+" newest, and payment_attempts_total; for older ones pass next_attempts_cursor as attempts_cursor), surplus payments no order took with their refunds, refunds, fulfilments with tracking, notes and the audit "+
			"trail, oldest first. Amounts in minor units of the currency."+errs+"missing or invalid order_id, not_found."), viewer(a.getOrderDetail)),
		shop.NewTool(read("sales_report", "Sales report", "Sales per UTC day from one date to another, both included (default the 7 days ending "+
			"today), every day listed: orders, gross, refunds and net in minor units with display strings, and totals. Gross counts "+
			"every order created that day, canceled ones too (what was charged); refunds sums the succeeded refunds made that day; "+
			"net = gross − refunds."+errs+fmt.Sprintf("invalid (from, to: YYYY-MM-DD, to not before from, at most %d days).", maxReportDays)), viewer(a.salesReportTool)),
		shop.NewTool(read("list_audit_events", "List audit events", "List the audit log, newest first: when, who (role:token label, or checkout), "+
			"the action (a tool such as refund_order, or order.created), the order or session, and the arguments and the state "+
			"before and after as JSON. Filters combine: order_id, actor, tool, from (inclusive), to (exclusive). For the next page "+
			"pass next_cursor as cursor with the same filters."+errs+"invalid (order_id, actor, tool, from, to, limit, cursor)."), viewer(a.listAuditEvents)),
	}
}

func (a *Admin) listOrders(ctx context.Context, args ListOrdersArgs) (OrderList, string, error) {
	q := a.db.WithContext(ctx).Table("orders o")
	short := "-"
	if args.Short != nil {
		if *args.Short {
			q, short = q.Where("o.short_units > 0"), "short"
		} else {
			q, short = q.Where("o.short_units = 0"), "covered"
		}
	}
	if args.Status != "" {
		if !slices.Contains(orderStatuses, Status(args.Status)) {
			return OrderList{}, "", shop.Errorf(shop.Invalid, "$.status", "no status %q; send one of: %s", args.Status, joinStatuses(orderStatuses))
		}
		q = q.Where("o.status = ?", args.Status)
	}
	email := normalizeEmail(args.Email)
	if len(email) > MaxEmailLen {
		return OrderList{}, "", shop.Errorf(shop.Invalid, "$.email", "at most %d characters", MaxEmailLen)
	}
	if email != "" {
		q = q.Where("o.email = ?", email)
	}
	account := strings.TrimSpace(args.AccountID)
	if len(account) > maxAccountIDLen {
		return OrderList{}, "", shop.Errorf(shop.Invalid, "$.account_id", "at most %d characters, such as \"acct_…\" as get_order shows it", maxAccountIDLen)
	}
	if account != "" {
		q = q.Where("o.account_id = ?", account)
	}
	text := strings.ToLower(strings.TrimSpace(args.Text))
	if n := utf8.RuneCountInString(text); n > maxSearchTextLen {
		return OrderList{}, "", shop.Errorf(shop.Invalid, "$.text", "the text is %d characters; send at most %d", n, maxSearchTextLen)
	}
	if n, ok := orderNumber(text); ok {
		q = q.Where("o.number = ?", n)
	} else if text != "" {
		// The buyer is stored as JSON whose name fields come first; the text
		// is looked for, in its JSON spelling, after the first of them.
		inner, _ := json.Marshal(text)
		q = q.Where(`(LOWER(o.email) LIKE ? ESCAPE '!' OR LOWER(o.buyer) LIKE ? ESCAPE '!')`,
			"%"+likeEscape(text)+"%", `%name":"%`+likeEscape(string(inner[1:len(inner)-1]))+"%")
	}
	from, to, err := timeRange(args.CreatedFrom, args.CreatedTo, "$.created_from", "$.created_to")
	if err != nil {
		return OrderList{}, "", err
	}
	type row struct {
		ID, Status, Email, Currency, Channel       string
		AccountID                                  *string
		Number, Total, Refunded, Items, ShortUnits int64
		CreatedAt                                  time.Time
	}
	q = q.Select("o.id, o.number, o.status, o.email, o.currency, o.total, o.refunded, o.short_units, o.channel, o.account_id, o.created_at, " +
		"(SELECT COALESCE(SUM(l.quantity), 0) FROM order_lines l WHERE l.order_id = o.id) AS items")
	k := keyset{timeCol: "o.created_at", idCol: "o.id", from: from, to: to, limit: args.Limit, def: listOrdersDefault, cursor: args.Cursor,
		fp: fingerprint("orders", args.Status, email, text, instantKey(from), instantKey(to), short, account)}
	rows, next, err := readPage(q, k, func(r row) (time.Time, string) { return r.CreatedAt, r.ID })
	if err != nil {
		return OrderList{}, "", err
	}
	list := OrderList{Orders: []OrderSummary{}, NextCursor: next}
	lines := make([]string, 0, len(rows))
	for _, r := range rows {
		s := OrderSummary{ID: r.ID, Number: r.Number, Status: r.Status, Email: r.Email, Total: PriceOf(r.Currency, r.Total),
			Refunded: PriceOf(r.Currency, r.Refunded), CreatedAt: r.CreatedAt.UTC(), Items: r.Items, ShortUnits: r.ShortUnits, Channel: r.Channel, AccountID: deref(r.AccountID)}
		list.Orders = append(list.Orders, s)
		lines = append(lines, s.line())
	}
	return list, listText(lines, "No orders match.", next), nil
}

// line is the order as list_orders' text lists it.
func (s OrderSummary) line() string {
	line := fmt.Sprintf("%d %s %s %s %s, %d units, total %s, via %s", s.Number, s.ID, s.CreatedAt.Format("2006-01-02 15:04 UTC"),
		s.Status, s.Email, s.Items, s.Total.Display, s.Channel)
	if s.Refunded.Amount > 0 {
		line += ", refunded " + s.Refunded.Display
	}
	if s.ShortUnits > 0 {
		line += fmt.Sprintf(", SHORT %d units of stock", s.ShortUnits)
	}
	if s.AccountID != "" {
		line += ", account " + s.AccountID
	}
	return line
}

// getOrderDetail answers the order (its receipt as buyers see it) and
// everything recorded about it.
func (a *Admin) getOrderDetail(ctx context.Context, args OrderDetailArgs) (OrderDetailResult, string, error) {
	id := strings.TrimSpace(args.OrderID)
	if id != "" && !idPattern.MatchString(id) {
		return OrderDetailResult{}, "", shop.Errorf(shop.Invalid, "$.order_id", `an order id is "ord_" followed by 35 letters and digits, as list_orders shows it`)
	}
	row, lines, err := a.load(ctx, a.db, id) // missing or not_found $.order_id
	if err != nil {
		return OrderDetailResult{}, "", err
	}
	ord, err := a.orders.order(row, lines)
	if err != nil {
		return OrderDetailResult{}, "", err
	}
	cur := row.Currency
	d := &OrderDetail{Order: *ord, Refunded: PriceOf(cur, row.Refunded), ShortUnits: row.ShortUnits, Channel: row.Channel, AccountID: deref(row.AccountID), Lines: []LineProgress{}, Refunds: []RefundRecord{},
		Fulfilments: []FulfilmentRecord{}, Notes: []NoteRecord{}, AuditTrail: []AuditEntry{}}
	for _, l := range lines {
		d.Lines = append(d.Lines, LineProgress{ID: l.LineID, VariantID: l.VariantID, Name: l.Name, Quantity: l.Quantity,
			Fulfilled: l.Fulfilled, Restocked: l.Restocked, Short: l.ShortQuantity})
	}
	var (
		refunds     []refundRow
		fulfilments []fulfilmentRow
		notes       []noteRow
		events      []auditRow
	)
	db := a.db.WithContext(ctx)
	for _, r := range []struct {
		dst   any
		order string
	}{{&refunds, "created_at, id"}, {&fulfilments, "created_at, id"}, {&notes, "created_at, id"}, {&events, "at, id"}} {
		if err := db.Where("order_id = ?", id).Order(r.order).Find(r.dst).Error; err != nil {
			return OrderDetailResult{}, "", fmt.Errorf("read order %s: %T: %w", id, r.dst, err)
		}
	}
	before, err := attemptsBefore(strings.TrimSpace(args.AttemptsCursor), id)
	if err != nil {
		return OrderDetailResult{}, "", err
	}
	if d.PaymentAttempts, d.PaymentAttemptsTotal, d.NextAttemptsCursor, err = a.paymentAttempts(ctx, row.CheckoutSessionID, id, before); err != nil {
		return OrderDetailResult{}, "", err
	}
	if d.SurplusPayments, err = surplusPayments(ctx, a.db, row.CheckoutSessionID); err != nil {
		return OrderDetailResult{}, "", err
	}
	for _, r := range refunds {
		d.Refunds = append(d.Refunds, RefundRecord{ID: r.ID, Amount: PriceOf(cur, r.Amount), Reason: r.Reason, Status: string(r.Status),
			Reference: r.Reference, Actor: r.Actor, CreatedAt: r.CreatedAt.UTC()})
	}
	for _, f := range fulfilments {
		d.Receipt.Tracking = append(d.Receipt.Tracking, trackingOf(f))
		d.Fulfilments = append(d.Fulfilments, FulfilmentRecord{ID: f.ID, Carrier: f.Carrier, TrackingNumber: f.TrackingNumber,
			TrackingURL: f.TrackingURL, Lines: rawJSON(f.Lines), Actor: f.Actor, CreatedAt: f.CreatedAt.UTC()})
	}
	for _, n := range notes {
		d.Notes = append(d.Notes, NoteRecord{ID: n.ID, Note: n.Note, Actor: n.Actor, CreatedAt: n.CreatedAt.UTC()})
	}
	for _, e := range events {
		d.AuditTrail = append(d.AuditTrail, auditEntry(e))
	}
	if d.Emails, err = orderEmails(ctx, a.db, id); err != nil {
		return OrderDetailResult{}, "", err
	}
	return OrderDetailResult{Order: *d}, detailText(d), nil
}

// detailText is the buyer's summary of the order, then what staff did.
func detailText(d *OrderDetail) string {
	var sb strings.Builder
	sb.WriteString(summary(&d.Order, ""))
	p := d.Order.Receipt.Payment
	fmt.Fprintf(&sb, "\nPaid with %s, reference %s.", p.Provider, p.Reference)
	fmt.Fprintf(&sb, "\nRefunded %s.", d.Refunded.Display)
	if d.AccountID != "" {
		fmt.Fprintf(&sb, "\nPlaced by the linked account %s.", d.AccountID)
	}
	if d.ShortUnits > 0 {
		fmt.Fprintf(&sb, "\nSHORT OF STOCK: %d unit(s) were paid for and not on hand when the order was written; restock them, or refund them.", d.ShortUnits)
	}
	for _, l := range d.Lines {
		fmt.Fprintf(&sb, "\nLine %s (%s): %d ordered, %d fulfilled, %d restocked", l.ID, l.Name, l.Quantity, l.Fulfilled, l.Restocked)
		if l.Short > 0 {
			fmt.Fprintf(&sb, ", %d short of stock", l.Short)
		}
		sb.WriteString(".")
	}
	for _, at := range d.PaymentAttempts {
		sb.WriteString("\n" + attemptText(at))
	}
	if d.NextAttemptsCursor != "" {
		fmt.Fprintf(&sb, "\n%d payment attempts in all; older ones: pass next_attempts_cursor as attempts_cursor.", d.PaymentAttemptsTotal)
	}
	for _, sp := range d.SurplusPayments {
		sb.WriteString("\n" + surplusText(sp))
	}
	for _, r := range d.Refunds {
		fmt.Fprintf(&sb, "\nRefund %s %s %s by %s at %s: %q.", r.ID, r.Amount.Display, r.Status, r.Actor, r.CreatedAt.Format(time.RFC3339), r.Reason)
	}
	for _, f := range d.Fulfilments {
		fmt.Fprintf(&sb, "\nShipped with %s %s by %s at %s.", f.Carrier, f.TrackingNumber, f.Actor, f.CreatedAt.Format(time.RFC3339))
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&sb, "\nNote by %s at %s: %s", n.Actor, n.CreatedAt.Format(time.RFC3339), n.Note)
	}
	for _, e := range d.Emails {
		fmt.Fprintf(&sb, "\nEmail %s to %s: %s after %d attempt(s)", e.Kind, e.To, e.Status, e.Attempts)
		if e.LastError != "" {
			fmt.Fprintf(&sb, " (%s)", e.LastError)
		}
		sb.WriteString(".")
	}
	for _, e := range d.AuditTrail {
		fmt.Fprintf(&sb, "\nAudit: %s by %s at %s.", e.Action, e.Actor, e.At.Format(time.RFC3339))
	}
	return sb.String()
}

// listAuditEvents lists the audit log, newest first, as its filters say.
func (a *Admin) listAuditEvents(ctx context.Context, args AuditArgs) (AuditList, string, error) {
	orderID, actor, action := strings.TrimSpace(args.OrderID), strings.TrimSpace(args.Actor), strings.TrimSpace(args.Tool)
	switch {
	case orderID != "" && !idPattern.MatchString(orderID):
		return AuditList{}, "", shop.Errorf(shop.Invalid, "$.order_id", `an order id is "ord_" followed by 35 letters and digits, as list_orders shows it`)
	case len(actor) > maxActorFilterLen:
		return AuditList{}, "", shop.Errorf(shop.Invalid, "$.actor", "at most %d characters, such as \"owner:3f9a1c0b\"", maxActorFilterLen)
	case len(action) > maxActionFilterLen:
		return AuditList{}, "", shop.Errorf(shop.Invalid, "$.tool", "at most %d characters, such as \"refund_order\"", maxActionFilterLen)
	}
	q := a.db.WithContext(ctx).Model(&auditRow{})
	for _, f := range [][2]string{{"order_id", orderID}, {"actor", actor}, {"action", action}} {
		if f[1] != "" {
			q = q.Where(f[0]+" = ?", f[1])
		}
	}
	from, to, err := timeRange(args.From, args.To, "$.from", "$.to")
	if err != nil {
		return AuditList{}, "", err
	}
	k := keyset{timeCol: "at", idCol: "id", from: from, to: to, limit: args.Limit, def: listEventsDefault, cursor: args.Cursor,
		fp: fingerprint("audit", orderID, actor, action, instantKey(from), instantKey(to))}
	rows, next, err := readPage(q, k, func(r auditRow) (time.Time, string) { return r.At, r.ID })
	if err != nil {
		return AuditList{}, "", err
	}
	list := AuditList{Events: make([]AuditEntry, len(rows)), NextCursor: next}
	lines := make([]string, len(rows))
	for i, r := range rows {
		e := auditEntry(r)
		list.Events[i] = e
		lines[i] = fmt.Sprintf("%s %s %s", e.At.Format(time.RFC3339Nano), e.Actor, e.Action)
		if e.OrderID != "" {
			lines[i] += " order " + e.OrderID
		}
		if e.Arguments != nil {
			lines[i] += " " + string(e.Arguments)
		}
	}
	return list, listText(lines, "No audit events match.", next), nil
}

// deref is *s, "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
