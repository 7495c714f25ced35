package checkout

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// Bounds of the tools' identifiers and tokens, as the checks of Get,
// Update and Complete apply them.
const (
	maxSessionIDLen = 64
	maxOptionIDLen  = 64
	maxVariantIDLen = 64
	maxPromoLen     = 32
	maxTokenLen     = 500
)

// SessionArgs name a checkout session: the arguments of
// get_checkout_session, cancel_checkout_session and create_payment_link.
type SessionArgs struct {
	CheckoutSessionID string `json:"checkout_session_id" jsonschema:"The session's id (cs_…)."`
}

// RefineSchema bounds the session id.
func (SessionArgs) RefineSchema(s *jsonschema.Schema) { refineSessionID(s) }

func refineSessionID(s *jsonschema.Schema) {
	p := s.Properties["checkout_session_id"]
	p.MinLength, p.MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxSessionIDLen)
}

// cartArgs are the fields create_checkout_session and
// update_checkout_session share. Newer ACP callers send fulfillment_details.address
// and selected_fulfillment_options; they are read as fulfillment_address and
// fulfillment_option_id, and left out of the schema.
type cartArgs struct {
	Items               *[]Item           `json:"items,omitempty" jsonschema:"The cart: variant ids from get_product, each once, with quantities."`
	Buyer               *Buyer            `json:"buyer,omitempty"`
	FulfillmentAddress  *Address          `json:"fulfillment_address,omitempty"`
	FulfillmentOptionID *string           `json:"fulfillment_option_id,omitempty" jsonschema:"The id of one of the session's fulfillment_options."`
	PromoCode           *string           `json:"promo_code,omitempty" jsonschema:"A promotion code; \"\" removes it."`
	Metadata            map[string]string `json:"metadata,omitempty"`
	SaveAddress         *bool             `json:"save_address,omitempty" jsonschema:"For a buyer who connected their account only: whether paying saves the address to the account (the default address when it has none). Default: true when the account has no saved address."`

	FulfillmentDetails *struct {
		Address *Address `json:"address"`
	} `json:"fulfillment_details,omitempty"`
	SelectedFulfillmentOptions []struct {
		OptionID string `json:"option_id"`
	} `json:"selected_fulfillment_options,omitempty"`
}

// RefineSchema bounds the cart's fields as Create and Update check them.
func (cartArgs) RefineSchema(s *jsonschema.Schema) {
	delete(s.Properties, "fulfillment_details")
	delete(s.Properties, "selected_fulfillment_options")
	p := s.Properties
	items := p["items"]
	items.MaxItems = jsonschema.Ptr(MaxLines)
	item := items.Items.Properties
	item["id"].MinLength, item["id"].MaxLength, item["id"].Description = jsonschema.Ptr(1), jsonschema.Ptr(maxVariantIDLen), "A variant id."
	item["quantity"].Minimum, item["quantity"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(MaxQuantity))
	refineBuyer(p["buyer"])
	refineAddress(p["fulfillment_address"])
	p["fulfillment_option_id"].MaxLength = jsonschema.Ptr(maxOptionIDLen)
	p["promo_code"].MaxLength = jsonschema.Ptr(maxPromoLen)
	m := p["metadata"]
	m.MaxProperties = jsonschema.Ptr(maxMetadataKeys)
	m.PropertyNames = &jsonschema.Schema{Pattern: fmt.Sprintf("^[A-Za-z0-9_.:-]{1,%d}$", maxMetadataKeyLen)}
	m.AdditionalProperties.MaxLength = jsonschema.Ptr(maxMetadataValueLen)
	m.Description = fmt.Sprintf("The host's own references, kept with the session as sent: keys of letters, digits, _ . : -; "+
		"values of plain text on one line; %d bytes in all.", maxMetadataBytes)
}

// CreateArgs are create_checkout_session's arguments: items are required.
type CreateArgs struct {
	cartArgs
}

// RefineSchema requires at least one item.
func (CreateArgs) RefineSchema(s *jsonschema.Schema) {
	s.Required = []string{"items"}
	s.Properties["items"].MinItems = jsonschema.Ptr(1)
}

// UpdateArgs are update_checkout_session's arguments: the session, and any
// of the cart's fields (items replaces the list).
type UpdateArgs struct {
	CheckoutSessionID string `json:"checkout_session_id" jsonschema:"The session's id (cs_…)."`
	cartArgs
}

// RefineSchema bounds the session id; items may be empty.
func (UpdateArgs) RefineSchema(s *jsonschema.Schema) {
	refineSessionID(s)
	s.Properties["items"].MinItems = jsonschema.Ptr(0)
}

func (a *cartArgs) request() Request {
	req := Request{Items: a.Items, Buyer: a.Buyer, Address: a.FulfillmentAddress, OptionID: a.FulfillmentOptionID, PromoCode: a.PromoCode, Metadata: a.Metadata,
		SaveAddress: a.SaveAddress}
	if req.Address == nil && a.FulfillmentDetails != nil {
		req.Address = a.FulfillmentDetails.Address
	}
	if req.OptionID == nil && len(a.SelectedFulfillmentOptions) > 0 {
		req.OptionID = &a.SelectedFulfillmentOptions[0].OptionID
	}
	return req
}

// CompleteArgs are complete_checkout's arguments, read leniently: unknown
// fields are ignored, buyer may be null, phone may come as phone.
type CompleteArgs struct {
	CheckoutSessionID string `json:"checkout_session_id" jsonschema:"The session's id (cs_…)."`
	Buyer             *struct {
		Buyer
		Phone string `json:"phone,omitempty"`
	} `json:"buyer,omitempty"`
	PaymentData *PaymentData `json:"payment_data"`
}

// RefineSchema bounds the payment data as Complete checks it.
func (CompleteArgs) RefineSchema(s *jsonschema.Schema) {
	refineSessionID(s)
	b := s.Properties["buyer"]
	delete(b.Properties, "phone")
	refineBuyer(b)
	b.Type, b.Types, b.Required = "", []string{"object", "null"}, nil
	pd := s.Properties["payment_data"].Properties
	pd["token"].MinLength, pd["token"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxTokenLen)
	pd["token"].Description = "The payment token (spt_… from ChatGPT, or a Stripe test payment method such as pm_card_visa)."
	pd["provider"].Enum = []any{"stripe"}
	refineAddress(pd["billing_address"])
}

// refineBuyer bounds a buyer's fields as checkBuyer does.
func refineBuyer(s *jsonschema.Schema) {
	p := s.Properties
	for _, name := range []string{"name", "first_name", "last_name"} {
		p[name].MaxLength = jsonschema.Ptr(maxNameLen)
	}
	p["email"].MaxLength = jsonschema.Ptr(maxEmailLen)
	p["phone_number"].MaxLength = jsonschema.Ptr(maxPhoneLen)
}

// refineAddress bounds an address's fields as addressFields do; any field
// may be missing (the session's messages ask for it), and the country is a
// two-letter code.
func refineAddress(s *jsonschema.Schema) {
	s.Required = nil
	for _, f := range addressFields {
		s.Properties[f.key].MaxLength = jsonschema.Ptr(f.max)
	}
	country := s.Properties["country"]
	country.MinLength, country.MaxLength = jsonschema.Ptr(2), jsonschema.Ptr(2)
	country.Description = "ISO 3166-1 alpha-2 code, such as US."
	s.Properties["state"].Description = "State, province or region; its code for US and CA (CA, NY, ON)."
}
