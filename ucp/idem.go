package ucp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"shop/checkout"
	"shop/idempotency"
)

// keyed runs the change of a keyed call (complete, cancel) and answers it.
type keyed func(ctx context.Context, c *call, tool string, args any, fn func(context.Context) (*checkout.Session, error)) (CheckoutResult, string, error)

// direct runs a keyed call's change as it is: for the REST binding, whose
// Idempotency-Key layer (restOnce) is the only one its calls go through.
func (u *UCP) direct(ctx context.Context, c *call, _ string, _ any, fn func(context.Context) (*checkout.Session, error)) (CheckoutResult, string, error) {
	s, err := fn(ctx)
	return u.checkoutAnswer(c, s, err)
}

// once runs a keyed call (complete_checkout, cancel_checkout) at most once
// per agent, tool and meta["idempotency-key"], through the store shared by
// every replica: a retry with the same key and payload answers the
// checkout the first call changed as it stands now (the key keeps its id,
// not the whole answer: docs/limits.md), or the first call's error
// response again; the same key with another payload is a JSON-RPC error
// -32000 (HTTP 409 in UCP's table), as is a retry while the first call
// still runs. Answers that may change on a retry (a checkout still being
// paid, a refusal to try again) are not kept.
func (u *UCP) once(ctx context.Context, c *call, tool string, args any, fn func(context.Context) (*checkout.Session, error)) (CheckoutResult, string, error) {
	payload, err := json.Marshal(args)
	if err != nil {
		return CheckoutResult{}, "", err
	}
	fp, err := idempotency.Fingerprint(payload)
	if err != nil {
		return CheckoutResult{}, "", err
	}
	req := idempotency.Request{Scope: "ucp|" + c.agent + "|" + tool, Key: c.meta.IdempotencyKey, Fingerprint: fp, Budget: budget(ctx), Network: network(ctx)}
	var ran *CheckoutResult
	var ranText string
	stored, err := u.idem.Do(ctx, req, func(ctx context.Context) ([]byte, bool, error) {
		s, err := fn(ctx)
		res, text, err := u.checkoutAnswer(c, s, err)
		if err != nil {
			return nil, false, err
		}
		ran, ranText = &res, text
		keep := (res.Checkout != nil && res.Checkout.Status != "complete_in_progress") ||
			(res.Error != nil && res.Error.Messages[0].Code != "conflict" && res.Error.Messages[0].Code != "unavailable")
		var rec mcpRecord
		if res.Checkout != nil {
			rec.ID = res.Checkout.ID
		} else {
			rec.Error = res.Error
		}
		b, err := json.Marshal(rec)
		return b, keep, err
	})
	switch {
	case errors.Is(err, idempotency.ErrConflict):
		return CheckoutResult{}, "", protocolError(-32000, "Idempotency key reused with a different payload", "idempotency_conflict",
			`meta["idempotency-key"] was used for another request; send a fresh UUID for a new one`, nil)
	case errors.Is(err, idempotency.ErrInFlight):
		return CheckoutResult{}, "", protocolError(-32000, "Request in progress", "idempotency_in_flight",
			`the first request with this meta["idempotency-key"] is still running; retry in a second`, map[string]any{"retry_after": 1})
	case errors.Is(err, idempotency.ErrBudget):
		return CheckoutResult{}, "", overBudget(u.now())
	case err != nil:
		return CheckoutResult{}, "", err
	case ran != nil:
		return *ran, ranText, nil
	}
	var rec mcpRecord
	if err := json.Unmarshal(stored, &rec); err != nil {
		return CheckoutResult{}, "", fmt.Errorf("stored answer: %w", err)
	}
	if rec.ID == "" && rec.Error == nil { // kept whole before keys kept ids: an error response
		rec.Error = &ErrorResponse{}
		if err := json.Unmarshal(stored, rec.Error); err != nil {
			return CheckoutResult{}, "", fmt.Errorf("stored answer: %w", err)
		}
	}
	if rec.ID == "" {
		return CheckoutResult{Error: rec.Error}, "", nil
	}
	s, err := u.checkout.Get(ctx, rec.ID)
	return u.checkoutAnswer(c, s, idPath(err))
}

// mcpRecord is what a key of /ucp/mcp keeps of its answer: the id of the
// checkout the call changed, or its error response (one message).
type mcpRecord struct {
	ID    string         `json:"id,omitempty"`
	Error *ErrorResponse `json:"error,omitempty"`
}
