package orders

import (
	"github.com/google/jsonschema-go/jsonschema"

	"shop"
	"shop/money"
)

// Bounds of the staff's write actions, as they check them.
const (
	maxOrderIDArgLen  = 64
	maxVariantIDLen   = 64
	maxLineIDLen      = 80
	maxPickLines      = 50
	maxLineQuantity   = 999
	maxCarrierLen     = 64
	maxTrackingLen    = 100
	maxTrackingURLLen = 500
	maxNoteLen        = 2000
	maxStock          = 1_000_000_000
)

// LineQty names a quantity of one order line by its id (li_…).
type LineQty struct {
	LineID   string `json:"line_id"`
	Quantity int64  `json:"quantity"`
}

// RefineSchema bounds a line's id and quantity.
func (LineQty) RefineSchema(s *jsonschema.Schema) {
	s.Properties["line_id"].MaxLength = jsonschema.Ptr(maxLineIDLen)
	s.Properties["quantity"].Minimum, s.Properties["quantity"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(maxLineQuantity))
}

// refineOrderIDArg bounds the order_id argument of a write action and
// requires the named properties.
func refineOrderIDArg(s *jsonschema.Schema, required ...string) {
	p := s.Properties["order_id"]
	p.MinLength, p.MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxOrderIDArgLen)
	s.Required = required
}

// FulfillArgs are fulfill_order's arguments: a shipment, or delivered alone.
type FulfillArgs struct {
	OrderID        string    `json:"order_id"`
	Carrier        string    `json:"carrier" jsonschema:"USPS, UPS, DHL, …"`
	TrackingNumber string    `json:"tracking_number"`
	TrackingURL    string    `json:"tracking_url" jsonschema:"https:// link to the carrier's tracking page."`
	Lines          []LineQty `json:"lines"`
	Delivered      bool      `json:"delivered" jsonschema:"Mark a shipped order delivered."`
}

// RefineSchema bounds the shipment as Fulfill checks it.
func (FulfillArgs) RefineSchema(s *jsonschema.Schema) {
	refineOrderIDArg(s, "order_id")
	p := s.Properties
	p["carrier"].MinLength, p["carrier"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxCarrierLen)
	p["tracking_number"].MinLength, p["tracking_number"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxTrackingLen)
	p["tracking_url"].MaxLength = jsonschema.Ptr(maxTrackingURLLen)
	p["lines"].MaxItems = jsonschema.Ptr(maxPickLines)
}

// FulfillResult is what Fulfill answers: the shipment, or the delivery.
type FulfillResult struct {
	shop.OneOf
	Shipped   *Shipment
	Delivered *Delivery
}

// Shipment is a recorded shipment and the order's status after it.
type Shipment struct {
	FulfilmentID string    `json:"fulfilment_id"`
	Status       string    `json:"status"`
	Lines        []LineQty `json:"lines"`
}

// Delivery is the status of an order marked delivered.
type Delivery struct {
	Status string `json:"status"`
}

// NoteArgs are add_order_note's arguments.
type NoteArgs struct {
	OrderID string `json:"order_id"`
	Note    string `json:"note"`
}

// RefineSchema bounds the note as AddNote checks it.
func (NoteArgs) RefineSchema(s *jsonschema.Schema) {
	refineOrderIDArg(s, "order_id", "note")
	s.Properties["note"].MinLength, s.Properties["note"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxNoteLen)
}

// NoteResult is the id of an added note.
type NoteResult struct {
	NoteID string `json:"note_id"`
}

// RefundArgs are refund_order's arguments.
type RefundArgs struct {
	OrderID string    `json:"order_id"`
	Amount  *int64    `json:"amount" jsonschema:"Minor units; default: what is left to refund."`
	Restock []LineQty `json:"restock"`
	TwoStep
}

// RefineSchema bounds the refund as Refund checks it.
func (RefundArgs) RefineSchema(s *jsonschema.Schema) {
	refineOrderIDArg(s, "order_id", "reason")
	s.Properties["amount"].Minimum = jsonschema.Ptr(1.0)
	s.Properties["restock"].MaxItems = jsonschema.Ptr(maxPickLines)
}

// RefundPlan is a refund as previewed and as done (with its status, id and
// the provider's reference).
type RefundPlan struct {
	OrderID       string      `json:"order_id"`
	Number        int64       `json:"number"`
	Amount        money.Price `json:"amount"`
	RefundedAfter money.Price `json:"refunded_after"`
	LeftAfter     money.Price `json:"left_after"`
	Restock       []LineQty   `json:"restock,omitempty"`
	Status        string      `json:"status,omitempty"`
	RefundID      string      `json:"refund_id,omitempty"`
	Reference     string      `json:"reference,omitempty"`
}

// RefundAnswer is what Refund answers: the preview, or the refund done.
type RefundAnswer struct {
	shop.OneOf
	Preview *Preview[RefundPlan]
	Refund  *RefundPlan
}

// CancelArgs are cancel_order's arguments; Refund and Restock default to true.
type CancelArgs struct {
	OrderID string `json:"order_id"`
	Refund  *bool  `json:"refund"`
	Restock *bool  `json:"restock"`
	TwoStep
}

// RefineSchema states the defaults.
func (CancelArgs) RefineSchema(s *jsonschema.Schema) {
	refineOrderIDArg(s, "order_id", "reason")
	s.Properties["refund"].Default, s.Properties["restock"].Default = []byte("true"), []byte("true")
}

// CancelPlan is a cancellation as previewed, and as done when it refunds nothing.
type CancelPlan struct {
	OrderID     string      `json:"order_id"`
	Number      int64       `json:"number"`
	StatusAfter string      `json:"status_after"`
	Refund      money.Price `json:"refund"`
	Restock     []LineQty   `json:"restock"`
}

// CancelAnswer is what Cancel answers: the preview, the cancellation, or
// the refund made with it.
type CancelAnswer struct {
	shop.OneOf
	Preview  *Preview[CancelPlan]
	Canceled *CancelPlan
	Refund   *RefundPlan
}

// AdjustArgs are adjust_inventory's arguments: exactly one of Set and Add.
type AdjustArgs struct {
	VariantID string `json:"variant_id"`
	Set       *int64 `json:"set"`
	Add       *int64 `json:"add"`
	TwoStep
}

// RefineSchema bounds the change.
func (AdjustArgs) RefineSchema(s *jsonschema.Schema) {
	p := s.Properties
	p["variant_id"].MinLength, p["variant_id"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxVariantIDLen)
	p["set"].Minimum, p["set"].Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(maxStock))
	p["add"].Minimum, p["add"].Maximum = jsonschema.Ptr(float64(-maxStock)), jsonschema.Ptr(float64(maxStock))
	s.Required = []string{"variant_id", "reason"}
}

// Adjustment is a change of a variant's stock, as previewed and as done.
type Adjustment struct {
	VariantID string `json:"variant_id"`
	Before    int64  `json:"before"`
	After     int64  `json:"after"`
	// HeldForPayment is the units held by checkout sessions being paid
	// (PayingSessions of them): the stock may not go below them.
	HeldForPayment int64 `json:"held_for_payment"`
	PayingSessions int64 `json:"paying_sessions"`
}

// AdjustAnswer is what AdjustInventory answers: the preview, or the change made.
type AdjustAnswer struct {
	shop.OneOf
	Preview  *Preview[Adjustment]
	Adjusted *Adjustment
}
