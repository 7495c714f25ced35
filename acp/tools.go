package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"shop"
	"shop/checkout"
)

// spec declares one tool of the binding.
type spec struct {
	name, title, description string
	// needsID: the tool takes the session's id.
	needsID bool
	// payload is the $defs name of the payload's schema, "" when the tool
	// takes none; payloadRequired says whether it must be sent.
	payload         string
	payloadRequired bool
	// keyed: meta.idempotency_key applies.
	keyed                             bool
	readOnly, destructive, idempotent bool
	run                               func(ctx context.Context, e *envelope) (*Session, *Error, error)

	input json.RawMessage
	check *validator
}

const errorsNote = " Errors are JSON-RPC -32000 with the ACP Error in data (type, code, message, param): invalid_request " +
	"(missing_api_version, unsupported_api_version, missing_required_field, invalid, session_not_found, idempotency_conflict, idempotency_in_flight), " +
	"processing_error (payment_declined, requires_3ds), service_unavailable (retry). Amounts are integers in minor units."

func (a *ACP) specs() []*spec {
	return []*spec{
		{name: "create_checkout_session", title: "Create a checkout session", payload: "CheckoutSessionCreateRequest", payloadRequired: true, keyed: true,
			description: "Create a checkout session (POST /checkout_sessions) for line_items of the catalog's variant ids, each with a quantity " +
				"of whole units (1 when absent), in the shop's currency; optionally the buyer, fulfillment_details (the shipping address) and discounts. " +
				"Prices, shipping and tax come from the shop; capabilities.payment.handlers answers how to pay. The session holds its stock while it is " +
				"ready_for_payment, until expires_at." + errorsNote,
			run: a.create},
		{name: "get_checkout_session", title: "Get a checkout session", needsID: true, readOnly: true, idempotent: true,
			description: "Retrieve a checkout session's current state (GET /checkout_sessions/{id})." + errorsNote,
			run: func(ctx context.Context, e *envelope) (*Session, *Error, error) {
				return a.answer(a.checkout.Get(ctx, e.ID))
			}},
		{name: "update_checkout_session", title: "Update a checkout session", needsID: true, payload: "CheckoutSessionUpdateRequest", payloadRequired: true, keyed: true,
			description: "Update a checkout session (POST /checkout_sessions/{id}): line_items (replaces the cart), buyer, fulfillment_details, " +
				"selected_fulfillment_options (one shipping option for all items), discounts.codes (they replace the codes sent before; [] removes them; refused codes are listed in discounts.rejected). Fields not sent stay." + errorsNote,
			run: a.update},
		{name: "complete_checkout_session", title: "Complete a checkout session", needsID: true, payload: "CheckoutSessionCompleteRequest", payloadRequired: true, keyed: true,
			idempotent: true,
			description: "Pay for a ready_for_payment session and place its order (POST /checkout_sessions/{id}/complete): payment_data.handler_id " +
				"one of capabilities.payment.handlers, instrument {type: card, credential {type, token}} (card_spt: a Stripe shared payment token, " +
				"type spt; card_test, in test mode: a Stripe test payment method such as pm_card_visa). Charges exactly once: a completed session " +
				"answers its order again. A declined card answers processing_error payment_declined (or requires_3ds) and leaves the session ready " +
				"for another card." + errorsNote,
			run: a.complete},
		{name: "cancel_checkout_session", title: "Cancel a checkout session", needsID: true, payload: "CancelSessionRequest", keyed: true,
			destructive: true, idempotent: true,
			description: "Cancel a checkout session (POST /checkout_sessions/{id}/cancel) and release the stock it holds; payload.intent_trace " +
				"(optional) says why. A completed session cannot be canceled." + errorsNote,
			run: func(ctx context.Context, e *envelope) (*Session, *Error, error) {
				return a.answer(a.checkout.Cancel(ctx, e.ID))
			}},
	}
}

// build bundles the tool's input schema and compiles its payload's.
func (sp *spec) build(sch *schemas) error {
	props := map[string]any{"meta": sch.meta}
	required := []any{"meta"}
	if sp.needsID {
		props["id"] = map[string]any{"type": "string", "description": "The checkout session's id (cs_…)."}
		required = append(required, "id")
	}
	if sp.payload != "" {
		p, err := sch.bundled(sp.payload)
		if err != nil {
			return err
		}
		if sp.payload == "CheckoutSessionCreateRequest" || sp.payload == "CheckoutSessionUpdateRequest" {
			p = withQuantity(p)
		}
		if sp.check, err = compile(sp.name, p); err != nil {
			return err
		}
		props["payload"] = p
		if sp.payloadRequired {
			required = append(required, "payload")
		}
	}
	in, err := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "properties": props, "required": required})
	if err != nil {
		return err
	}
	sp.input = in
	return nil
}

// answer translates what checkout answered.
func (a *ACP) answer(s *checkout.Session, err error) (*Session, *Error, error) {
	if err != nil {
		e, cause := fromShop(err)
		return nil, e, cause
	}
	return a.session(s, nil), nil, nil
}

func (a *ACP) create(ctx context.Context, e *envelope) (*Session, *Error, error) {
	var in createIn
	if err := json.Unmarshal(e.Payload, &in); err != nil {
		return nil, nil, fmt.Errorf("decode create payload: %w", err)
	}
	if in.Currency != a.currency {
		return nil, invalid("unsupported_currency", "$.payload.currency", "this shop sells in %s; send currency %q", a.currency, a.currency), nil
	}
	req, bad := in.request()
	if bad != nil {
		return nil, bad, nil
	}
	s, err := a.checkout.Create(buyerContext(shop.WithChannel(ctx, shop.ChannelACP), req.Buyer), req)
	if err != nil {
		return a.answer(nil, err)
	}
	var offered *Interventions
	if in.Capabilities.Interventions != nil {
		offered = noInterventions()
	}
	return a.session(s, offered), nil, nil
}

// noInterventions is the answer to an agent's interventions: the shop
// supports none of them over ACP (no 3D Secure, no address verification),
// so the intersection is empty.
func noInterventions() *Interventions {
	return &Interventions{Supported: []string{}, Required: []string{}, Enforcement: "optional"}
}

func (a *ACP) update(ctx context.Context, e *envelope) (*Session, *Error, error) {
	var in cartIn
	if err := json.Unmarshal(e.Payload, &in); err != nil {
		return nil, nil, fmt.Errorf("decode update payload: %w", err)
	}
	req, bad := in.request()
	if bad != nil {
		return nil, bad, nil
	}
	return a.answer(a.checkout.Update(ctx, e.ID, req))
}

// complete pays through checkout's Complete, the path complete_checkout
// takes. What the REST binding answers with an error status is an ACP
// Error here: a decline (processing_error payment_declined, as the
// binding's example shows; requires_3ds alike, the shop running no 3D
// Secure over ACP), a session that could not be paid (its first problem),
// a payment still running.
func (a *ACP) complete(ctx context.Context, e *envelope) (*Session, *Error, error) {
	var in completeIn
	if err := json.Unmarshal(e.Payload, &in); err != nil {
		return nil, nil, fmt.Errorf("decode complete payload: %w", err)
	}
	cur, err := a.checkout.Get(ctx, e.ID)
	if err != nil {
		return a.answer(nil, err)
	}
	if cur.Status == checkout.Completed && cur.Order != nil {
		return a.session(cur, nil), nil, nil // paid already: its order, whatever the card
	}
	req, bad := a.completeRequest(e.ID, in, cur.PaymentMode)
	if bad != nil {
		return nil, bad, nil
	}
	s, err := a.checkout.Complete(ctx, req)
	if err != nil {
		return a.answer(nil, err)
	}
	if s.Status == checkout.Completed && s.Order != nil {
		return a.session(s, nil), nil, nil
	}
	return nil, unpaid(s), nil
}

// unpaid is the ACP Error of a completion that placed no order.
func unpaid(s *checkout.Session) *Error {
	if s.Status == checkout.InProgress {
		return &Error{Type: ServiceUnavailable, Code: "payment_in_progress",
			Message: "The session's payment is being processed; call get_checkout_session in a few seconds for its outcome. Nothing is charged twice."}
	}
	for _, m := range s.Messages {
		if m.Type != checkout.MessageError {
			continue
		}
		switch shop.Code(m.Code) {
		case shop.PaymentDeclined, shop.Requires3DS:
			return &Error{Type: ProcessingError, Code: m.Code, Message: m.Content, Param: "$.payload.payment_data"}
		}
		return &Error{Type: InvalidRequest, Code: m.Code, Message: m.Content, Param: sessionParam(m.Param)}
	}
	return &Error{Type: InvalidRequest, Code: "not_ready_for_payment",
		Message: fmt.Sprintf("the session is %s, not ready_for_payment; get_checkout_session says what to fix", s.Status)}
}

// buyerContext makes the session's buyer, for the limits on what one buyer
// may hold, the agent's buyer of that email (shop.Buyer.Agent
// "acp:<agent>:<email>", the agent as caller names it, whose key is its hash, whatever the email's
// length), the way a host's user id does on /mcp: one agent serves many
// buyers from one address, and the address alone would make them one
// buyer. An agent names its buyers by email, so a host user id in _meta is
// not read here. Without an email the client's address stays the buyer.
func buyerContext(ctx context.Context, b *checkout.Buyer) context.Context {
	if b == nil || strings.TrimSpace(b.Email) == "" {
		return ctx
	}
	buyer := shop.BuyerFrom(ctx)
	buyer.Subject = ""
	buyer.Agent = "acp:" + caller(ctx) + ":" + strings.ToLower(strings.TrimSpace(b.Email))
	return shop.WithBuyer(ctx, buyer)
}

// agentVersions is what version errors name.
func agentVersions() []string { return slices.Clone(SupportedVersions) }
