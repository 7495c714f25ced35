package ucp

import (
	"encoding/json"
	"fmt"

	"shop"
	"shop/checkout"
)

// The arguments of the tools (mcp.openrpc.json): meta, the resource's id
// where there is one, and the payload under the capability's name. Unknown
// fields are ignored, as elsewhere in the shop.

// LineItemIn is a line as a request sends it: the variant (item.id) and the
// quantity; id names an existing line on updates.
type LineItemIn struct {
	ID   string `json:"id,omitempty" jsonschema:"An existing line's id (on updates)."`
	Item struct {
		ID string `json:"id" jsonschema:"The variant's id, from search_catalog or get_product."`
	} `json:"item"`
	Quantity int64 `json:"quantity" jsonschema:"Units, at least 1."`
}

// DiscountsIn are the promotion codes a request sends.
type DiscountsIn struct {
	Codes []string `json:"codes,omitempty" jsonschema:"Discount codes, matched case-insensitively; they replace the codes sent before, [] removes them. One code of each kind applies (percent off, amount off, free shipping); each refused code is a warning message at its path."`
}

// FulfillmentIn chooses where and how a checkout ships.
type FulfillmentIn struct {
	Methods []struct {
		ID                    string          `json:"id,omitempty"`
		Type                  string          `json:"type,omitempty" jsonschema:"shipping (the shop ships; it has no pickup)."`
		LineItemIDs           []string        `json:"line_item_ids,omitempty"`
		Destinations          []PostalAddress `json:"destinations,omitempty" jsonschema:"The shipping address (the first is used)."`
		SelectedDestinationID string          `json:"selected_destination_id,omitempty"`
		Groups                []struct {
			ID               string `json:"id,omitempty"`
			SelectedOptionID string `json:"selected_option_id,omitempty" jsonschema:"One of the group's options."`
		} `json:"groups,omitempty"`
	} `json:"methods,omitempty"`
}

// PaymentIn carries the credential that completes a checkout.
type PaymentIn struct {
	Instruments []struct {
		ID         string `json:"id,omitempty"`
		HandlerID  string `json:"handler_id" jsonschema:"The id of one of ucp.payment_handlers."`
		Type       string `json:"type" jsonschema:"card"`
		Credential *struct {
			Type  string `json:"type" jsonschema:"token"`
			Token string `json:"token" jsonschema:"The handler's token: a Stripe payment method, or in the sandbox one of the test tokens of the handler's config."`
		} `json:"credential,omitempty"`
		BillingAddress *PostalAddress `json:"billing_address,omitempty"`
	} `json:"instruments,omitempty"`
}

// CheckoutIn is a checkout as requests send it.
type CheckoutIn struct {
	CartID      string          `json:"cart_id,omitempty" jsonschema:"Make the checkout from this cart (its lines, buyer and codes); line_items are then ignored."`
	LineItems   []LineItemIn    `json:"line_items,omitempty"`
	Buyer       *Buyer          `json:"buyer,omitempty"`
	Context     json.RawMessage `json:"context,omitempty"`
	Fulfillment *FulfillmentIn  `json:"fulfillment,omitempty"`
	Discounts   *DiscountsIn    `json:"discounts,omitempty"`
	Payment     *PaymentIn      `json:"payment,omitempty"`
}

// CartIn is a cart as requests send it.
type CartIn struct {
	LineItems []LineItemIn    `json:"line_items,omitempty"`
	Buyer     *Buyer          `json:"buyer,omitempty"`
	Context   json.RawMessage `json:"context,omitempty"`
	Discounts *DiscountsIn    `json:"discounts,omitempty"`
}

// CreateCheckoutArgs are create_checkout's arguments.
type CreateCheckoutArgs struct {
	Meta     Meta       `json:"meta"`
	Checkout CheckoutIn `json:"checkout"`
}

// IDArgs name a resource: get_checkout, cancel_checkout, get_cart and
// cancel_cart.
type IDArgs struct {
	Meta Meta   `json:"meta"`
	ID   string `json:"id" jsonschema:"The resource's id."`
}

// OrderArgs are get_order's: the order's id and, as /mcp's get_order
// asks, the email it was placed with (an order id alone is no secret: it
// is in the permalink and the confirmation).
type OrderArgs struct {
	Meta  Meta   `json:"meta"`
	ID    string `json:"id" jsonschema:"The order's id (order.id of the completed checkout)."`
	Email string `json:"email" jsonschema:"The buyer's email address the order was placed with (case does not matter)."`
}

// UpdateCheckoutArgs are update_checkout's and complete_checkout's.
type UpdateCheckoutArgs struct {
	Meta     Meta       `json:"meta"`
	ID       string     `json:"id" jsonschema:"The checkout's id."`
	Checkout CheckoutIn `json:"checkout"`
}

// CreateCartArgs are create_cart's arguments.
type CreateCartArgs struct {
	Meta Meta   `json:"meta"`
	Cart CartIn `json:"cart"`
}

// UpdateCartArgs are update_cart's arguments.
type UpdateCartArgs struct {
	Meta Meta   `json:"meta"`
	ID   string `json:"id" jsonschema:"The cart's id."`
	Cart CartIn `json:"cart"`
}

// items are the lines as the checkout's Go API takes them; lines naming an
// existing line by id alone take its variant from current.
func items(in []LineItemIn, current []checkout.LineItem) (*[]checkout.Item, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]checkout.Item, 0, len(in))
	for i, l := range in {
		id := l.Item.ID
		if id == "" && l.ID != "" {
			for _, c := range current {
				if c.ID == l.ID {
					id = c.Item.ID
				}
			}
		}
		if id == "" {
			return nil, shop.Errorf(shop.Missing, fmt.Sprintf("$.items[%d].id", i), "send item.id, a variant id from search_catalog or get_product")
		}
		out = append(out, checkout.Item{ID: id, Quantity: l.Quantity})
	}
	return &out, nil
}

// codes are the discount codes of a request, nil when it sends none
// (they stay as they are) and [] when it clears them.
func codes(d *DiscountsIn) *[]string {
	if d == nil || d.Codes == nil {
		return nil
	}
	return &d.Codes
}

func fromBuyer(b *Buyer) *checkout.Buyer {
	if b == nil {
		return nil
	}
	return &checkout.Buyer{FirstName: b.FirstName, LastName: b.LastName, Name: joinName(b.FirstName, b.LastName), Email: b.Email, PhoneNumber: b.PhoneNumber}
}

// request is a checkout update as the Go API takes it: nil fields are left
// as they are.
func (in CheckoutIn) request(current *checkout.Session) (checkout.Request, error) {
	var cur []checkout.LineItem
	var buyer *checkout.Buyer
	if current != nil {
		cur, buyer = current.LineItems, current.Buyer
	}
	its, err := items(in.LineItems, cur)
	if err != nil {
		return checkout.Request{}, err
	}
	req := checkout.Request{Items: its, Buyer: fromBuyer(in.Buyer), PromoCodes: codes(in.Discounts)}
	if req.Buyer != nil {
		buyer = req.Buyer
	}
	if in.Fulfillment == nil || len(in.Fulfillment.Methods) == 0 {
		return req, nil
	}
	m := in.Fulfillment.Methods[0]
	if m.Type != "" && m.Type != "shipping" {
		return req, shop.Errorf(shop.Invalid, "$.fulfillment.methods[0].type", "the shop ships every order: send shipping")
	}
	if len(m.Destinations) > 0 {
		req.Address = address(m.Destinations[0], buyer)
	}
	if len(m.Groups) > 0 && m.Groups[0].SelectedOptionID != "" {
		req.OptionID = &m.Groups[0].SelectedOptionID
	}
	return req, nil
}

// address is a UCP destination as the shop's address; its name is the
// buyer's when the destination names nobody.
func address(d PostalAddress, b *checkout.Buyer) *checkout.Address {
	name := joinName(d.FirstName, d.LastName)
	if name == "" && b != nil {
		name = b.Name
		if name == "" {
			name = joinName(b.FirstName, b.LastName)
		}
	}
	return &checkout.Address{Name: name, LineOne: d.StreetAddress, LineTwo: d.ExtendedAddress, City: d.AddressLocality,
		State: d.AddressRegion, Country: d.AddressCountry, PostalCode: d.PostalCode, PhoneNumber: d.PhoneNumber}
}
