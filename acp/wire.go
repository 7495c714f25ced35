package acp

import "time"

// The ACP objects of 2026-04-17 the shop answers (schema.agentic_checkout.json):
// only the fields the shop fills; the schema's additionalProperties: false
// holds for every one.

// Session is the ACP CheckoutSession, and CheckoutSessionWithOrder when
// Order is set.
type Session struct {
	ID                         string              `json:"id"`
	Protocol                   Protocol            `json:"protocol"`
	Capabilities               Capabilities        `json:"capabilities"`
	Buyer                      *Buyer              `json:"buyer,omitempty"`
	Status                     string              `json:"status"`
	Currency                   string              `json:"currency"`
	LineItems                  []LineItem          `json:"line_items"`
	FulfillmentDetails         *FulfillmentDetails `json:"fulfillment_details,omitempty"`
	FulfillmentOptions         []FulfillmentOption `json:"fulfillment_options"`
	SelectedFulfillmentOptions []SelectedOption    `json:"selected_fulfillment_options,omitempty"`
	Totals                     []Total             `json:"totals"`
	Messages                   []Message           `json:"messages"`
	Links                      []Link              `json:"links"`
	ExpiresAt                  *time.Time          `json:"expires_at,omitempty"`
	Metadata                   map[string]string   `json:"metadata,omitempty"`
	Discounts                  *Discounts          `json:"discounts,omitempty"`
	Order                      *Order              `json:"order,omitempty"`
}

// Discounts are the discount extension's answer: the codes as sent, those
// that apply and those that do not, with why.
type Discounts struct {
	Codes    []string           `json:"codes"`
	Applied  []AppliedDiscount  `json:"applied"`
	Rejected []RejectedDiscount `json:"rejected"`
}

// AppliedDiscount is a code that applies, with its promotion as a coupon.
type AppliedDiscount struct {
	ID          string               `json:"id"`
	Code        string               `json:"code,omitempty"`
	Coupon      Coupon               `json:"coupon"`
	Amount      int64                `json:"amount"`
	Method      string               `json:"method,omitempty"`
	Allocations []DiscountAllocation `json:"allocations,omitempty"`
}

// Coupon is the promotion behind an applied code.
type Coupon struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// DiscountAllocation is the part of a discount that went to one target.
type DiscountAllocation struct {
	Path   string `json:"path"`
	Amount int64  `json:"amount"`
}

// RejectedDiscount is a code that does not apply.
type RejectedDiscount struct {
	Code    string `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// Protocol names the version a session is answered in.
type Protocol struct {
	Version string `json:"version"`
}

// Capabilities are the seller's side of the negotiation: the payment
// handlers it takes and, when the agent offered interventions, the ones
// both support.
type Capabilities struct {
	Payment       *Payment       `json:"payment,omitempty"`
	Interventions *Interventions `json:"interventions,omitempty"`
}

// Payment lists the payment handlers.
type Payment struct {
	Handlers []Handler `json:"handlers"`
}

// Handler is a PaymentHandler.
type Handler struct {
	ID                      string         `json:"id"`
	Name                    string         `json:"name"`
	DisplayName             string         `json:"display_name,omitempty"`
	Version                 string         `json:"version"`
	Spec                    string         `json:"spec"`
	RequiresDelegatePayment bool           `json:"requires_delegate_payment"`
	RequiresPCICompliance   bool           `json:"requires_pci_compliance"`
	PSP                     string         `json:"psp"`
	ConfigSchema            string         `json:"config_schema"`
	InstrumentSchemas       []string       `json:"instrument_schemas"`
	Config                  map[string]any `json:"config"`
}

// Interventions is the seller's answer to the agent's interventions.
type Interventions struct {
	Supported   []string `json:"supported"`
	Required    []string `json:"required"`
	Enforcement string   `json:"enforcement"`
}

// Buyer is the ACP Buyer (email required).
type Buyer struct {
	FirstName   string `json:"first_name,omitempty"`
	LastName    string `json:"last_name,omitempty"`
	FullName    string `json:"full_name,omitempty"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phone_number,omitempty"`
}

// Address is the ACP Address (no phone: that is FulfillmentDetails').
type Address struct {
	Name       string `json:"name"`
	LineOne    string `json:"line_one"`
	LineTwo    string `json:"line_two,omitempty"`
	City       string `json:"city"`
	State      string `json:"state"`
	Country    string `json:"country"`
	PostalCode string `json:"postal_code"`
}

// FulfillmentDetails are the contact and address goods are shipped to.
type FulfillmentDetails struct {
	Name        string   `json:"name,omitempty"`
	PhoneNumber string   `json:"phone_number,omitempty"`
	Email       string   `json:"email,omitempty"`
	Address     *Address `json:"address,omitempty"`
}

// ItemRef is the Item a line refers to.
type ItemRef struct {
	ID string `json:"id"`
}

// LineItem is a priced line, its figures in Totals.
type LineItem struct {
	ID         string   `json:"id"`
	Item       ItemRef  `json:"item"`
	Quantity   int64    `json:"quantity"`
	Name       string   `json:"name,omitempty"`
	Images     []string `json:"images,omitempty"`
	UnitAmount int64    `json:"unit_amount"`
	VariantID  string   `json:"variant_id,omitempty"`
	Totals     []Total  `json:"totals"`
}

// Total is one figure, in minor units.
type Total struct {
	Type        string `json:"type"`
	DisplayText string `json:"display_text"`
	Amount      int64  `json:"amount"`
}

// FulfillmentOption is a FulfillmentOptionShipping.
type FulfillmentOption struct {
	Type                 string     `json:"type"`
	ID                   string     `json:"id"`
	Title                string     `json:"title"`
	Description          string     `json:"description,omitempty"`
	Carrier              string     `json:"carrier,omitempty"`
	EarliestDeliveryTime *time.Time `json:"earliest_delivery_time,omitempty"`
	LatestDeliveryTime   *time.Time `json:"latest_delivery_time,omitempty"`
	Totals               []Total    `json:"totals"`
}

// SelectedOption is a SelectedFulfillmentOption.
type SelectedOption struct {
	Type     string   `json:"type"`
	OptionID string   `json:"option_id"`
	ItemIDs  []string `json:"item_ids"`
}

// Message is a MessageInfo, MessageWarning or MessageError (Code is
// required of the last two and absent from the first).
type Message struct {
	Type        string `json:"type"`
	Code        string `json:"code,omitempty"`
	Param       string `json:"param,omitempty"`
	ContentType string `json:"content_type"`
	Content     string `json:"content"`
}

// Link is one of the merchant's pages.
type Link struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Order is the order a completed session made.
type Order struct {
	Type              string       `json:"type"`
	ID                string       `json:"id"`
	CheckoutSessionID string       `json:"checkout_session_id"`
	OrderNumber       string       `json:"order_number"`
	PermalinkURL      string       `json:"permalink_url"`
	Status            string       `json:"status"`
	LineItems         []OrderLine  `json:"line_items"`
	Totals            []Total      `json:"totals"`
	Adjustments       []Adjustment `json:"adjustments,omitempty"`
}

// OrderLine is an OrderLineItem.
type OrderLine struct {
	ID        string        `json:"id"`
	Title     string        `json:"title"`
	Quantity  OrderQuantity `json:"quantity"`
	Status    string        `json:"status"`
	UnitPrice int64         `json:"unit_price"`
	Subtotal  int64         `json:"subtotal"`
	Totals    []Total       `json:"totals"`
}

// OrderQuantity is an OrderLineItemQuantity.
type OrderQuantity struct {
	Ordered   int64 `json:"ordered"`
	Current   int64 `json:"current"`
	Fulfilled int64 `json:"fulfilled"`
}
