package ucp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"shop/checkout"
	"shop/idempotency"
)

// once runs a keyed call (complete_checkout, cancel_checkout) at most once
// per agent, tool and meta["idempotency-key"], through the store shared by
// every replica: a retry with the same key and payload gets the first
// answer again; the same key with another payload is a JSON-RPC error
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
	req := idempotency.Request{Scope: "ucp|" + c.agent + "|" + tool, Key: c.meta.IdempotencyKey, Fingerprint: fp}
	answer, err := u.idem.Do(ctx, req, func(ctx context.Context) ([]byte, bool, error) {
		s, err := fn(ctx)
		res, _, err := u.checkoutAnswer(c, s, err)
		if err != nil {
			return nil, false, err
		}
		b, err := json.Marshal(chosen(res))
		keep := (res.Checkout != nil && res.Checkout.Status != "complete_in_progress") ||
			(res.Error != nil && res.Error.Messages[0].Code != "conflict" && res.Error.Messages[0].Code != "unavailable")
		return b, keep, err
	})
	switch {
	case errors.Is(err, idempotency.ErrConflict):
		return CheckoutResult{}, "", protocolError(-32000, "Idempotency key reused with a different payload", "idempotency_conflict",
			`meta["idempotency-key"] was used for another request; send a fresh UUID for a new one`, nil)
	case errors.Is(err, idempotency.ErrInFlight):
		return CheckoutResult{}, "", protocolError(-32000, "Request in progress", "idempotency_in_flight",
			`the first request with this meta["idempotency-key"] is still running; retry in a second`, map[string]any{"retry_after": 1})
	case err != nil:
		return CheckoutResult{}, "", err
	}
	var out CheckoutResult
	var probe struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(answer, &probe); err != nil {
		return CheckoutResult{}, "", fmt.Errorf("stored answer: %w", err)
	}
	if probe.ID != "" {
		out.Checkout = &Checkout{}
		err = json.Unmarshal(answer, out.Checkout)
	} else {
		out.Error = &ErrorResponse{}
		err = json.Unmarshal(answer, out.Error)
	}
	if err != nil {
		return CheckoutResult{}, "", fmt.Errorf("stored answer: %w", err)
	}
	return out, string(answer), nil
}

// chosen is the answer a CheckoutResult holds.
func chosen(r CheckoutResult) any {
	if r.Checkout != nil {
		return r.Checkout
	}
	return r.Error
}
