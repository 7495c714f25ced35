package orders

import (
	"github.com/google/jsonschema-go/jsonschema"

	"shop"
)

// returnsAuth: guests prove the order with its email; a linked buyer whose
// token reads orders needs none.
var returnsAuth = shop.AuthRequirement{Scopes: []string{shop.ScopeOrdersRead}, Optional: true}

// Tools returns the buyer's return tools, request_return and cancel_return,
// for /mcp and `shop stdio`.
func (r *Returns) Tools() []shop.Tool {
	return []shop.Tool{
		shop.NewTool(shop.Tool{
			Name: "request_return", Title: "Return items of an order", Auth: returnsAuth,
			Description: "Start a return of shipped items of an order the buyer placed. Send order_id, the email the order was placed with " +
				"(not needed when the buyer's account is connected), lines [{line_item_id, quantity}] (line ids as get_order lists the order's line_items), " +
				"and reason: damaged, defective, wrong_item, not_as_described, no_longer_needed or other; note is optional. " +
				"The answer is the return (id, status requested, lines, refund_amount in minor units) and instructions: how to pack the parcel and where to send it; " +
				"tell the buyer both. The refund goes to the card paid with once the shop receives the parcel and accepts the return. " +
				"The shop's return policy: " + r.Summary() + " Only units that shipped and are in no other return can be returned. " +
				"Errors: missing or invalid order_id, email, reason, note, lines; invalid $.order_id when the return window has passed or the order is canceled; " +
				"invalid $.lines[i].line_item_id (no such line, or the item cannot be returned) and $.lines[i].quantity (more than bought, not shipped yet, in a return already); not_found.",
		}, r.RequestReturn),
		shop.NewTool(shop.Tool{
			Name: "cancel_return", Title: "Cancel a return", Auth: returnsAuth, Idempotent: false,
			Description: "Cancel a return the buyer started, while the shop has not received its parcel (status requested). Send order_id, the email " +
				"(not needed when the buyer's account is connected) and return_id (ret_…, as request_return or get_order shows it). " +
				"Errors: missing or invalid order_id, email, return_id; invalid $.return_id when the return is no longer requested; not_found.",
		}, r.CancelReturn),
	}
}

// Summary is the return policy in one paragraph, amounts in the shop's currency.
func (r *Returns) Summary() string { return r.policy.Summary(r.admin.catalog.Currency().Format) }

// Policy is the return policy the returns follow.
func (r *Returns) Policy() ReturnPolicy { return r.policy }

// Instructions say how to send a return's parcel and where.
func (r *Returns) Instructions() string { return r.policy.instructions() }

// AdminTools returns the staff's return tools, list_returns, accept_return
// and reject_return, for /admin/mcp and `shop admin`.
func (r *Returns) AdminTools() []shop.Tool {
	return []shop.Tool{
		shop.NewTool(shop.Tool{
			Name: "list_returns", Title: "List returns", ReadOnly: true, Idempotent: true,
			Description: "Role viewer. Returns buyers started, newest first, optionally by status (requested, canceled, rejected, accepted, refunded), " +
				"paged with cursor: each with its order, lines, reason, the buyer's note and the refund it pays (minor units). " +
				"Errors: invalid $.status, $.limit, $.cursor.",
		}, r.ListReturns),
		shop.NewTool(shop.Tool{
			Name: "accept_return", Title: "Accept a return", Destructive: true,
			// A confirm token works once: the same call again changes nothing.
			Idempotent: true,
			Description: "Role owner. Two steps: without confirm it changes nothing and previews the acceptance of a requested return (the refund, " +
				"the units put back on sale as the return policy says) with a confirm token; the same call with that token refunds through the " +
				"payment provider, once, and the buyer is emailed. Refunds and returns together never pass what the order paid. " +
				"Errors: not_found $.return_id; invalid $.return_id (not requested), $.confirm (used, expired, other arguments or actor, or the return changed); " +
				"conflict when another staff member acted on it first.",
		}, r.AcceptReturn),
		shop.NewTool(shop.Tool{
			Name: "reject_return", Title: "Reject a return", Destructive: true,
			Description: "Role support. Reject a requested return with a reason the buyer reads (their email and the order show it); its units may be returned again. " +
				"Errors: not_found $.return_id; invalid $.return_id (not requested), missing or invalid $.reason; conflict.",
		}, r.RejectReturn),
	}
}

// RefineSchema bounds the request as RequestReturn checks it.
func (RequestReturnArgs) RefineSchema(s *jsonschema.Schema) {
	refineOrderID(s.Properties["order_id"])
	p := s.Properties
	p["email"].MaxLength = jsonschema.Ptr(MaxEmailLen)
	p["reason"].Enum = make([]any, len(ReturnReasons))
	for i, r := range ReturnReasons {
		p["reason"].Enum[i] = r
	}
	p["note"].MaxLength = jsonschema.Ptr(maxReturnNote)
	p["lines"].MinItems, p["lines"].MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(maxReturnLines)
	if it := p["lines"].Items; it != nil {
		it.Properties["line_item_id"].MaxLength = jsonschema.Ptr(maxLineIDLen)
		it.Properties["quantity"].Minimum, it.Properties["quantity"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(maxLineQuantity))
	}
}

// RefineSchema bounds the ids.
func (CancelReturnArgs) RefineSchema(s *jsonschema.Schema) {
	refineOrderID(s.Properties["order_id"])
	s.Properties["email"].MaxLength = jsonschema.Ptr(MaxEmailLen)
	s.Properties["return_id"].MaxLength = jsonschema.Ptr(maxReturnIDLen)
}

// RefineSchema bounds the id and token.
func (AcceptReturnArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["return_id"].MaxLength = jsonschema.Ptr(maxReturnIDLen)
	s.Properties["confirm"].MaxLength = jsonschema.Ptr(maxConfirmLen)
}

// RefineSchema bounds the id and reason.
func (RejectReturnArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["return_id"].MaxLength = jsonschema.Ptr(maxReturnIDLen)
	s.Properties["reason"].MinLength, s.Properties["reason"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxReasonLen)
}

// maxReturnIDLen bounds a return id argument ("ret_" and 35 characters).
const maxReturnIDLen = 64
