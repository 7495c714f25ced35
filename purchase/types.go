package purchase

import "time"

// The contract's shapes (CONTRACT.md §4) as this client decodes them from
// the shop's answers. They are the client's own, as an independent host's
// would be: the run checks what the shop sends, not what its Go types say.

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

// buyer is who checks out.
type buyer struct {
	Name        string `json:"name,omitempty"`
	FirstName   string `json:"first_name,omitempty"`
	LastName    string `json:"last_name,omitempty"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phone_number,omitempty"`
}

// item is a variant id and a quantity.
type item struct {
	ID       string `json:"id"`
	Quantity int64  `json:"quantity"`
}

// status is where a checkout session stands.
type status string

// The statuses of a session.
const (
	statusNotReady  status = "not_ready_for_payment"
	statusReady     status = "ready_for_payment"
	statusCompleted status = "completed"
	statusCanceled  status = "canceled"
	statusExpired   status = "expired"
)

// final reports whether a session in status s can no longer change.
func (s status) final() bool {
	return s == statusCompleted || s == statusCanceled || s == statusExpired
}

// The payment modes of a shop.
const (
	modeTest = "test"
	modeLive = "live"
)

// session is a checkout session.
type session struct {
	ID                  string              `json:"id"`
	Status              status              `json:"status"`
	Currency            string              `json:"currency"`
	PaymentMode         string              `json:"payment_mode"`
	PaymentProvider     paymentProvider     `json:"payment_provider"`
	Buyer               *buyer              `json:"buyer,omitempty"`
	FulfillmentAddress  *Address            `json:"fulfillment_address,omitempty"`
	LineItems           []lineItem          `json:"line_items"`
	FulfillmentOptions  []fulfillmentOption `json:"fulfillment_options"`
	FulfillmentOptionID string              `json:"fulfillment_option_id,omitempty"`
	Totals              []total             `json:"totals"`
	Messages            []message           `json:"messages"`
	Links               []link              `json:"links"`
	ExpiresAt           time.Time           `json:"expires_at"`
	Metadata            map[string]string   `json:"metadata,omitempty"`
	ExternalCheckout    bool                `json:"external_checkout,omitempty"`
	Order               *sessionOrder       `json:"order,omitempty"`
}

// paymentProvider tells the host's payment sheet whom it pays.
type paymentProvider struct {
	Provider                string          `json:"provider"`
	MerchantID              string          `json:"merchant_id"`
	SupportedPaymentMethods []paymentMethod `json:"supported_payment_methods"`
}

// paymentMethod is a way the buyer may pay: a card of the allowed brands.
type paymentMethod struct {
	Type              string   `json:"type"`
	AllowedCardBrands []string `json:"allowed_card_brands"`
}

// lineItem is a priced line.
type lineItem struct {
	ID         string   `json:"id"`
	Item       item     `json:"item"`
	Name       string   `json:"name"`
	Images     []string `json:"images"`
	UnitAmount int64    `json:"unit_amount"`
	BaseAmount int64    `json:"base_amount"`
	Discount   int64    `json:"discount"`
	Subtotal   int64    `json:"subtotal"`
	Tax        int64    `json:"tax"`
	Total      int64    `json:"total"`
}

// fulfillmentOption is a way to ship the order.
type fulfillmentOption struct {
	Type                 string    `json:"type"`
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

// totalType names an entry of a session's totals.
type totalType string

// The totals of a session.
const (
	totalItemsBase     totalType = "items_base_amount"
	totalItemsDiscount totalType = "items_discount"
	totalSubtotal      totalType = "subtotal"
	totalDiscount      totalType = "discount"
	totalFulfillment   totalType = "fulfillment"
	totalTax           totalType = "tax"
	totalTotal         totalType = "total"
)

// total is one figure of a session's totals.
type total struct {
	Type        totalType `json:"type"`
	DisplayText string    `json:"display_text"`
	Amount      int64     `json:"amount"`
}

// messageError is the type of a message that says the session cannot be
// paid until it is fixed (the other type is "info").
const messageError = "error"

// message tells the buyer or the model about the session.
type message struct {
	Type        string `json:"type"`
	Code        string `json:"code,omitempty"`
	Param       string `json:"param,omitempty"`
	ContentType string `json:"content_type"`
	Content     string `json:"content"`
}

// link is one of the merchant's pages shown in checkout.
type link struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// order is the order a completed session became.
type sessionOrder struct {
	ID                string  `json:"id"`
	CheckoutSessionID string  `json:"checkout_session_id"`
	PermalinkURL      string  `json:"permalink_url"`
	Number            int64   `json:"number"`
	Status            string  `json:"status"`
	Receipt           receipt `json:"receipt"`
}

// receipt is what the buyer paid for.
type receipt struct {
	OrderID            string             `json:"order_id"`
	Number             int64              `json:"number"`
	Status             string             `json:"status"`
	CreatedAt          time.Time          `json:"created_at"`
	Email              string             `json:"email"`
	Currency           string             `json:"currency"`
	LineItems          []lineItem         `json:"line_items"`
	FulfillmentAddress *Address           `json:"fulfillment_address"`
	FulfillmentOption  *fulfillmentOption `json:"fulfillment_option"`
	Totals             []total            `json:"totals"`
	Payment            payment            `json:"payment"`
	Links              []link             `json:"links"`
}

// payment is how an order was paid.
type payment struct {
	Provider  string `json:"provider"`
	Mode      string `json:"mode"`
	Reference string `json:"reference"`
	Status    string `json:"status"` // "succeeded" for a new order
}

// paymentSucceeded is a payment the provider accepted.
const paymentSucceeded = "succeeded"

// paymentLink is create_payment_link's answer.
type paymentLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
	Provider  string    `json:"provider"` // "stripe" or "sandbox"
}
