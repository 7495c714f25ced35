package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/segmentio/encoding/json"
	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database"
	"shop/money"
)

// NewOrder is what checkout hands over when a payment succeeded.
type NewOrder struct {
	// ID is the order's id when the caller chose it beforehand (NewID);
	// empty, Create makes one.
	ID string
	// SessionID is the checkout session the order completes; one order per session.
	SessionID string
	// Buyer may be nil; Email is then required.
	Buyer *contract.Buyer
	// Email is the buyer's email; when empty, Buyer.Email is used.
	Email string
	// Address is the shipping address.
	Address *contract.Address
	// FulfillmentOption is the chosen shipping option.
	FulfillmentOption *contract.FulfillmentOption
	// LineItems are the priced lines, in order.
	LineItems []contract.LineItem
	// Totals are the session's totals, in order; the "total" entry equals Total.
	Totals []contract.Total
	// Links are the legal pages the buyer saw.
	Links []contract.Link
	// Currency is the lower-case ISO 4217 code of every amount.
	Currency string
	// Total is the amount charged, in minor units.
	Total int64
	// Payment is how it was paid; an empty Status means "succeeded".
	Payment contract.Payment
	// Channel is the endpoint the session came through (shop.Channel);
	// empty means "mcp".
	Channel string
	// Short is, by variant id, the units the stock on hand no longer
	// covered when the order was written (the catalog changed while the
	// buyer paid): the order records them on its lines, for the staff to
	// restock or refund.
	Short map[string]int64
	// AccountID is the linked account whose session this is (docs/accounts.md),
	// "" for a guest's; see setAccount.
	AccountID string
	// Display is how the session showed its figures; the receipt, the
	// emails and the texts show them the same way.
	Display contract.Display
	// Locale is the buyer's language (a BCP 47 tag), "" when unknown: the
	// order's emails are written in it.
	Locale string
}

// ErrExists is returned (wrapped) by Create when the session already has an order.
var ErrExists = errors.New("the session already has an order")

// orderRow is a row of orders. Buyer, Address, FulfillmentOption, Totals and
// Links hold JSON as the buyer saw them; Email is normalized (trimmed,
// lower-cased) so that it can be compared in SQL.
type orderRow struct {
	ID                string `gorm:"primaryKey"`
	Number            int64
	CheckoutSessionID string
	Status            Status
	Email             string
	Buyer             string
	Address           string
	FulfillmentOption string
	Totals            string
	Links             string
	Currency          string
	Total             int64
	PaymentProvider   string
	PaymentMode       string
	PaymentReference  string
	PaymentStatus     string
	Refunded          int64
	// ShortUnits sums the lines' ShortQuantity.
	ShortUnits int64
	// Channel is the endpoint the order's session came through (mcp, acp, ucp).
	Channel string
	// AccountID is the linked account that placed the order, nil for a guest.
	AccountID *string
	// DeliveredAt is when staff marked the order delivered: the return
	// window starts then.
	DeliveredAt *time.Time
	// Display is the JSON of the session's contract.Display, "" before it had one.
	Display string
	// Locale is the buyer's BCP 47 tag, "" when unknown (emails in English).
	Locale    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (orderRow) TableName() string { return "orders" }

// lineRow is a row of order_lines.
type lineRow struct {
	OrderID    string `gorm:"primaryKey"`
	Position   int    `gorm:"primaryKey"`
	LineID     string
	VariantID  string
	Name       string
	Images     string
	Quantity   int64
	UnitAmount int64
	BaseAmount int64
	Discount   int64
	Subtotal   int64
	Tax        int64
	Total      int64
	Fulfilled  int64
	Restocked  int64
	// Returned counts the units in returns that are requested, accepted or
	// refunded: at most Fulfilled (returns.go).
	Returned int64
	// ShortQuantity is how many of the line's units were not on hand when
	// the order was written: they were sold without being taken from stock.
	ShortQuantity int64
}

func (lineRow) TableName() string { return "order_lines" }

// Create writes the order, its lines and an audit event ("order.created",
// actor "checkout") in tx, the caller's transaction: checkout's completion
// also takes the stock and completes the session in it. A nil tx runs in a
// transaction of its own.
//
// The order number comes from the counters row 'order_number', incremented
// in tx; the id is in.ID when the caller chose it (NewID), else a new one
// (newOrderID). An order short of stock (in.Short) records the units on its
// lines and an audit event "order.short" with them. The unique
// checkout_session_id makes a second order for one session impossible:
// Create then writes nothing, gives the number back and returns
// an error wrapping ErrExists, and the caller may go on in tx and read the
// first with BySession. Another error leaves the caller's transaction to be
// rolled back: Create writes under no savepoint of its own (a savepoint cost
// SQLite a temporary file and a copy of every page the order wrote).
func (o *Orders) Create(ctx context.Context, tx *gorm.DB, in NewOrder) (*contract.Order, error) {
	if tx == nil {
		var ord *contract.Order
		err := database.Transact(database.WithClock(ctx, o.now), o.db, func(tx *gorm.DB) error {
			var err error
			ord, err = o.Create(ctx, tx, in)
			return err
		})
		return ord, err
	}
	row, lines, err := o.rows(in)
	if err != nil {
		return nil, err
	}
	tx = tx.WithContext(ctx)
	if row.Number, err = nextNumber(tx); err != nil {
		return nil, err
	}
	switch err := insertOrder(tx, row, lines); {
	case errors.Is(err, errOrderExists):
		if err := giveNumberBack(tx); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("create order for session %s: %w", in.SessionID, ErrExists)
	case err != nil:
		return nil, err
	}
	if err := setAccount(tx, row.ID, in.AccountID); err != nil {
		return nil, err
	}
	// The receipt is made from the rows as written, by the same function
	// that reads them back (a read-back was two statements more per order).
	ord, err := o.order(row, lines)
	if err != nil {
		return nil, err
	}
	err = o.Audit(ctx, tx, Event{
		Actor: "checkout", Action: "order.created", OrderID: row.ID, SessionID: in.SessionID,
		Arguments: map[string]any{"payment": in.Payment},
		After:     ord.Receipt, // not the permalink: its token is a bearer secret
	})
	if err == nil && row.ShortUnits > 0 {
		err = o.Audit(ctx, tx, Event{Actor: "checkout", Action: "order.short", OrderID: row.ID, SessionID: in.SessionID,
			After: shortState(row, lines)})
	}
	if err != nil {
		return nil, err
	}
	if err := o.emailConfirmation(ctx, tx, row, lines); err != nil { // in the order's transaction: never lost, never twice
		return nil, err
	}
	// Only an agent of UCP subscribes a session's order to webhooks before
	// the order exists (docs/ucp.md): no other order has one to link.
	if row.Channel == string(shop.ChannelUCP) {
		if err := linkWebhook(tx, in.SessionID, row.ID); err != nil {
			return nil, err
		}
	}
	return ord, nil
}

// orderColumns and lineColumns are the columns insertOrder writes, in
// orderRow's and lineRow's order.
var (
	orderColumns = []string{"id", "number", "checkout_session_id", "status", "email", "buyer", "address", "fulfillment_option",
		"totals", "links", "currency", "total", "payment_provider", "payment_mode", "payment_reference", "payment_status",
		"refunded", "short_units", "channel", "display", "locale", "created_at", "updated_at"}
	lineColumns = []string{"order_id", "position", "line_id", "variant_id", "name", "images", "quantity", "unit_amount",
		"base_amount", "discount", "subtotal", "tax", "total", "fulfilled", "restocked", "short_quantity"}
)

// errOrderExists is insertOrder's answer when the session has an order.
var errOrderExists = errors.New("the session has an order")

// insertOrder writes an order's row and its lines' (given the order's id
// here) in tx, a statement each, below gorm (database.Insert): an order is
// written with every purchase. When the session has an order already it
// writes nothing and returns errOrderExists, with tx still usable on both
// engines (the conflict is not an error of the statement).
func insertOrder(tx *gorm.DB, r *orderRow, lines []lineRow) error {
	n, err := database.InsertSuffix(tx, "orders", orderColumns, " ON CONFLICT (checkout_session_id) DO NOTHING", []any{r.ID, r.Number,
		r.CheckoutSessionID, r.Status, r.Email, r.Buyer, r.Address, r.FulfillmentOption, r.Totals, r.Links, r.Currency, r.Total,
		r.PaymentProvider, r.PaymentMode, r.PaymentReference, r.PaymentStatus, r.Refunded, r.ShortUnits, r.Channel, r.Display, r.Locale, r.CreatedAt, r.UpdatedAt})
	if err != nil {
		return fmt.Errorf("create order: %w", err)
	}
	if n == 0 {
		return errOrderExists
	}
	if len(lines) == 0 {
		return nil
	}
	values := make([][]any, len(lines))
	for i := range lines {
		l := &lines[i]
		l.OrderID = r.ID
		values[i] = []any{l.OrderID, l.Position, l.LineID, l.VariantID, l.Name, l.Images, l.Quantity, l.UnitAmount,
			l.BaseAmount, l.Discount, l.Subtotal, l.Tax, l.Total, l.Fulfilled, l.Restocked, l.ShortQuantity}
	}
	if _, err := database.Insert(tx, "order_lines", lineColumns, values...); err != nil {
		return fmt.Errorf("create order %s lines: %w", r.ID, err)
	}
	return nil
}

// rows checks what checkout hands over and turns it into rows.
func (o *Orders) rows(in NewOrder) (*orderRow, []lineRow, error) {
	email := in.Email
	if email == "" && in.Buyer != nil {
		email = in.Buyer.Email
	}
	email = normalizeEmail(email)
	cur, curErr := money.Lookup(in.Currency)
	switch {
	case in.SessionID == "":
		return nil, nil, errors.New("create order: no session id")
	case email == "":
		return nil, nil, fmt.Errorf("create order for session %s: no buyer email", in.SessionID)
	case curErr != nil:
		return nil, nil, fmt.Errorf("create order for session %s: %w", in.SessionID, curErr)
	case len(in.LineItems) == 0:
		return nil, nil, fmt.Errorf("create order for session %s: no line items", in.SessionID)
	case in.Total < 0:
		return nil, nil, fmt.Errorf("create order for session %s: negative total %d", in.SessionID, in.Total)
	case in.ID != "" && !ValidID(in.ID):
		return nil, nil, fmt.Errorf("create order for session %s: %q is not an order id", in.SessionID, in.ID)
	}
	for _, t := range in.Totals {
		if t.Type == contract.TotalTotal && t.Amount != in.Total {
			return nil, nil, fmt.Errorf("create order for session %s: total %d differs from the totals' %d", in.SessionID, in.Total, t.Amount)
		}
	}
	now := o.now().UTC().Truncate(time.Microsecond) // what both engines keep
	pay := in.Payment
	if pay.Status == "" {
		pay.Status = PaymentSucceeded
	}
	id := in.ID
	if id == "" {
		id = newOrderID()
	}
	channel := in.Channel
	if channel == "" {
		channel = string(shop.ChannelMCP)
	}
	row := &orderRow{
		ID: id, CheckoutSessionID: in.SessionID, Status: StatusConfirmed, Email: email,
		Buyer: marshalIf(in.Buyer), Address: marshalIf(in.Address), FulfillmentOption: marshalIf(in.FulfillmentOption),
		Totals: marshal(nonNilSlice(in.Totals)), Links: marshal(nonNilSlice(in.Links)),
		Currency: cur.Code(), Total: in.Total,
		PaymentProvider: pay.Provider, PaymentMode: pay.Mode, PaymentReference: pay.Reference, PaymentStatus: pay.Status,
		Channel: channel, Display: marshal(in.Display), Locale: in.Locale, CreatedAt: now, UpdatedAt: now,
	}
	lines := make([]lineRow, len(in.LineItems))
	for i, li := range in.LineItems {
		if li.Item.Quantity <= 0 {
			return nil, nil, fmt.Errorf("create order for session %s: line %d has quantity %d", in.SessionID, i, li.Item.Quantity)
		}
		lines[i] = lineRow{
			Position: i, LineID: li.ID, VariantID: li.Item.ID, Name: li.Name, Images: marshal(nonNilSlice(li.Images)),
			Quantity: li.Item.Quantity, UnitAmount: li.UnitAmount, BaseAmount: li.BaseAmount, Discount: li.Discount,
			Subtotal: li.Subtotal, Tax: li.Tax, Total: li.Total,
		}
	}
	shortLines(row, lines, in.Short)
	return row, lines, nil
}

// shortLines spreads the units short of each variant over the order's lines
// of that variant, in order, and sums them on the order.
func shortLines(row *orderRow, lines []lineRow, short map[string]int64) {
	left := maps.Clone(short)
	for i := range lines {
		n := min(max(0, left[lines[i].VariantID]), lines[i].Quantity)
		if n > 0 {
			lines[i].ShortQuantity = n
			left[lines[i].VariantID] -= n
			row.ShortUnits += n
		}
	}
}

// ShortLine is a line of an order short of stock, as the audit log records it.
type ShortLine struct {
	LineID    string `json:"line_id"`
	VariantID string `json:"variant_id"`
	Quantity  int64  `json:"quantity"`
	Short     int64  `json:"short"`
}

// shortState is what the audit event "order.short" records: the units short
// in all and by line.
func shortState(row *orderRow, lines []lineRow) map[string]any {
	var short []ShortLine
	for _, l := range lines {
		if l.ShortQuantity > 0 {
			short = append(short, ShortLine{LineID: l.LineID, VariantID: l.VariantID, Quantity: l.Quantity, Short: l.ShortQuantity})
		}
	}
	return map[string]any{"short_units": row.ShortUnits, "lines": short}
}

// nextNumber takes the next order number from the counters table. The
// increment is one UPDATE, which locks the row until tx ends: concurrent
// transactions wait for each other (PostgreSQL) or are serialized by the
// write lock (SQLite), so no two orders share a number and nobody retries.
func nextNumber(tx *gorm.DB) (int64, error) {
	var n int64
	err := database.QueryRow(tx, "UPDATE counters SET value = value + 1 WHERE name = ? RETURNING value", orderNumberCounter).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, errors.New("next order number: the counters row 'order_number' is missing; run the migrations")
	}
	if err != nil {
		return 0, fmt.Errorf("next order number: %w", err)
	}
	return n, nil
}

// giveNumberBack undoes nextNumber in tx, for an order not written: tx
// holds the counter's row since nextNumber, so nobody took a number since.
func giveNumberBack(tx *gorm.DB) error {
	if _, err := database.Exec(tx, "UPDATE counters SET value = value - 1 WHERE name = ?", orderNumberCounter); err != nil {
		return fmt.Errorf("give the order number back: %w", err)
	}
	return nil
}

// orderNumberCounter is the name of the counters row of the order numbers.
const orderNumberCounter = "order_number"

// newOrderID returns "ord_" and a new id (shop.NewID).
func newOrderID() string { return shop.NewID("ord_") }

// randomID returns a new id without a prefix, for an id whose prefix the
// caller adds (shop.NewID).
func randomID() string { return shop.NewID("") }

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// marshal encodes a JSON column, as checkout's does (segmentio/encoding:
// encoding/json's bytes, in about half its time); an order's columns are
// encoded, and read back for its receipt, with every purchase.
func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs and slices of them reach here
	}
	return string(b)
}

// marshalIf is marshal for an optional value: "" for nil.
func marshalIf[T any](v *T) string {
	if v == nil {
		return ""
	}
	return marshal(v)
}

func unmarshalIf(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}
