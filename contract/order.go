package contract

import "time"

// PaymentSucceeded is the status of a payment the provider accepted, as
// every new order's payment is.
const PaymentSucceeded = "succeeded"

// Payment is how an order was paid.
type Payment struct {
	// Provider is the payment provider ("stripe").
	Provider string `json:"provider"`
	// Mode is "test" or "live".
	Mode string `json:"mode"`
	// Reference is the provider's id of the payment (a PaymentIntent id),
	// for machines (shop purchase checks the charge with it); no page or
	// text a buyer reads shows it.
	Reference string `json:"reference"`
	// Status is the payment's status, PaymentSucceeded for a new order.
	Status string `json:"status"`
}

// Order is the contract's Order: {id, checkout_session_id, permalink_url,
// number, status, receipt: Receipt}.
type Order struct {
	// ID is "ord_…", unguessable.
	ID string `json:"id"`
	// CheckoutSessionID is the session the order completed.
	CheckoutSessionID string `json:"checkout_session_id"`
	// PermalinkURL is the signed address of the receipt page.
	PermalinkURL string `json:"permalink_url"`
	// Number is the shop's order number as people quote it (1001, 1002, …).
	Number int64 `json:"number"`
	// Status is the order's status ("confirmed").
	Status string `json:"status"`
	// Receipt is what the buyer paid for, read from the database.
	Receipt Receipt `json:"receipt"`
}

// Receipt is the contract's Receipt: {order_id, number, status, created_at,
// email, line_items, fulfillment_address, fulfillment_option, totals,
// payment: {provider, mode, reference, status}, links}, plus the currency
// its amounts are in. Its figures are read back from the database (the
// order_lines rows and the stored totals), never taken from a caller.
type Receipt struct {
	// OrderID is the order's id.
	OrderID string `json:"order_id"`
	// Number is the order's number.
	Number int64 `json:"number"`
	// Status is the order's status.
	Status string `json:"status"`
	// CreatedAt is when the order was placed.
	CreatedAt time.Time `json:"created_at"`
	// Email is the buyer's email, trimmed and lower-cased.
	Email string `json:"email"`
	// Currency is the lower-case ISO 4217 code of every amount.
	Currency string `json:"currency"`
	// LineItems are the lines as paid for, in the session's order.
	LineItems []LineItem `json:"line_items"`
	// FulfillmentAddress is where the order ships.
	FulfillmentAddress *Address `json:"fulfillment_address"`
	// FulfillmentOption is the chosen shipping option.
	FulfillmentOption *FulfillmentOption `json:"fulfillment_option"`
	// Totals are the session's totals, in the order they were listed.
	Totals []Total `json:"totals"`
	// Payment is how the order was paid.
	Payment Payment `json:"payment"`
	// Links are the legal pages the buyer saw at checkout.
	Links []Link `json:"links"`
	// Display is how the figures are shown, as the session showed them.
	Display Display `json:"display"`
	// Refunds are the money given back, oldest first; absent when none.
	Refunds []Refund `json:"refunds,omitempty"`
	// RefundedAmount is the sum of Refunds' amounts (0 when none).
	RefundedAmount int64 `json:"refunded_amount"`
	// Tracking is one entry per parcel the staff shipped, oldest first;
	// absent until the first.
	Tracking []Tracking `json:"tracking,omitempty"`
	// Returns are the returns the buyer started, oldest first; absent
	// until the first.
	Returns []Return `json:"returns,omitempty"`
}

// Return is a return of some of an order's units as the buyer and agents
// see it: its status (requested, canceled, rejected, accepted, refunded),
// the units, why, and the refund (minor units; paid once refunded).
type Return struct {
	ID           string       `json:"id"`
	Status       string       `json:"status"`
	Lines        []ReturnLine `json:"lines"`
	Reason       string       `json:"reason"`
	RefundAmount int64        `json:"refund_amount"`
	// RejectReason is the staff's reason, shown to the buyer, when rejected.
	RejectReason string    `json:"reject_reason,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// AdjustmentStatus is the return's status as agents' order adjustments
// (ACP's and UCP's) name it: pending until refunded, completed once
// refunded, failed when canceled or rejected.
func (r Return) AdjustmentStatus() string {
	switch r.Status {
	case "refunded":
		return "completed"
	case "canceled", "rejected":
		return "failed"
	}
	return "pending"
}

// ReturnLine is a quantity of one order line in a return.
type ReturnLine struct {
	LineItemID string `json:"line_item_id"`
	Quantity   int64  `json:"quantity"`
}

// Refund is money given back to the buyer: how much and when.
type Refund struct {
	Amount    int64     `json:"amount"`
	CreatedAt time.Time `json:"created_at"`
}

// Tracking is how to follow one parcel of an order: the carrier, its
// tracking number and, when the staff gave one, the carrier's tracking page.
type Tracking struct {
	Carrier        string    `json:"carrier"`
	TrackingNumber string    `json:"tracking_number"`
	TrackingURL    string    `json:"tracking_url,omitempty"`
	ShippedAt      time.Time `json:"shipped_at"`
}
