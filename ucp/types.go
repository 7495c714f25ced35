package ucp

import "time"

// The objects of UCP 2026-04-08 as the shop answers them (the schemas under
// source/schemas/ of the specification). Amounts are integers in minor
// units; currencies are upper-case ISO 4217 codes, as UCP writes them.

// Envelope is the ucp object every answer carries: the version used, and
// the capabilities (and, for checkouts, the payment handlers) active for it.
type Envelope struct {
	Version         string               `json:"version"`
	Status          string               `json:"status,omitempty"`
	Capabilities    map[string][]Entity  `json:"capabilities,omitempty"`
	PaymentHandlers map[string][]Handler `json:"payment_handlers,omitempty"`
}

// Entity is a capability or service as a response names it.
type Entity struct {
	Version string `json:"version"`
}

// Handler is a payment handler: how the agent gets a credential the shop
// can charge.
type Handler struct {
	ID                   string           `json:"id"`
	Version              string           `json:"version"`
	Spec                 string           `json:"spec,omitempty"`
	AvailableInstruments []InstrumentKind `json:"available_instruments,omitempty"`
	Config               map[string]any   `json:"config,omitempty"`
}

// InstrumentKind is a kind of payment instrument a handler takes.
type InstrumentKind struct {
	Type        string         `json:"type"`
	Constraints map[string]any `json:"constraints,omitempty"`
}

// Checkout is a checkout session (checkout.json with the fulfillment and
// discount extensions).
type Checkout struct {
	UCP         Envelope           `json:"ucp"`
	ID          string             `json:"id"`
	LineItems   []LineItem         `json:"line_items"`
	Buyer       *Buyer             `json:"buyer,omitempty"`
	Status      string             `json:"status"`
	Currency    string             `json:"currency"`
	Totals      []Total            `json:"totals"`
	Messages    []Message          `json:"messages,omitempty"`
	Links       []Link             `json:"links"`
	Policies    []Policy           `json:"policies,omitempty"` // since 2026-08-25
	ExpiresAt   *time.Time         `json:"expires_at,omitempty"`
	ContinueURL string             `json:"continue_url,omitempty"`
	Fulfillment *Fulfillment       `json:"fulfillment,omitempty"`
	Discounts   *Discounts         `json:"discounts,omitempty"`
	Order       *OrderConfirmation `json:"order,omitempty"`
}

// Cart is a basket (cart.json with the discount extension).
type Cart struct {
	UCP         Envelope   `json:"ucp"`
	ID          string     `json:"id"`
	LineItems   []LineItem `json:"line_items"`
	Buyer       *Buyer     `json:"buyer,omitempty"`
	Currency    string     `json:"currency"`
	Totals      []Total    `json:"totals"`
	Messages    []Message  `json:"messages,omitempty"`
	Links       []Link     `json:"links,omitempty"`
	ContinueURL string     `json:"continue_url,omitempty"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	Discounts   *Discounts `json:"discounts,omitempty"`
}

// LineItem is a line of a cart or checkout.
type LineItem struct {
	ID       string  `json:"id"`
	Item     Item    `json:"item"`
	Quantity int64   `json:"quantity"`
	Totals   []Total `json:"totals"`
}

// Item is what a line buys: a variant of the catalog.
type Item struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Price    int64  `json:"price"`
	ImageURL string `json:"image_url,omitempty"`
}

// Total is one figure: subtotal, items_discount and discount (negative),
// fulfillment, tax, total. The entries other than total add up to it.
type Total struct {
	Type        string `json:"type"`
	DisplayText string `json:"display_text,omitempty"`
	Amount      int64  `json:"amount"`
}

// Message is an error, warning or info about the resource.
type Message struct {
	Type     string `json:"type"`
	Code     string `json:"code,omitempty"`
	Path     string `json:"path,omitempty"`
	Content  string `json:"content"`
	Severity string `json:"severity,omitempty"`
}

// Policy is a business rule that applies to the items (2026-08-25): its
// type, a description any platform can show, and its page.
type Policy struct {
	Type        string      `json:"type"`
	Description Description `json:"description"`
	URL         string      `json:"url,omitempty"`
}

// Link is a legal or support page.
type Link struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Buyer is who buys.
type Buyer struct {
	FirstName   string `json:"first_name,omitempty"`
	LastName    string `json:"last_name,omitempty"`
	Email       string `json:"email,omitempty"`
	PhoneNumber string `json:"phone_number,omitempty"`
}

// PostalAddress is a UCP address; a shipping destination adds its id and,
// since 2026-08-25, its type.
type PostalAddress struct {
	ID              string `json:"id,omitempty"`
	Type            string `json:"type,omitempty"`
	FirstName       string `json:"first_name,omitempty"`
	LastName        string `json:"last_name,omitempty"`
	StreetAddress   string `json:"street_address,omitempty"`
	ExtendedAddress string `json:"extended_address,omitempty"`
	AddressLocality string `json:"address_locality,omitempty"`
	AddressRegion   string `json:"address_region,omitempty"`
	AddressCountry  string `json:"address_country,omitempty"`
	PostalCode      string `json:"postal_code,omitempty"`
	PhoneNumber     string `json:"phone_number,omitempty"`
}

// Fulfillment is the fulfillment extension: the shop ships, so one
// shipping method for every line, with one group of options.
type Fulfillment struct {
	Methods []Method `json:"methods"`
}

// Method is a fulfillment method.
type Method struct {
	ID                    string          `json:"id"`
	Type                  string          `json:"type"`
	LineItemIDs           []string        `json:"line_item_ids"`
	Destinations          []PostalAddress `json:"destinations,omitempty"`
	SelectedDestinationID string          `json:"selected_destination_id,omitempty"`
	Groups                []Group         `json:"groups,omitempty"`
}

// Group is the lines shipped together and their options.
type Group struct {
	ID               string   `json:"id"`
	LineItemIDs      []string `json:"line_item_ids"`
	Options          []Option `json:"options"`
	SelectedOptionID string   `json:"selected_option_id,omitempty"`
}

// Option is a shipping option.
type Option struct {
	ID                      string     `json:"id"`
	Title                   string     `json:"title"`
	Description             any        `json:"description,omitempty"` // a string in 2026-04-08, a Description since
	Carrier                 string     `json:"carrier,omitempty"`
	EarliestFulfillmentTime *time.Time `json:"earliest_fulfillment_time,omitempty"`
	LatestFulfillmentTime   *time.Time `json:"latest_fulfillment_time,omitempty"`
	Totals                  []Total    `json:"totals"`
}

// Discounts is the discount extension: promotion codes.
type Discounts struct {
	Codes   []string          `json:"codes,omitempty"`
	Applied []AppliedDiscount `json:"applied,omitempty"`
}

// AppliedDiscount is a promotion that applies: its code, title (the
// promotion's name), amount, how it was shared out (each: per item;
// across: over the order) and where it went.
type AppliedDiscount struct {
	Code        string       `json:"code,omitempty"`
	Title       string       `json:"title"`
	Amount      int64        `json:"amount"`
	Method      string       `json:"method,omitempty"`
	Allocations []Allocation `json:"allocations,omitempty"`
}

// Allocation is the part of a discount that went to one target.
type Allocation struct {
	Path   string `json:"path"`
	Amount int64  `json:"amount"`
}

// OrderConfirmation is what a completed checkout says of its order.
type OrderConfirmation struct {
	ID           string `json:"id"`
	Label        string `json:"label,omitempty"`
	PermalinkURL string `json:"permalink_url"`
}

// Order is an order (order.json).
type Order struct {
	UCP          Envelope        `json:"ucp"`
	ID           string          `json:"id"`
	Label        string          `json:"label,omitempty"`
	CheckoutID   string          `json:"checkout_id"`
	PermalinkURL string          `json:"permalink_url"`
	LineItems    []OrderLineItem `json:"line_items"`
	Fulfillment  OrderFulfilment `json:"fulfillment"`
	Currency     string          `json:"currency"`
	Totals       []Total         `json:"totals"`
	Adjustments  []Adjustment    `json:"adjustments,omitempty"`
	Policies     []Policy        `json:"policies,omitempty"` // since 2026-08-25
}

// OrderLineItem is a line of an order.
type OrderLineItem struct {
	ID       string        `json:"id"`
	Item     Item          `json:"item"`
	Quantity OrderQuantity `json:"quantity"`
	Totals   []Total       `json:"totals"`
	Status   string        `json:"status"`
}

// OrderQuantity counts a line's units.
type OrderQuantity struct {
	Total     int64 `json:"total"`
	Fulfilled int64 `json:"fulfilled"`
}

// OrderFulfilment is where and how an order ships.
type OrderFulfilment struct {
	Expectations []Expectation `json:"expectations"`
}

// Expectation is a shipment the buyer can expect.
type Expectation struct {
	ID            string         `json:"id"`
	LineItems     []ExpectedLine `json:"line_items"`
	MethodType    string         `json:"method_type"`
	Destination   PostalAddress  `json:"destination"`
	FulfillableOn string         `json:"fulfillable_on,omitempty"`
}

// ExpectedLine is a line of an expectation.
type ExpectedLine struct {
	ID       string `json:"id"`
	Quantity int64  `json:"quantity"`
}

// ErrorResponse answers a call that made or found nothing (error_response.json).
type ErrorResponse struct {
	UCP         Envelope  `json:"ucp"`
	Messages    []Message `json:"messages"`
	ContinueURL string    `json:"continue_url,omitempty"`
}

// Price is an amount in a currency.
type Price struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// PriceRange is the lowest and highest price of a product's variants.
type PriceRange struct {
	Min Price `json:"min"`
	Max Price `json:"max"`
}

// Description is a text in its formats.
type Description struct {
	Plain string `json:"plain"`
}

// Media is an image.
type Media struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Product is a product of the catalog (types/product.json).
type Product struct {
	ID          string      `json:"id"`
	Title       string      `json:"title"`
	Description Description `json:"description"`
	Categories  []Category  `json:"categories,omitempty"`
	PriceRange  PriceRange  `json:"price_range"`
	Media       []Media     `json:"media,omitempty"`
	// Options are the product's option axes (Size, Colour) and their
	// values; on get_product each value says whether a variant of it and
	// the other selections exists and is available.
	Options []ProductOption `json:"options,omitempty"`
	// Selected are the effective selections (get_product): the options of
	// the variant asked for, else of the featured (first) variant.
	Selected []SelectedOption `json:"selected,omitempty"`
	Variants []Variant        `json:"variants"`
}

// ProductOption is an option axis of a product and its values.
type ProductOption struct {
	Name   string        `json:"name"`
	Values []OptionValue `json:"values"`
}

// OptionValue is a value of an option; Available and Exists only on
// get_product, relative to the product's selections.
type OptionValue struct {
	Label     string `json:"label"`
	Available *bool  `json:"available,omitempty"`
	Exists    *bool  `json:"exists,omitempty"`
}

// Category is a category a product is in.
type Category struct {
	Value string `json:"value"`
}

// Variant is a buyable variant (types/variant.json).
type Variant struct {
	ID           string           `json:"id"`
	Title        string           `json:"title"`
	Description  Description      `json:"description"`
	Price        Price            `json:"price"`
	Availability *Availability    `json:"availability,omitempty"`
	Options      []SelectedOption `json:"options,omitempty"`
	Media        []Media          `json:"media,omitempty"`
	// Inputs correlate a lookup's ids with the variants they found.
	Inputs []InputCorrelation `json:"inputs,omitempty"`
}

// Availability says whether a variant can be bought now.
type Availability struct {
	Available bool `json:"available"`
}

// SelectedOption is a variant's value of a product option.
type SelectedOption struct {
	Name  string `json:"name"`
	Label string `json:"label"`
}

// InputCorrelation names the lookup id a variant answers.
type InputCorrelation struct {
	ID    string `json:"id"`
	Match string `json:"match,omitempty"`
}

// Pagination is a search's paging.
type Pagination struct {
	Cursor      string `json:"cursor,omitempty"`
	HasNextPage bool   `json:"has_next_page"`
	TotalCount  int64  `json:"total_count"`
}

// SearchResponse answers search_catalog.
type SearchResponse struct {
	UCP        Envelope    `json:"ucp"`
	Products   []Product   `json:"products"`
	Pagination *Pagination `json:"pagination,omitempty"`
	Messages   []Message   `json:"messages,omitempty"`
	Policies   []Policy    `json:"policies,omitempty"` // since 2026-08-25
}

// LookupResponse answers lookup_catalog.
type LookupResponse struct {
	UCP      Envelope  `json:"ucp"`
	Products []Product `json:"products"`
	Messages []Message `json:"messages,omitempty"`
	Policies []Policy  `json:"policies,omitempty"` // since 2026-08-25
}

// ProductResponse answers get_product.
type ProductResponse struct {
	UCP      Envelope  `json:"ucp"`
	Product  Product   `json:"product"`
	Messages []Message `json:"messages,omitempty"`
	Policies []Policy  `json:"policies,omitempty"` // since 2026-08-25
}
