package ucp

import (
	"context"

	"shop/checkout"
)

// once runs a keyed call (complete_checkout, cancel_checkout) of the agent.
func (u *UCP) once(ctx context.Context, c *call, tool string, args any, fn func(context.Context) (*checkout.Session, error)) (CheckoutResult, string, error) {
	s, err := fn(ctx)
	return u.checkoutAnswer(c, s, err)
}
