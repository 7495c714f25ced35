// Package shop holds the vocabulary every part of the shop shares: the error a
// buyer, a host or a merchant may see, with the contract's codes, and the demo
// merchant built into the binary.
//
// It imports only the standard library, so any package may depend on it.
package shop

import (
	"context"
	"errors"
	"fmt"
)

// Code classifies an error a caller may see. The message codes of CONTRACT.md §4
// are here, with the few more that tool errors need.
type Code string

// Codes a caller may see.
const (
	// Missing: a required field was not sent.
	Missing Code = "missing"
	// Invalid: a field was sent with a value the shop cannot accept.
	Invalid Code = "invalid"
	// NotFound: the id names nothing the shop knows.
	NotFound Code = "not_found"
	// OutOfStock: not enough units are available.
	OutOfStock Code = "out_of_stock"
	// PaymentDeclined: the payment provider declined the payment.
	PaymentDeclined Code = "payment_declined"
	// Requires3DS: the payment needs the buyer's authentication.
	Requires3DS Code = "requires_3ds"
	// Expired: the session or token is past its expiry.
	Expired Code = "expired"
	// PriceChanged: a price moved since the buyer saw it.
	PriceChanged Code = "price_changed"
	// Forbidden: the caller's role may not do this.
	Forbidden Code = "forbidden"
	// Conflict: someone else changed the same thing at the same time; retry.
	Conflict Code = "conflict"
	// Unavailable: the shop cannot serve the request now; try again later.
	Unavailable Code = "unavailable"
)

// Error is an error whose message is written for the person or model that
// called the shop. Param is the JSONPath of the field at fault ("$.limit"), or
// empty when the error is not about one field.
//
// The edge of the shop (package server) passes an *Error's message through to
// the caller and answers any other error with a generic text.
//
// Key and Params, when set, name the situation and its values for the
// catalogs of the widgets and pages (docs/messages.md), so that a buyer
// reads it in their language while the model reads Message.
type Error struct {
	Code    Code
	Param   string
	Message string
	Key     string
	Params  map[string]string
}

// Error returns the message, prefixed by the field when there is one.
func (e *Error) Error() string {
	if e.Param == "" {
		return e.Message
	}
	return e.Param + ": " + e.Message
}

// Errorf returns an *Error with the given code and param and a formatted message.
func Errorf(code Code, param, format string, args ...any) *Error {
	return &Error{Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// Keyed returns e with the catalog key and the params (pairs of a name
// and a value) a buyer-facing sentence needs.
func (e *Error) Keyed(key string, params ...string) *Error {
	e.Key, e.Params = key, Params(params...)
	return e
}

// Params is the map of pairs of a name and a value ("name", "Mug"), nil
// when there are none.
func Params(pairs ...string) map[string]string {
	if len(pairs) < 2 {
		return nil
	}
	m := make(map[string]string, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}

// ErrorCode returns the code of the first *Error in err's chain, or "" when
// there is none.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Role is what a merchant's staff member may do (CONTRACT.md §6).
type Role string

// Roles, each allowed what the ones before it are.
const (
	Viewer  Role = "viewer"  // read
	Support Role = "support" // read, notes, fulfil
	Owner   Role = "owner"   // everything, money and stock included
)

// Allows reports whether r may do what need requires.
func (r Role) Allows(need Role) bool {
	rank := map[Role]int{Viewer: 1, Support: 2, Owner: 3}
	return rank[r] >= rank[need] && rank[need] > 0
}

// Actor is who calls an admin tool: a role and a label naming the token (or
// "local" for `shop admin`), never the token itself.
type Actor struct {
	Role  Role
	Label string
}

// String is how the actor appears in the audit log: "owner:3f9a1c0b".
func (a Actor) String() string { return string(a.Role) + ":" + a.Label }

type actorKey struct{}

// WithActor returns ctx carrying the caller's identity.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the caller's identity, if ctx carries one.
func ActorFrom(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}
