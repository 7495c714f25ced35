package ucp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"shop"
	"shop/checkout"
)

// CheckoutResult is a checkout tool's answer: the checkout, or an error
// response when there is none to show.
type CheckoutResult struct {
	shop.OneOf
	Checkout *Checkout
	Error    *ErrorResponse
}

// uuidPattern is the form of an idempotency key.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Tools returns the dialect's tools, for /ucp/mcp: each decodes its
// arguments and calls the dialect's typed function of its action (the one
// the REST binding calls too), whose result is the structured content and,
// encoded, the text block (the typed functions leave the text to this
// edge). Every call runs in the UCP channel: the sessions it makes and
// their orders say so to staff.
func (u *UCP) Tools() []shop.Tool {
	tools := append(append(u.checkoutTools(), u.cartTools()...), u.catalogTools()...)
	for i, t := range tools {
		handle := t.Handle
		tools[i].Handle = func(ctx context.Context, args json.RawMessage) (*shop.Result, error) {
			res, err := handle(shop.WithChannel(ctx, shop.ChannelUCP), args)
			if err == nil && res != nil && res.Text == "" {
				res.Text = text(res.Structured)
			}
			return res, err
		}
	}
	return tools
}

// Instructions introduce the dialect's MCP server to the agent, for the
// shop named shopName, whose amounts are in currency.
func (u *UCP) Instructions(shopName, currency string) string {
	return fmt.Sprintf("%s speaks the Universal Commerce Protocol %s and %s: its business profile is at /.well-known/ucp. "+
		"Every call carries meta[\"ucp-agent\"].profile. Amounts are integers in minor units of %s.",
		shopName, Version, PreviousVersion, currency)
}

func (u *UCP) checkoutTools() []shop.Tool {
	outcome := " Answers the checkout with ucp (version, active capabilities, payment handlers), status (incomplete, " +
		"requires_escalation, ready_for_complete, complete_in_progress, completed, canceled), line_items, totals (minor units), " +
		"fulfillment, messages (errors say what to fix, at their path) and continue_url (the shop's page where the buyer can finish). " +
		"meta[\"ucp-agent\"].profile is required: the shop fetches it and answers a JSON-RPC error -32001 when it cannot."
	return []shop.Tool{
		shop.NewTool(shop.Tool{
			Name: "create_checkout", Title: "Create a checkout",
			Description: "Create a checkout from line_items (item.id is a variant id, with a quantity) or from a cart (cart_id, its lines " +
				"are used; while the checkout made from that cart is incomplete, it is answered again), optionally with the buyer, a shipping destination (fulfillment.methods[0].destinations[0]) and discounts.codes. " +
				"Prices, shipping and tax come from the shop; the stock is held while the checkout is ready_for_complete." + outcome,
		}, u.createCheckout),
		shop.NewTool(shop.Tool{
			Name: "get_checkout", Title: "Get a checkout", ReadOnly: true, Idempotent: true,
			Description: "Get a checkout as it stands." + outcome,
		}, u.getCheckout),
		shop.NewTool(shop.Tool{
			Name: "update_checkout", Title: "Update a checkout",
			Description: "Change a checkout: line_items (replaces them), buyer, the shipping destination, the chosen option " +
				"(fulfillment.methods[0].groups[0].selected_option_id), discounts.codes. What is not sent stays as it is." + outcome,
		}, u.updateCheckout),
		shop.NewTool(shop.Tool{
			Name: "complete_checkout", Title: "Complete a checkout", Idempotent: true,
			Description: "Place the order of a ready_for_complete checkout with checkout.payment.instruments[0]: handler_id one of " +
				"ucp.payment_handlers, credential {type: token, token}. meta[\"idempotency-key\"] (a UUID) is required. Charges at most once " +
				"whatever the retries; a declined card leaves the checkout ready_for_complete with a payment_declined message. " +
				"Completed: status completed with order {id, permalink_url}." + outcome,
		}, u.completeCheckout),
		shop.NewTool(shop.Tool{
			Name: "cancel_checkout", Title: "Cancel a checkout", Destructive: true, Idempotent: true,
			Description: "Cancel a checkout and release its stock; meta[\"idempotency-key\"] (a UUID) is required." + outcome,
		}, u.cancelCheckout),
	}
}

// checkoutAnswer is the answer of a checkout tool: the session as UCP shows
// it, or the refusal of err.
func (u *UCP) checkoutAnswer(c *call, s *checkout.Session, err error) (CheckoutResult, string, error) {
	if err != nil {
		refused, err := u.refusal(c, err, checkoutPath)
		if err != nil {
			return CheckoutResult{}, "", err
		}
		return CheckoutResult{Error: refused}, "", nil
	}
	out := u.toCheckout(c, s)
	return CheckoutResult{Checkout: out}, "", nil
}

// text is the text block of an answer: its JSON, as UCP's examples give it.
func text(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func (u *UCP) begun(ctx context.Context, meta Meta, root string) (*call, *CheckoutResult, string, error) {
	c, refused, err := u.begin(ctx, meta, root)
	if err != nil {
		return nil, nil, "", err
	}
	if refused != nil {
		return nil, &CheckoutResult{Error: refused}, "", nil
	}
	return c, nil, "", nil
}

func (u *UCP) createCheckout(ctx context.Context, args CreateCheckoutArgs) (CheckoutResult, string, error) {
	c, refused, t, err := u.begun(ctx, args.Meta, CapCheckout)
	if c == nil {
		return deref(refused), t, err
	}
	if args.Checkout.CartID == "" && args.Checkout.LineItems == nil {
		// line_items is required on create (checkout.json's ucp_request);
		// a request without it is malformed, not a business outcome.
		return CheckoutResult{}, "", protocolError(-32602, "Invalid params", "invalid_request",
			`line_items is required: send the variants to buy, such as [{"item": {"id": "…"}, "quantity": 1}], or cart_id with "line_items": []`,
			map[string]any{"path": "$.checkout.line_items"})
	}
	req, err := args.Checkout.request(nil)
	if err == nil {
		err = u.checkWebhook(ctx, c)
	}
	if err != nil {
		return u.checkoutAnswer(c, nil, err)
	}
	var s *checkout.Session
	if args.Checkout.CartID != "" {
		// The cart's checkout may be one another call made: its webhook
		// stays the creator's (Subscribe keeps the first).
		s, err = u.checkout.CreateFromCart(buyerContext(ctx, c, req.Buyer), args.Checkout.CartID, req)
	} else {
		s, err = u.checkout.Create(buyerContext(ctx, c, req.Buyer), req)
	}
	if err == nil {
		err = u.subscribe(ctx, c, s.ID)
	}
	return u.checkoutAnswer(c, s, err)
}

// buyerContext makes the call's buyer, for the limits on what one buyer
// may hold, the agent's buyer of that email (shop.Buyer.Agent: the agent's
// profile and the email), as ACP keys an agent's buyers: one agent
// platform serves many buyers from one address, and the address alone
// would make them one buyer. Without an email the buyer stays as the
// server identified it.
func buyerContext(ctx context.Context, c *call, b *checkout.Buyer) context.Context {
	if b == nil || strings.TrimSpace(b.Email) == "" {
		return ctx
	}
	buyer := shop.BuyerFrom(ctx)
	buyer.Agent = "ucp:" + c.agent + ":" + strings.ToLower(strings.TrimSpace(b.Email))
	return shop.WithBuyer(ctx, buyer)
}

func deref(r *CheckoutResult) CheckoutResult {
	if r == nil {
		return CheckoutResult{}
	}
	return *r
}

func (u *UCP) getCheckout(ctx context.Context, args IDArgs) (CheckoutResult, string, error) {
	c, refused, t, err := u.begun(ctx, args.Meta, CapCheckout)
	if c == nil {
		return deref(refused), t, err
	}
	s, err := u.checkout.Get(ctx, args.ID)
	return u.checkoutAnswer(c, s, idPath(err))
}

// idPath names the tool's id argument as the field at fault where the Go
// API names its own.
func idPath(err error) error {
	var e *shop.Error
	if errors.As(err, &e) && e.Param == "$.checkout_session_id" {
		return &shop.Error{Code: e.Code, Param: "$.id", Message: e.Message}
	}
	return err
}

func (u *UCP) updateCheckout(ctx context.Context, args UpdateCheckoutArgs) (CheckoutResult, string, error) {
	c, refused, t, err := u.begun(ctx, args.Meta, CapCheckout)
	if c == nil {
		return deref(refused), t, err
	}
	cur, err := u.checkout.Get(ctx, args.ID)
	if err != nil {
		return u.checkoutAnswer(c, nil, idPath(err))
	}
	req, err := args.Checkout.request(cur)
	if err != nil {
		return u.checkoutAnswer(c, nil, err)
	}
	buyer := req.Buyer
	if buyer == nil {
		buyer = cur.Buyer
	}
	s, err := u.checkout.Update(buyerContext(ctx, c, buyer), args.ID, req)
	if err != nil && current(c.version) {
		if now, gerr := u.checkout.Get(ctx, args.ID); gerr == nil && now.Status == checkout.InProgress {
			return u.frozen(c, now, idPath(err))
		}
	}
	return u.checkoutAnswer(c, s, idPath(err))
}

// frozen answers an update refused while the checkout is
// complete_in_progress as 2026-08-25 has it: the checkout, unchanged, with
// the refusal as a recoverable error message.
func (u *UCP) frozen(c *call, s *checkout.Session, err error) (CheckoutResult, string, error) {
	refused, err := u.refusal(c, err, checkoutPath)
	if err != nil {
		return CheckoutResult{}, "", err
	}
	out := u.toCheckout(c, s)
	for _, m := range refused.Messages {
		m.Severity = "recoverable"
		out.Messages = append(out.Messages, m)
	}
	return CheckoutResult{Checkout: out}, "", nil
}

// idempotencyKey checks the key complete and cancel require.
func idempotencyKey(m Meta) error {
	switch {
	case m.IdempotencyKey == "":
		return shop.Errorf(shop.Missing, `$.meta["idempotency-key"]`, "send a fresh UUID as meta[\"idempotency-key\"], the same one on every retry")
	case !uuidPattern.MatchString(m.IdempotencyKey):
		return shop.Errorf(shop.Invalid, `$.meta["idempotency-key"]`, "must be a UUID such as 550e8400-e29b-41d4-a716-446655440000")
	}
	return nil
}

func (u *UCP) completeCheckout(ctx context.Context, args UpdateCheckoutArgs) (CheckoutResult, string, error) {
	return u.complete(ctx, args, u.once)
}

// complete places the order of a checkout, its change run by keyed: once
// for /ucp/mcp, direct for the REST binding (whose Idempotency-Key is the
// one layer of its calls).
func (u *UCP) complete(ctx context.Context, args UpdateCheckoutArgs, keyed keyed) (CheckoutResult, string, error) {
	c, refused, t, err := u.begun(ctx, args.Meta, CapCheckout)
	if c == nil {
		return deref(refused), t, err
	}
	if err := idempotencyKey(args.Meta); err != nil {
		return u.checkoutAnswer(c, nil, err)
	}
	pay, err := u.payment(args.Checkout.Payment)
	if err != nil {
		return u.checkoutAnswer(c, nil, err)
	}
	ctx = buyerContext(ctx, c, fromBuyer(args.Checkout.Buyer))
	return keyed(ctx, c, "complete_checkout", args, func(ctx context.Context) (*checkout.Session, error) {
		s, err := u.checkout.Complete(ctx, checkout.CompleteRequest{SessionID: args.ID, Buyer: fromBuyer(args.Checkout.Buyer), Payment: pay})
		return s, idPath(err)
	})
}

func (u *UCP) cancelCheckout(ctx context.Context, args IDArgs) (CheckoutResult, string, error) {
	return u.cancel(ctx, args, u.once)
}

// cancel cancels a checkout, its change run by keyed (as complete's).
func (u *UCP) cancel(ctx context.Context, args IDArgs, keyed keyed) (CheckoutResult, string, error) {
	c, refused, t, err := u.begun(ctx, args.Meta, CapCheckout)
	if c == nil {
		return deref(refused), t, err
	}
	if err := idempotencyKey(args.Meta); err != nil {
		return u.checkoutAnswer(c, nil, err)
	}
	return keyed(ctx, c, "cancel_checkout", args, func(ctx context.Context) (*checkout.Session, error) {
		s, err := u.checkout.Cancel(ctx, args.ID)
		return s, idPath(err)
	})
}

// payment is the payment data of the instrument a completion sends.
func (u *UCP) payment(p *PaymentIn) (checkout.PaymentData, error) {
	const at = "$.checkout.payment.instruments[0]"
	if p == nil || len(p.Instruments) == 0 {
		return checkout.PaymentData{}, shop.Errorf(shop.Missing, at, `send payment.instruments: [{"id": "instr_1", "handler_id": "…", "type": "card", "credential": {"type": "token", "token": "…"}}] with a handler of ucp.payment_handlers`)
	}
	in := p.Instruments[0]
	known := false
	for _, hs := range u.handlers(Version) { // the ids are the same in every release
		for _, h := range hs {
			known = known || h.ID == in.HandlerID
		}
	}
	switch {
	case !known:
		return checkout.PaymentData{}, shop.Errorf(shop.Invalid, at+".handler_id", "send the id of one of ucp.payment_handlers")
	case in.Credential == nil || in.Credential.Token == "":
		return checkout.PaymentData{}, shop.Errorf(shop.Missing, at+".credential.token", `send credential: {"type": "token", "token": "…"}`)
	}
	pd := checkout.PaymentData{Token: in.Credential.Token, Provider: "stripe"}
	if in.BillingAddress != nil {
		pd.BillingAddress = address(*in.BillingAddress, nil)
	}
	return pd, nil
}
