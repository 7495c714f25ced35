// Package contract holds the shapes docs/buying.md puts on the wire: the
// checkout session, its lines, totals and messages, the order and its
// receipt, and the catalog's import format. They are plain data with JSON
// tags, and methods only that read them.
//
// Package orders keeps the order and its receipt in these shapes, checkout
// names the session's as its own (checkout.Session is an alias of Session),
// and the shop's own clients (shop purchase, shop bench) decode the shop's
// answers into them, so that the shapes are written down once.
package contract

import "time"

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
	ID   string `json:"id"`
	Item Item   `json:"item"`
	Name string `json:"name"`
	// Description is the start of the product's description (the payment sheet shows it).
	Description string   `json:"description,omitempty"`
	Images      []string `json:"images"`
	UnitAmount  int64    `json:"unit_amount"`
	BaseAmount  int64    `json:"base_amount"`
	Discount    int64    `json:"discount"`
	Subtotal    int64    `json:"subtotal"`
	Tax         int64    `json:"tax"`
	Total       int64    `json:"total"`
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

// Link is one of the merchant's pages shown in checkout.
type Link struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}
