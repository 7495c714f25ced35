package acp

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"shop/checkout"
)

// The payloads of the tools, as far as the shop reads them; the bundled
// schema has checked their shapes already.

type itemIn struct {
	ID       string      `json:"id"`
	Quantity json.Number `json:"quantity"`
}

type detailsIn struct {
	Name        string   `json:"name"`
	PhoneNumber string   `json:"phone_number"`
	Email       string   `json:"email"`
	Address     *Address `json:"address"`
}

type selectedIn struct {
	Type     string `json:"type"`
	OptionID string `json:"option_id"`
}

type discountsIn struct {
	Codes []string `json:"codes"`
}

// cartIn is what create and update share.
type cartIn struct {
	Buyer              *Buyer         `json:"buyer"`
	LineItems          *[]itemIn      `json:"line_items"`
	FulfillmentDetails *detailsIn     `json:"fulfillment_details"`
	Selected           []selectedIn   `json:"selected_fulfillment_options"`
	Coupons            *[]string      `json:"coupons"`
	Discounts          *discountsIn   `json:"discounts"`
	Metadata           map[string]any `json:"metadata"`
}

type createIn struct {
	cartIn
	Currency     string `json:"currency"`
	Capabilities struct {
		Interventions *struct {
			Supported []string `json:"supported"`
		} `json:"interventions"`
	} `json:"capabilities"`
}

type completeIn struct {
	Buyer       *Buyer `json:"buyer"`
	PaymentData struct {
		HandlerID  string `json:"handler_id"`
		Instrument *struct {
			Type       string `json:"type"`
			Credential struct {
				Type  string `json:"type"`
				Token string `json:"token"`
			} `json:"credential"`
		} `json:"instrument"`
		BillingAddress      *Address `json:"billing_address"`
		PurchaseOrderNumber string   `json:"purchase_order_number"`
	} `json:"payment_data"`
}

// maxQuantity bounds a line's units in the input schema (checkout applies
// the merchant's own, lower, limit).
const maxQuantity = checkout.MaxQuantity

// request translates create's and update's payload into checkout's.
func (c *cartIn) request() (checkout.Request, *Error) {
	var req checkout.Request
	if c.LineItems != nil {
		items := make([]checkout.Item, 0, len(*c.LineItems))
		for i, li := range *c.LineItems {
			q, err := quantity(li.Quantity, i)
			if err != nil {
				return req, err
			}
			items = append(items, checkout.Item{ID: li.ID, Quantity: q})
		}
		req.Items = &items
	}
	if c.Buyer != nil {
		req.Buyer = &checkout.Buyer{Name: c.Buyer.FullName, FirstName: c.Buyer.FirstName, LastName: c.Buyer.LastName,
			Email: c.Buyer.Email, PhoneNumber: c.Buyer.PhoneNumber}
	}
	if d := c.FulfillmentDetails; d != nil {
		if d.Address != nil {
			addr := address(d.Address)
			addr.PhoneNumber = d.PhoneNumber
			if addr.Name == "" {
				addr.Name = d.Name
			}
			req.Address = &addr
		}
		if req.Buyer == nil && d.Email != "" {
			// The contact to ship to is the buyer when no buyer is given:
			// the receipt goes to that email.
			req.Buyer = &checkout.Buyer{Name: d.Name, Email: d.Email, PhoneNumber: d.PhoneNumber}
		}
	}
	if len(c.Selected) > 0 {
		for i, s := range c.Selected {
			if s.Type != "shipping" {
				return req, invalid("unsupported", fmt.Sprintf("$.payload.selected_fulfillment_options[%d].type", i),
					"this shop ships physical goods: only fulfillment options of type shipping")
			}
		}
		if len(c.Selected) > 1 && c.Selected[1].OptionID != c.Selected[0].OptionID {
			return req, invalid("invalid", "$.payload.selected_fulfillment_options[1]",
				"this shop ships a session's items together: select one fulfillment option for all of them")
		}
		req.OptionID = &c.Selected[0].OptionID
	}
	req.PromoCodes = c.codes()
	meta, err := metadata(c.Metadata)
	if err != nil {
		return req, err
	}
	req.Metadata = meta
	return req, nil
}

// quantity reads a line's quantity: whole units, 1 when absent.
func quantity(n json.Number, line int) (int64, *Error) {
	if n == "" {
		return 1, nil
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < 1 || f > maxQuantity {
		param := fmt.Sprintf("$.payload.line_items[%d].quantity", line)
		return 0, invalid("invalid", param, "must be a whole number of units from 1 to %d (this shop sells physical goods), not %s", maxQuantity, n)
	}
	return int64(f), nil
}

// codes reads the discount codes: discounts.codes, or the deprecated
// coupons; nil when neither is sent (they stay), [] to remove them. They
// replace the codes sent before; checkout says which apply.
func (c *cartIn) codes() *[]string {
	switch {
	case c.Discounts != nil && c.Discounts.Codes != nil:
		return &c.Discounts.Codes
	case c.Coupons != nil:
		return c.Coupons
	}
	return nil
}

func metadata(m map[string]any) (map[string]string, *Error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, invalid("invalid", "$.payload.metadata."+k, "metadata values must be strings")
		}
		out[k] = s
	}
	return out, nil
}

func address(a *Address) checkout.Address {
	return checkout.Address{Name: a.Name, LineOne: a.LineOne, LineTwo: a.LineTwo, City: a.City, State: a.State,
		Country: a.Country, PostalCode: a.PostalCode}
}

// completeRequest translates complete's payload into checkout's: the
// handler's credential is the token complete_checkout charges, through
// the same path.
func (a *ACP) completeRequest(id string, in completeIn, mode checkout.PaymentMode) (checkout.CompleteRequest, *Error) {
	pd := in.PaymentData
	req := checkout.CompleteRequest{SessionID: id}
	if pd.Instrument == nil {
		return req, invalid("unsupported", "$.payload.payment_data.purchase_order_number",
			"this shop takes card payments only: send payment_data.handler_id and instrument")
	}
	h, ok := a.handler(pd.HandlerID, mode)
	if !ok {
		return req, invalid("invalid", "$.payload.payment_data.handler_id",
			"unknown payment handler %q: use one of capabilities.payment.handlers (%s)", pd.HandlerID, strings.Join(a.handlerIDs(mode), ", "))
	}
	if pd.Instrument.Type != "card" {
		return req, invalid("invalid", "$.payload.payment_data.instrument.type", "handler %s takes instruments of type card", h.id)
	}
	if h.credential != "" && pd.Instrument.Credential.Type != h.credential {
		return req, invalid("invalid", "$.payload.payment_data.instrument.credential.type",
			"handler %s takes credentials of type %s (a Stripe shared payment token)", h.id, h.credential)
	}
	req.Payment = checkout.PaymentData{Token: pd.Instrument.Credential.Token, Provider: "stripe"}
	if pd.BillingAddress != nil {
		addr := address(pd.BillingAddress)
		req.Payment.BillingAddress = &addr
	}
	if in.Buyer != nil {
		req.Buyer = &checkout.Buyer{Name: in.Buyer.FullName, FirstName: in.Buyer.FirstName, LastName: in.Buyer.LastName,
			Email: in.Buyer.Email, PhoneNumber: in.Buyer.PhoneNumber}
	}
	return req, nil
}
