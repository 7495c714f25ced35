package checkout

import "time"

// Status is where a checkout session stands (CONTRACT.md §4).
type Status string

// The statuses of a session. not_ready_for_payment ⇄ ready_for_payment →
// in_progress → completed; canceled and expired end it.
const (
	NotReady   Status = "not_ready_for_payment"
	Ready      Status = "ready_for_payment"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
	Canceled   Status = "canceled"
	Expired    Status = "expired"
)

// Final reports whether a session in status s can no longer change.
func (s Status) Final() bool { return s == Completed || s == Canceled || s == Expired }

// Session is a checkout session as the contract shows it (CONTRACT.md §4).
type Session struct {
	ID                  string              `json:"id"`
	Status              Status              `json:"status"`
	Currency            string              `json:"currency"`
	PaymentMode         PaymentMode         `json:"payment_mode"`
	PaymentProvider     PaymentProvider     `json:"payment_provider"`
	Buyer               *Buyer              `json:"buyer,omitempty"`
	FulfillmentAddress  *Address            `json:"fulfillment_address,omitempty"`
	LineItems           []LineItem          `json:"line_items"`
	FulfillmentOptions  []FulfillmentOption `json:"fulfillment_options"`
	FulfillmentOptionID string              `json:"fulfillment_option_id,omitempty"`
	Totals              []Total             `json:"totals"`
	Messages            []Message           `json:"messages"`
	Links               []Link              `json:"links"`
	ExpiresAt           time.Time           `json:"expires_at"`
	Metadata            map[string]string   `json:"metadata,omitempty"`
}

// PaymentProvider tells the host's payment sheet whom it pays.
type PaymentProvider struct {
	Provider                string   `json:"provider"`
	MerchantID              string   `json:"merchant_id"`
	SupportedPaymentMethods []string `json:"supported_payment_methods"`
}

// Buyer is who checks out. Email is required when a buyer is given.
type Buyer struct {
	Name        string `json:"name,omitempty"`
	FirstName   string `json:"first_name,omitempty"`
	LastName    string `json:"last_name,omitempty"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phone_number,omitempty"`
}

// Address is a postal address; Country is an ISO 3166-1 alpha-2 code.
type Address struct {
	Name        string `json:"name"`
	LineOne     string `json:"line_one"`
	LineTwo     string `json:"line_two,omitempty"`
	City        string `json:"city"`
	State       string `json:"state"`
	Country     string `json:"country"`
	PostalCode  string `json:"postal_code"`
	PhoneNumber string `json:"phone_number,omitempty"`
}

// Item is what the buyer asks for: a variant id and a quantity.
type Item struct {
	ID       string `json:"id"`
	Quantity int64  `json:"quantity"`
}

// LineItem is a priced line. Amounts are minor units, and
// BaseAmount = UnitAmount × Quantity, Subtotal = BaseAmount − Discount,
// Total = Subtotal + Tax.
type LineItem struct {
	ID         string   `json:"id"`
	Item       Item     `json:"item"`
	Name       string   `json:"name"`
	Images     []string `json:"images"`
	UnitAmount int64    `json:"unit_amount"`
	BaseAmount int64    `json:"base_amount"`
	Discount   int64    `json:"discount"`
	Subtotal   int64    `json:"subtotal"`
	Tax        int64    `json:"tax"`
	Total      int64    `json:"total"`
}

// FulfillmentOption is a way to ship the order to the session's address;
// Total = Subtotal + Tax.
type FulfillmentOption struct {
	Type                 string    `json:"type"` // "shipping"
	ID                   string    `json:"id"`
	Title                string    `json:"title"`
	Subtitle             string    `json:"subtitle"`
	Carrier              string    `json:"carrier"`
	EarliestDeliveryTime time.Time `json:"earliest_delivery_time"`
	LatestDeliveryTime   time.Time `json:"latest_delivery_time"`
	Subtotal             int64     `json:"subtotal"`
	Tax                  int64     `json:"tax"`
	Total                int64     `json:"total"`
}

// TotalType names an entry of a session's totals.
type TotalType string

// The totals of a session, in the order they are listed.
const (
	TotalItemsBase     TotalType = "items_base_amount"
	TotalItemsDiscount TotalType = "items_discount"
	TotalSubtotal      TotalType = "subtotal"
	TotalDiscount      TotalType = "discount"
	TotalFulfillment   TotalType = "fulfillment"
	TotalTax           TotalType = "tax"
	TotalTotal         TotalType = "total"
)

// Total is one figure of a session's totals.
type Total struct {
	Type        TotalType `json:"type"`
	DisplayText string    `json:"display_text"`
	Amount      int64     `json:"amount"`
}

// MessageType is error (the session cannot be paid until it is fixed) or info.
type MessageType string

// Message types.
const (
	MessageError MessageType = "error"
	MessageInfo  MessageType = "info"
)

// Message tells the buyer or the model about the session: with an error's
// Code (shop.Missing, shop.Invalid, shop.OutOfStock, …) and the JSONPath
// Param of the field to fix.
type Message struct {
	Type        MessageType `json:"type"`
	Code        string      `json:"code,omitempty"`
	Param       string      `json:"param,omitempty"`
	ContentType string      `json:"content_type"` // "plain"
	Content     string      `json:"content"`
}

// Link is one of the merchant's pages shown in checkout.
type Link struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}
