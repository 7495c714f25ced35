package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"shop"
)

// ErrorType is the category of an ACP Error.
type ErrorType string

// The types of the 2026-04-17 Error schema.
const (
	InvalidRequest     ErrorType = "invalid_request"
	ProcessingError    ErrorType = "processing_error"
	ServiceUnavailable ErrorType = "service_unavailable"
)

// Error is the ACP Error object: what the binding puts in a JSON-RPC
// error's data (code -32000).
type Error struct {
	Type              ErrorType `json:"type"`
	Code              string    `json:"code"`
	Message           string    `json:"message"`
	Param             string    `json:"param,omitempty"`
	SupportedVersions []string  `json:"supported_versions,omitempty"`
}

// The JSON-RPC error codes of the binding.
const (
	codeACP           = -32000 // every ACP error, the Error in data
	codeInvalidParams = -32602 // a malformed envelope
)

// stored reports whether an idempotency key keeps this error as its answer:
// a refusal of a well-formed request does (the same request is refused
// again: out of stock, not ready for payment), while a processing error or
// unavailability does not, so the key can be retried, and neither does a
// malformed request (a field invalid or missing, a session that does not
// exist): answering it again costs nothing, and keeping it would let
// callers fill the disk with refusals.
func (e *Error) stored() bool { return e.Type == InvalidRequest && !malformedCodes[e.Code] }

// malformedCodes are the refusals of a request's form.
var malformedCodes = map[string]bool{
	"session_not_found": true, "missing_required_field": true, "invalid": true,
	"unsupported": true, "unsupported_currency": true, string(shop.Missing): true,
	string(shop.NotFound): true,
}

// rpc is e as the JSON-RPC error the binding answers; cause, when set, is
// logged by the server and never sent.
func (e *Error) rpc(cause error) *shop.ProtocolError {
	data, err := json.Marshal(e)
	if err != nil {
		panic(err) // strings only
	}
	return &shop.ProtocolError{Code: codeACP, Message: e.Message, Data: data, Err: cause}
}

// malformed is the -32602 answer to an envelope that is not {meta, id, payload}.
func malformed(format string, args ...any) *shop.ProtocolError {
	return &shop.ProtocolError{Code: codeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func invalid(code, param, format string, args ...any) *Error {
	return &Error{Type: InvalidRequest, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

// internalMessage answers an error that is not the shop's.
const internalMessage = "The shop could not complete this request because of an internal error; it has been logged. Try again in a moment."

// fromShop translates an error of checkout into an ACP Error, its param
// into the request's JSONPath (see requestParam). It also returns the
// cause to log: nil for a *shop.Error, which is an answer.
func fromShop(err error) (*Error, error) {
	var e *shop.Error
	switch {
	case errors.As(err, &e):
		out := &Error{Type: InvalidRequest, Code: string(e.Code), Message: say(e.Message), Param: requestParam(e.Param)}
		switch e.Code {
		case shop.NotFound:
			out.Code = "session_not_found"
		case shop.Missing:
			out.Code = "missing_required_field"
		case shop.Conflict, shop.Unavailable:
			out.Type = ServiceUnavailable
		}
		return out, nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &Error{Type: ServiceUnavailable, Code: "timeout", Message: "The request was canceled or took too long; try again."}, err
	}
	return &Error{Type: ProcessingError, Code: "internal_error", Message: internalMessage}, err
}

// requestParam maps the JSONPath of a checkout argument to the field of
// the ACP call that carries it.
func requestParam(p string) string {
	for _, m := range [...]struct{ from, to string }{
		{"$.checkout_session_id", "$.id"},
		{"$.items", "$.payload.line_items"},
		{"$.fulfillment_address", "$.payload.fulfillment_details.address"},
		{"$.fulfillment_option_id", "$.payload.selected_fulfillment_options[0].option_id"},
		{"$.promo_codes", "$.payload.discounts.codes"},
		{"$.promo_code", "$.payload.discounts.codes[0]"},
		{"$.payment_data.token", "$.payload.payment_data.instrument.credential.token"},
		{"$.payment_data.provider", "$.payload.payment_data.handler_id"},
		{"$.payment_data", "$.payload.payment_data"},
		{"$.buyer", "$.payload.buyer"},
		{"$.metadata", "$.payload.metadata"},
	} {
		if rest, ok := strings.CutPrefix(p, m.from); ok {
			if m.from == "$.items" {
				rest = strings.Replace(rest, ".item.quantity", ".quantity", 1)
			}
			return m.to + rest
		}
	}
	return p
}

// sessionParam maps the JSONPath of a field of checkout's session, in a
// message, to the ACP CheckoutSession's field.
func sessionParam(p string) string {
	for _, m := range [...]struct{ from, to string }{
		{"$.fulfillment_address", "$.fulfillment_details.address"},
		{"$.fulfillment_option_id", "$.selected_fulfillment_options"},
		{"$.items", "$.line_items"},
	} {
		if rest, ok := strings.CutPrefix(p, m.from); ok {
			return m.to + rest
		}
	}
	if strings.HasPrefix(p, "$.line_items[") {
		return strings.Replace(p, ".item.quantity", ".quantity", 1)
	}
	return p
}
