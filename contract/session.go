package contract

import "time"

// SessionStatus is where a checkout session stands.
type SessionStatus string

// The statuses of a session. not_ready_for_payment ⇄ ready_for_payment →
// in_progress → completed; canceled and expired end it.
const (
	SessionNotReady   SessionStatus = "not_ready_for_payment"
	SessionReady      SessionStatus = "ready_for_payment"
	SessionInProgress SessionStatus = "in_progress"
	SessionCompleted  SessionStatus = "completed"
	SessionCanceled   SessionStatus = "canceled"
	SessionExpired    SessionStatus = "expired"
)

// Final reports whether a session in status s can no longer change.
func (s SessionStatus) Final() bool {
	return s == SessionCompleted || s == SessionCanceled || s == SessionExpired
}

// PaymentMode says whether payments take real money: test or live.
type PaymentMode string

// Payment modes.
const (
	PaymentTest PaymentMode = "test" // no real money moves
	PaymentLive PaymentMode = "live" // buyers are charged
)

// Session is a checkout session.
type Session struct {
	ID                  string              `json:"id"`
	Status              SessionStatus       `json:"status"`
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
	// Display says how the figures are shown to the buyer: with tax
	// included or not, and what the tax is called (docs/messages.md).
	Display Display `json:"display"`
	// SaveAddress, on a linked buyer's session only, says whether completing
	// it saves the address to the buyer's account (the default one when the
	// account has none).
	SaveAddress *bool `json:"save_address,omitempty"`
	// ExternalCheckout is true when the merchant has buyers always pay on
	// a payment page (create_payment_link), not the host's payment sheet.
	ExternalCheckout bool `json:"external_checkout,omitempty"`
	// PaymentSheet is true when the merchant lets buyers pay on the host's
	// payment sheet (requestCheckout); otherwise the checkout widget's Pay
	// opens the shop's payment page.
	PaymentSheet bool `json:"payment_sheet,omitempty"`
	// ShippingCountries are the countries the merchant ships to (upper-case
	// ISO 3166-1 alpha-2 codes, sorted), so an address form can offer them.
	ShippingCountries []string `json:"shipping_countries,omitempty"`
	// Order is the order a completed session became.
	Order *Order `json:"order,omitempty"`
	// Discounts are its promotion codes and what became of each, for the
	// dialects with a discount extension; /mcp's contract does not show it.
	Discounts *Discounts `json:"-"`
}

// FirstProblem returns the content of a session's first error message,
// what the buyer must fix before paying (a sentence), and false when the
// session lists none.
func (s *Session) FirstProblem() (string, bool) {
	for _, m := range s.Messages {
		if m.Type == MessageError {
			return m.Content, true
		}
	}
	return "", false
}

// PaymentProvider tells the host's payment sheet whom it pays and how, as
// ChatGPT's Checkout API reference shows it.
type PaymentProvider struct {
	Provider                string          `json:"provider"`
	MerchantID              string          `json:"merchant_id"`
	SupportedPaymentMethods []PaymentMethod `json:"supported_payment_methods"`
	// ManagedPaymentMethods are the cards a linked buyer saved with the
	// merchant, newest first, at most ten; a guest's session, and a linked
	// buyer's without saved cards, has no such field.
	ManagedPaymentMethods []ManagedPaymentMethod `json:"managed_payment_methods,omitempty"`
}

// ManagedPaymentMethod is a card the buyer saved with the merchant, which
// complete_checkout takes as payment_data.token (its ID).
type ManagedPaymentMethod struct {
	Type string `json:"type"` // "card"
	ID   string `json:"id"`
	// DisplayName has the brand, the last four digits and the expiry:
	// "Visa •••• 4242, expires 12/2034".
	DisplayName  string `json:"display_name"`
	DisplayLast4 string `json:"display_last4"`
	DisplayBrand string `json:"display_brand"`
}

// PaymentMethod is a way the buyer may pay: a card of one of
// AllowedCardBrands (the merchant policy's card_brands), or a wallet the
// payment sheet offers (apple_pay, google_pay), which lists no brands.
type PaymentMethod struct {
	Type              string   `json:"type"` // "card", "apple_pay" or "google_pay"
	AllowedCardBrands []string `json:"allowed_card_brands,omitempty"`
}

// MessageType is error (the session cannot be paid until it is fixed) or info.
type MessageType string

// Message types.
const (
	MessageError MessageType = "error"
	MessageInfo  MessageType = "info"
)

// Message tells the buyer or the model about the session: with an error's
// Code (missing, invalid, out_of_stock, …) and the JSONPath Param of the
// field to fix. Key names the situation for the catalogs of the widgets and
// pages, and Params holds the values their sentence needs; Content is the
// text for the model (docs/messages.md lists every key).
type Message struct {
	Type        MessageType       `json:"type"`
	Code        string            `json:"code,omitempty"`
	Param       string            `json:"param,omitempty"`
	Key         string            `json:"key,omitempty"`
	Params      map[string]string `json:"params,omitempty"`
	ContentType string            `json:"content_type"` // "plain"
	Content     string            `json:"content"`
}

// TaxName is what the tax is called where the buyer is.
type TaxName string

// Tax names.
const (
	TaxVAT         TaxName = "vat"
	TaxGST         TaxName = "gst"
	TaxConsumption TaxName = "consumption_tax"
	TaxSales       TaxName = "sales_tax"
)

// Display says how a session's or a receipt's figures are shown: with
// PricesIncludeTax a line shows its total and the tax is information
// ("incl. VAT"); without, lines show their subtotals and the tax is its own
// line. The figures themselves never change with it.
type Display struct {
	PricesIncludeTax bool    `json:"prices_include_tax"`
	TaxName          TaxName `json:"tax_name" jsonschema:"vat, gst, consumption_tax or sales_tax"`
}

// PaymentLink is what create_payment_link answers: where the buyer pays.
type PaymentLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
	// Provider is "stripe" (a Stripe Checkout page) or "sandbox" (the
	// shop's own test page).
	Provider string `json:"provider"`
}
