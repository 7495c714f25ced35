package ucp

import (
	"context"
	"net/url"

	"shop"
)

// restOp is an operation of the REST binding: the dialect's typed function
// it calls (the one /ucp/mcp's tool of the same action calls), the member
// of that function's arguments its body is ("" for none), whether it
// changes state (and so takes an Idempotency-Key), whether it answers 201
// when it made the resource, and how a replay of its key re-reads what it
// made or changed.
type restOp struct {
	member  string
	changes bool
	created bool
	run     func(u *UCP, ctx context.Context, in restIn) (outcome, error)
	reread  func(u *UCP, ctx context.Context, meta Meta, id string) (outcome, error)
}

// restIn is what a request carries to its operation: the meta of its
// headers, the path's id, the query, and the body wrapped as the member of
// the arguments ({"checkout": body}), nil for none.
type restIn struct {
	meta  Meta
	id    string
	query url.Values
	body  []byte
}

// outcome is a typed answer as the REST binding maps it: the UCP object or
// error response to send, read from the typed result, never from its JSON.
type outcome struct {
	value  any
	failed bool   // an error response: it made and changed nothing
	id     string // the checkout or cart made or changed, re-read on a replay
	final  bool   // a retry would answer the same: the Idempotency-Key keeps it
}

// restOps are the OpenAPI's operations, by method and path pattern.
var restOps = map[string]restOp{
	"POST /checkout-sessions":     {member: "checkout", changes: true, created: true, run: typed((*UCP).createCheckout, ofCheckout), reread: rereadCheckout},
	"GET /checkout-sessions/{id}": {run: typed((*UCP).getCheckout, ofCheckout)},
	"PUT /checkout-sessions/{id}": {member: "checkout", changes: true, run: typed((*UCP).updateCheckout, ofCheckout), reread: rereadCheckout},
	"POST /checkout-sessions/{id}/complete": {member: "checkout", changes: true, run: typed(func(u *UCP, ctx context.Context, a UpdateCheckoutArgs) (CheckoutResult, string, error) {
		return u.complete(ctx, a, u.direct)
	}, ofCheckout), reread: rereadCheckout},
	"POST /checkout-sessions/{id}/cancel": {changes: true, run: typed(func(u *UCP, ctx context.Context, a IDArgs) (CheckoutResult, string, error) {
		return u.cancel(ctx, a, u.direct)
	}, ofCheckout), reread: rereadCheckout},
	"POST /carts":             {member: "cart", changes: true, created: true, run: typed((*UCP).createCart, ofCart), reread: rereadCart},
	"GET /carts/{id}":         {run: typed((*UCP).getCart, ofCart)},
	"PUT /carts/{id}":         {member: "cart", changes: true, run: typed((*UCP).updateCart, ofCart), reread: rereadCart},
	"POST /carts/{id}/cancel": {changes: true, run: typed((*UCP).cancelCart, ofCart), reread: rereadCart},
	"POST /catalog/search":    {member: "catalog", run: typed((*UCP).search, ofSearch)},
	"POST /catalog/lookup":    {member: "catalog", run: typed((*UCP).lookup, ofLookup)},
	"POST /catalog/product":   {member: "catalog", run: typed((*UCP).product, ofProduct)},
	"GET /orders/{id}":        {run: typed((*UCP).getOrder, ofOrder)},
}

// restArgs are a typed function's arguments as a request fills them.
type restArgs[T any] interface {
	*T
	fill(in restIn)
}

// typed is the run of an operation calling fn: the body decoded into its
// arguments as /ucp/mcp decodes a tool's (the same errors, at the same
// paths), meta and id set from the headers and path, the result mapped by of.
func typed[In any, P restArgs[In], Out any](fn func(*UCP, context.Context, In) (Out, string, error), of func(Out) outcome) func(*UCP, context.Context, restIn) (outcome, error) {
	return func(u *UCP, ctx context.Context, in restIn) (outcome, error) {
		var args In
		if in.body != nil {
			if err := shop.DecodeArgs(in.body, &args); err != nil {
				return outcome{}, err
			}
		}
		P(&args).fill(in)
		out, _, err := fn(u, ctx, args)
		if err != nil {
			return outcome{}, err
		}
		return of(out), nil
	}
}

func (a *CreateCheckoutArgs) fill(in restIn) { a.Meta = in.meta }
func (a *UpdateCheckoutArgs) fill(in restIn) { a.Meta, a.ID = in.meta, in.id }
func (a *IDArgs) fill(in restIn)             { a.Meta, a.ID = in.meta, in.id }
func (a *CreateCartArgs) fill(in restIn)     { a.Meta = in.meta }
func (a *UpdateCartArgs) fill(in restIn)     { a.Meta, a.ID = in.meta, in.id }
func (a *SearchArgs) fill(in restIn)         { a.Meta = in.meta }
func (a *LookupArgs) fill(in restIn)         { a.Meta = in.meta }
func (a *ProductArgs) fill(in restIn)        { a.Meta = in.meta }
func (a *OrderArgs) fill(in restIn)          { a.Meta, a.ID, a.Email = in.meta, in.id, in.query.Get("email") }

// rereadCheckout answers a replayed key of a checkout's operation: the
// checkout as it stands, read by get_checkout's function.
func rereadCheckout(u *UCP, ctx context.Context, meta Meta, id string) (outcome, error) {
	return typed((*UCP).getCheckout, ofCheckout)(u, ctx, restIn{meta: meta, id: id})
}

// rereadCart is rereadCheckout for carts.
func rereadCart(u *UCP, ctx context.Context, meta Meta, id string) (outcome, error) {
	return typed((*UCP).getCart, ofCart)(u, ctx, restIn{meta: meta, id: id})
}

// failed is the outcome of an error response, final unless it asks for a
// retry (a conflict, the shop unavailable).
func failed(e *ErrorResponse) outcome {
	o := outcome{value: e, failed: true}
	if e != nil {
		o.final = settled(e.Messages)
	}
	return o
}

// settled reports whether no message asks the agent to retry the same
// request: a conflict or the shop unavailable may answer otherwise then.
func settled(msgs []Message) bool {
	for _, m := range msgs {
		if m.Code == string(shop.Conflict) || m.Code == "unavailable" {
			return false
		}
	}
	return true
}

func ofCheckout(r CheckoutResult) outcome {
	if r.Checkout == nil {
		return failed(r.Error)
	}
	return outcome{value: r.Checkout, id: r.Checkout.ID,
		final: r.Checkout.Status != "complete_in_progress" && settled(r.Checkout.Messages)}
}

func ofCart(r CartResult) outcome {
	if r.Cart == nil {
		return failed(r.Error)
	}
	return outcome{value: r.Cart, id: r.Cart.ID, final: settled(r.Cart.Messages)}
}

// read is the outcome of a read answering v or, when nil, the error
// response e.
func read[T any](v *T, e *ErrorResponse) outcome {
	if v == nil {
		return failed(e)
	}
	return outcome{value: v, final: true}
}

func ofSearch(r SearchResult) outcome   { return read(r.Response, r.Error) }
func ofLookup(r LookupResult) outcome   { return read(r.Response, r.Error) }
func ofProduct(r ProductResult) outcome { return read(r.Response, r.Error) }
func ofOrder(r OrderResult) outcome     { return read(r.Order, r.Error) }
