package checkout

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"shop"
)

// Tools returns the buyer tools over checkout sessions.
func (c *Checkout) Tools() []shop.Tool {
	errs := " Answers the whole CheckoutSession: status ready_for_payment when it can be paid, otherwise not_ready_for_payment " +
		"with an error message per problem (code missing, invalid or out_of_stock; param the JSONPath of the field to fix). " +
		"Amounts are integers in minor units. Refused (isError) when the input itself is wrong: the text names the field."
	return []shop.Tool{
		{
			Name:  "create_checkout_session",
			Title: "Create a checkout session",
			Description: "Start a checkout for variants of the catalog (ids from get_product) with quantities; optionally the buyer, " +
				"the shipping address, a shipping option and a promotion code. Prices, shipping and tax come from the shop. " +
				"The session holds the stock while it is ready for payment, until expires_at." + errs,
			InputSchema: sessionSchema(false),
			Meta:        map[string]any{"openai/widgetAccessible": true},
			Handle:      c.createTool,
		},
		{
			Name:  "update_checkout_session",
			Title: "Update a checkout session",
			Description: "Change a checkout session: items (replaces the cart), buyer, fulfillment_address, fulfillment_option_id " +
				"(one of the session's fulfillment_options; another id is an invalid message, \"\" lets the shop choose), promo_code (\"\" removes it), metadata. Fields not sent stay as they are." + errs,
			InputSchema: sessionSchema(true),
			Meta:        map[string]any{"openai/widgetAccessible": true},
			Handle:      c.updateTool,
		},
		{
			Name:  "complete_checkout",
			Title: "Complete a checkout",
			Description: "Pay for a session that is ready_for_payment with the token the host's payment sheet returned " +
				"(payment_data.provider \"stripe\"; in test mode Stripe test payment methods such as pm_card_visa). " +
				"Charges exactly once however often it is called: a completed session answers its order again. " +
				"A declined card leaves the session ready_for_payment with a payment_declined or requires_3ds message (not an error), " +
				"so the buyer can try another card. A change of price or stock answers price_changed or out_of_stock, and a promotion code used up " +
				"meanwhile an invalid $.promo_code message, with the session not ready; nothing is charged then.",
			InputSchema: completeSchema,
			Meta:        map[string]any{"openai/widgetAccessible": true},
			Handle:      c.completeTool,
		},
		{
			Name:  "create_payment_link",
			Title: "Create a payment link",
			Description: "Make a page where the buyer pays for a session that is ready_for_payment, for hosts without a payment sheet: " +
				"answers {url, expires_at, provider}. Open the url for the buyer (or give it to them); when they have paid, " +
				"get_checkout_session shows the session completed with its order. The session needs the buyer's email. " +
				"Each call makes a new page; the session is paid at most once, and a second payment is refunded.",
			InputSchema: idSchema,
			Meta:        map[string]any{"openai/widgetAccessible": true},
			Handle:      c.linkTool,
		},
		{
			Name:        "get_checkout_session",
			Title:       "Get a checkout session",
			Description: "Get a checkout session as it stands: items, totals, shipping options, messages, status.",
			InputSchema: idSchema,
			ReadOnly:    true,
			Idempotent:  true,
			Meta:        map[string]any{"openai/widgetAccessible": true},
			Handle:      c.byID(c.Get),
		},
		{
			Name:        "cancel_checkout_session",
			Title:       "Cancel a checkout session",
			Description: "Cancel a checkout session the buyer no longer wants; the stock it held is released. A completed session cannot be canceled.",
			InputSchema: idSchema,
			Destructive: true,
			Idempotent:  true,
			Handle:      c.byID(c.Cancel),
		},
	}
}

var idSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "checkout_session_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The session's id (cs_…)."}
  },
  "required": ["checkout_session_id"]
}`)

const buyerProperties = `{
        "name": {"type": "string", "maxLength": 200},
        "first_name": {"type": "string", "maxLength": 200},
        "last_name": {"type": "string", "maxLength": 200},
        "email": {"type": "string", "maxLength": 254},
        "phone_number": {"type": "string", "maxLength": 32}
      }`

const addressSchema = `{
      "type": "object",
      "properties": {
        "name": {"type": "string", "maxLength": 200},
        "line_one": {"type": "string", "maxLength": 200},
        "line_two": {"type": "string", "maxLength": 200},
        "city": {"type": "string", "maxLength": 100},
        "state": {"type": "string", "maxLength": 100, "description": "State, province or region; its code for US and CA (CA, NY, ON)."},
        "country": {"type": "string", "minLength": 2, "maxLength": 2, "description": "ISO 3166-1 alpha-2 code, such as US."},
        "postal_code": {"type": "string", "maxLength": 20},
        "phone_number": {"type": "string", "maxLength": 32}
      }
    }`

func sessionSchema(update bool) json.RawMessage {
	id, required, minItems := "", `"required": ["items"]`, 1
	if update {
		id = `"checkout_session_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The session's id (cs_…)."},
    `
		required, minItems = `"required": ["checkout_session_id"]`, 0
	}
	return json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    %s"items": {
      "type": "array", "minItems": %d, "maxItems": %d,
      "description": "The cart: variant ids from get_product, each once, with quantities.",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "A variant id."},
          "quantity": {"type": "integer", "minimum": 1, "maximum": %d}
        },
        "required": ["id", "quantity"]
      }
    },
    "buyer": {
      "type": "object",
      "properties": %s,
      "required": ["email"]
    },
    "fulfillment_address": %s,
    "fulfillment_option_id": {"type": "string", "maxLength": 64, "description": "The id of one of the session's fulfillment_options."},
    "promo_code": {"type": "string", "maxLength": 32, "description": "A promotion code; \"\" removes it."},
    "metadata": {"type": "object", "maxProperties": %d, "propertyNames": {"pattern": "^[A-Za-z0-9_.:-]{1,%d}$"},
      "additionalProperties": {"type": "string", "maxLength": %d},
      "description": "The host's own references, kept with the session as sent: keys of letters, digits, _ . : -; values of plain text on one line; %d bytes in all."}
  },
  %s
}`, id, minItems, MaxLines, MaxQuantity, buyerProperties, addressSchema, maxMetadataKeys, maxMetadataKeyLen, maxMetadataValueLen, maxMetadataBytes, required))
}

var completeSchema = json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "checkout_session_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The session's id (cs_…)."},
    "buyer": {
      "type": ["object", "null"],
      "properties": %s
    },
    "payment_data": {
      "type": "object",
      "properties": {
        "token": {"type": "string", "minLength": 1, "maxLength": 500, "description": "The payment token (spt_… from ChatGPT, or a Stripe test payment method such as pm_card_visa)."},
        "provider": {"type": "string", "enum": ["stripe"]},
        "billing_address": %s
      },
      "required": ["token", "provider"]
    }
  },
  "required": ["checkout_session_id", "payment_data"]
}`, buyerProperties, addressSchema))

// completeArgs are complete_checkout's arguments, read leniently: unknown
// fields are ignored, buyer may be null, phone may come as phone.
type completeArgs struct {
	CheckoutSessionID string `json:"checkout_session_id"`
	Buyer             *struct {
		Buyer
		Phone string `json:"phone"`
	} `json:"buyer"`
	PaymentData *PaymentData `json:"payment_data"`
}

func (c *Checkout) completeTool(ctx context.Context, raw json.RawMessage) (*shop.Result, error) {
	var args completeArgs
	if err := shop.DecodeArgs(raw, &args); err != nil {
		return nil, err
	}
	if args.PaymentData == nil {
		return nil, shop.Errorf(shop.Missing, "$.payment_data", `send payment_data: {"token": "…", "provider": "stripe"}`)
	}
	req := CompleteRequest{SessionID: args.CheckoutSessionID, Payment: *args.PaymentData}
	if args.Buyer != nil {
		b := args.Buyer.Buyer
		if b.PhoneNumber == "" {
			b.PhoneNumber = args.Buyer.Phone
		}
		req.Buyer = &b
	}
	return c.result(c.Complete(ctx, req))
}

// sessionArgs are the arguments of the session tools. Newer ACP callers send
// fulfillment_details.address and selected_fulfillment_options; they are read
// as fulfillment_address and fulfillment_option_id.
type sessionArgs struct {
	CheckoutSessionID   string            `json:"checkout_session_id"`
	Items               *[]Item           `json:"items"`
	Buyer               *Buyer            `json:"buyer"`
	FulfillmentAddress  *Address          `json:"fulfillment_address"`
	FulfillmentOptionID *string           `json:"fulfillment_option_id"`
	PromoCode           *string           `json:"promo_code"`
	Metadata            map[string]string `json:"metadata"`

	FulfillmentDetails *struct {
		Address *Address `json:"address"`
	} `json:"fulfillment_details"`
	SelectedFulfillmentOptions []struct {
		OptionID string `json:"option_id"`
	} `json:"selected_fulfillment_options"`
}

func (a *sessionArgs) request() Request {
	req := Request{Items: a.Items, Buyer: a.Buyer, Address: a.FulfillmentAddress, OptionID: a.FulfillmentOptionID, PromoCode: a.PromoCode, Metadata: a.Metadata}
	if req.Address == nil && a.FulfillmentDetails != nil {
		req.Address = a.FulfillmentDetails.Address
	}
	if req.OptionID == nil && len(a.SelectedFulfillmentOptions) > 0 {
		req.OptionID = &a.SelectedFulfillmentOptions[0].OptionID
	}
	return req
}

func (c *Checkout) createTool(ctx context.Context, raw json.RawMessage) (*shop.Result, error) {
	var args sessionArgs
	if err := shop.DecodeArgs(raw, &args); err != nil {
		return nil, err
	}
	return c.result(c.Create(ctx, args.request()))
}

func (c *Checkout) updateTool(ctx context.Context, raw json.RawMessage) (*shop.Result, error) {
	var args sessionArgs
	if err := shop.DecodeArgs(raw, &args); err != nil {
		return nil, err
	}
	return c.result(c.Update(ctx, args.CheckoutSessionID, args.request()))
}

func (c *Checkout) linkTool(ctx context.Context, raw json.RawMessage) (*shop.Result, error) {
	var args idArgs
	if err := shop.DecodeArgs(raw, &args); err != nil {
		return nil, err
	}
	link, err := c.CreateLink(ctx, args.CheckoutSessionID)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Payment page for checkout session %s (%s), open until %s: %s",
		args.CheckoutSessionID, link.Provider, link.ExpiresAt.Format(time.RFC3339), link.URL)
	return &shop.Result{Structured: link, Text: text}, nil
}

type idArgs struct {
	CheckoutSessionID string `json:"checkout_session_id"`
}

// byID makes a tool of a method that takes only a session id.
func (c *Checkout) byID(method func(context.Context, string) (*Session, error)) func(context.Context, json.RawMessage) (*shop.Result, error) {
	return func(ctx context.Context, raw json.RawMessage) (*shop.Result, error) {
		var args idArgs
		if err := shop.DecodeArgs(raw, &args); err != nil {
			return nil, err
		}
		return c.result(method(ctx, args.CheckoutSessionID))
	}
}

func (c *Checkout) result(s *Session, err error) (*shop.Result, error) {
	if err != nil {
		return nil, err
	}
	return &shop.Result{Structured: s, Text: c.summary(s)}, nil
}

// summary is the short text of a session for hosts without UI.
func (c *Checkout) summary(s *Session) string {
	cur := c.policy.Currency()
	var sb strings.Builder
	fmt.Fprintf(&sb, "Checkout session %s: %s.", s.ID, strings.ReplaceAll(string(s.Status), "_", " "))
	for _, l := range s.LineItems {
		fmt.Fprintf(&sb, "\n- %d × %s: %s", l.Item.Quantity, l.Name, cur.Format(l.Total))
	}
	for _, t := range s.Totals {
		if t.Type == TotalTotal {
			fmt.Fprintf(&sb, "\nTotal: %s", cur.Format(t.Amount))
		}
	}
	for _, m := range s.Messages {
		if m.Type == MessageError {
			fmt.Fprintf(&sb, "\nTo fix (%s): %s", m.Param, m.Content)
		}
	}
	if s.Status == Ready {
		sb.WriteString("\nReady for payment.")
	}
	if s.Order != nil {
		fmt.Fprintf(&sb, "\nOrder %d placed (%s); receipt: %s", s.Order.Number, s.Order.ID, s.Order.PermalinkURL)
	}
	return sb.String()
}
