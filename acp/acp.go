// Package acp speaks the Agentic Commerce Protocol's MCP binding
// (2026-04-17) on top of the shop's checkout: its five tools take
// {meta, id, payload}, their input schemas are bundled from the official
// JSON Schema, and they answer ACP CheckoutSession objects, or a JSON-RPC
// error -32000 with the ACP Error in data.
//
// The package only translates: ACP payloads become calls of checkout's Go
// API (Create, Update, Get, Complete, Cancel) and its sessions become ACP
// objects. Prices, holds, limits, the one charge and the order are
// checkout's and orders', the same whichever endpoint made or paid them.
// What the binding adds is kept here: meta.api_version, checked on every
// call; idempotency keys (package idempotency, in the database, scoped by
// the agent, the tool and the session); and the negotiated capabilities,
// which are the same for every session (the payment handlers the shop
// takes), so nothing of them is stored. Callers without a token (an endpoint
// opened with --acp-open) are told apart by their client address, for their
// idempotency keys and their buyers.
//
// Errors the tools answer (data.type, data.code):
//   - invalid_request: missing_api_version, unsupported_api_version,
//     missing_required_field and invalid (param the field; an id longer than
//     MaxIDLen too), signature_required and invalid_signature (an agent with
//     a signing key, see Signature), idempotency_key_required (a signed
//     call that changes state without meta.idempotency_key), session_not_found,
//     unsupported_currency, idempotency_conflict, idempotency_in_flight, and
//     out_of_stock, price_changed and the like when a session cannot be paid;
//   - processing_error: payment_declined, requires_3ds, internal_error;
//   - service_unavailable: conflict, payment_in_progress, timeout.
//
// A malformed envelope (not {meta, id, payload} as the tool takes it) is
// JSON-RPC -32602.
package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"shop"
	"shop/checkout"
	"shop/idempotency"
)

// Version is the ACP API version the binding speaks.
const Version = "2026-04-17"

// SupportedVersions are the versions meta.api_version may name.
var SupportedVersions = []string{Version}

// ACP serves the binding's tools over a checkout.
type ACP struct {
	checkout *checkout.Checkout
	store    *idempotency.Store
	currency string
	tools    []*spec
	keys     map[string][]byte
	now      func() time.Time
}

// Options configure the binding.
type Options struct {
	// Currency is the shop's (lower-case ISO 4217), which create's
	// payload.currency must name.
	Currency string
	// SigningKeys are the agents' keys (ParseSigningKeys), by agent name:
	// an agent with a key must sign its calls.
	SigningKeys map[string][]byte
}

// New returns the binding over c, keeping idempotency keys in store.
func New(c *checkout.Checkout, store *idempotency.Store, opts Options) (*ACP, error) {
	a := &ACP{checkout: c, store: store, currency: opts.Currency, keys: opts.SigningKeys, now: time.Now}
	if a.currency == "" {
		return nil, fmt.Errorf("acp: no currency")
	}
	sch, err := loadSchemas()
	if err != nil {
		return nil, err
	}
	for _, sp := range a.specs() {
		if err := sp.build(sch); err != nil {
			return nil, err
		}
		a.tools = append(a.tools, sp)
	}
	return a, nil
}

// Tools returns the binding's five tools, for package server to serve on
// their own MCP server (/acp/mcp).
func (a *ACP) Tools() []shop.Tool {
	out := make([]shop.Tool, 0, len(a.tools))
	for _, sp := range a.tools {
		out = append(out, shop.Tool{
			Name: sp.name, Title: sp.title, Description: sp.description, InputSchema: sp.input,
			ReadOnly: sp.readOnly, Destructive: sp.destructive, Idempotent: sp.idempotent,
			Handle: func(ctx context.Context, args json.RawMessage) (*shop.Result, error) { return a.call(ctx, sp, args) },
		})
	}
	return out
}

// Instructions introduce the binding's MCP server to the agent, for the
// shop named shopName.
func (a *ACP) Instructions(shopName string) string {
	return "The Agentic Commerce Protocol's MCP binding (API version 2026-04-17) for " + shopName +
		": create_checkout_session, get_checkout_session, update_checkout_session, complete_checkout_session and " +
		"cancel_checkout_session, each taking {meta: {api_version, idempotency_key?}, id, payload}."
}

// scope is the idempotency scope of a keyed call: the dialect, the agent,
// the tool and the session (the REST binding's endpoint path). Callers
// without a token (an endpoint opened with --acp-open) are one agent name
// but not one caller: their keys are scoped by the client's address too,
// so that nobody replays another's key to read their session.
func scope(ctx context.Context, tool, id string) string {
	return "acp|" + caller(ctx) + "|" + tool + "|" + id
}

// caller is the calling agent's name, and for a caller without a token
// (anonymous) its client address too.
func caller(ctx context.Context) string {
	agent := shop.AgentFrom(ctx)
	if agent == anonymous {
		agent += "@" + shop.BuyerFrom(ctx).Address
	}
	return agent
}

// anonymous is shop.AgentFrom's name of a caller without a token.
const anonymous = "anonymous"

// MaxIDLen bounds the envelope's id (a session id is far shorter): what a
// caller sends becomes part of stored keys only once bounded.
const MaxIDLen = 256
