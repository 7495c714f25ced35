package checkout

import (
	"time"

	"shop/orders"
)

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
	// ExternalCheckout is true when the merchant has buyers always pay on
	// a payment page (create_payment_link), not the host's payment sheet.
	ExternalCheckout bool `json:"external_checkout,omitempty"`
	// Order is the order a completed session became.
	Order *orders.Order `json:"order,omitempty"`
}

// PaymentProvider tells the host's payment sheet whom it pays and how, as
// ChatGPT's Checkout API reference shows it.
type PaymentProvider struct {
	Provider                string          `json:"provider"`
	MerchantID              string          `json:"merchant_id"`
	SupportedPaymentMethods []PaymentMethod `json:"supported_payment_methods"`
}

// PaymentMethod is a way the buyer may pay: a card of one of
// AllowedCardBrands (the policy's card_brands).
type PaymentMethod struct {
	Type              string   `json:"type"` // "card"
	AllowedCardBrands []string `json:"allowed_card_brands"`
}

// The value types a session shares with the order it becomes are declared
// in package orders, which keeps the receipt; these aliases let checkout name
// them as its own.
type (
	Buyer             = orders.Buyer
	Address           = orders.Address
	Item              = orders.Item
	LineItem          = orders.LineItem
	FulfillmentOption = orders.FulfillmentOption
	TotalType         = orders.TotalType
	Total             = orders.Total
	Link              = orders.Link
)

// The totals of a session, in the order they are listed.
const (
	TotalItemsBase     = orders.TotalItemsBase
	TotalItemsDiscount = orders.TotalItemsDiscount
	TotalSubtotal      = orders.TotalSubtotal
	TotalDiscount      = orders.TotalDiscount
	TotalFulfillment   = orders.TotalFulfillment
	TotalTax           = orders.TotalTax
	TotalTotal         = orders.TotalTotal
)

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
