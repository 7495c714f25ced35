package ucp

import (
	"context"

	"shop"
	"shop/checkout"
)

// CartResult is a cart tool's answer: the cart, or an error response.
type CartResult struct {
	shop.OneOf
	Cart  *Cart
	Error *ErrorResponse
}

// OrderResult is get_order's answer: the order, or an error response.
type OrderResult struct {
	shop.OneOf
	Order *Order
	Error *ErrorResponse
}

func (u *UCP) cartTools() []shop.Tool {
	outcome := " Answers the cart: ucp, line_items priced now, totals (minor units; no shipping: a checkout adds it), messages " +
		"(out_of_stock for lines the stock does not cover). A cart holds no stock; create_checkout with its cart_id does."
	return []shop.Tool{
		shop.NewTool(shop.Tool{
			Name: "create_cart", Title: "Create a cart",
			Description: "Start a basket of line_items (item.id a variant id, quantity), optionally with the buyer and discounts.codes." + outcome,
		}, u.createCart),
		shop.NewTool(shop.Tool{
			Name: "get_cart", Title: "Get a cart", ReadOnly: true, Idempotent: true,
			Description: "Get a cart, priced now." + outcome,
		}, u.getCart),
		shop.NewTool(shop.Tool{
			Name: "update_cart", Title: "Update a cart",
			Description: "Change a cart: line_items (replaces them), buyer, discounts.codes." + outcome,
		}, u.updateCart),
		shop.NewTool(shop.Tool{
			Name: "cancel_cart", Title: "Cancel a cart", Destructive: true, Idempotent: true,
			Description: "Drop a cart; meta[\"idempotency-key\"] (a UUID) is required." + outcome,
		}, u.cancelCart),
	}
}

func (u *UCP) cartAnswer(c *call, ct *checkout.Cart, err error) (CartResult, string, error) {
	if err != nil {
		refused, err := u.refusal(c, err, checkoutPath)
		if err != nil {
			return CartResult{}, "", err
		}
		return CartResult{Error: refused}, "", nil
	}
	out := u.toCart(c, ct)
	return CartResult{Cart: out}, "", nil
}

func (u *UCP) beginCart(ctx context.Context, meta Meta) (*call, *CartResult, string, error) {
	c, refused, err := u.begin(ctx, meta, CapCart)
	if err != nil || refused != nil {
		if refused != nil {
			return nil, &CartResult{Error: refused}, "", nil
		}
		return nil, &CartResult{}, "", err
	}
	return c, nil, "", nil
}

func (in CartIn) request(current []checkout.LineItem) (checkout.CartRequest, error) {
	its, err := items(in.LineItems, current)
	if err != nil {
		return checkout.CartRequest{}, err
	}
	return checkout.CartRequest{Items: its, Buyer: fromBuyer(in.Buyer), PromoCodes: codes(in.Discounts)}, nil
}

func (u *UCP) createCart(ctx context.Context, args CreateCartArgs) (CartResult, string, error) {
	c, r, t, err := u.beginCart(ctx, args.Meta)
	if c == nil {
		return *r, t, err
	}
	req, err := args.Cart.request(nil)
	if err != nil {
		return u.cartAnswer(c, nil, err)
	}
	ct, err := u.checkout.CreateCart(buyerContext(ctx, c, req.Buyer), req)
	return u.cartAnswer(c, ct, err)
}

func (u *UCP) getCart(ctx context.Context, args IDArgs) (CartResult, string, error) {
	c, r, t, err := u.beginCart(ctx, args.Meta)
	if c == nil {
		return *r, t, err
	}
	ct, err := u.checkout.GetCart(ctx, args.ID)
	return u.cartAnswer(c, ct, err)
}

func (u *UCP) updateCart(ctx context.Context, args UpdateCartArgs) (CartResult, string, error) {
	c, r, t, err := u.beginCart(ctx, args.Meta)
	if c == nil {
		return *r, t, err
	}
	cur, err := u.checkout.GetCart(ctx, args.ID)
	if err != nil {
		return u.cartAnswer(c, nil, err)
	}
	req, err := args.Cart.request(cur.LineItems)
	if err != nil {
		return u.cartAnswer(c, nil, err)
	}
	buyer := req.Buyer
	if buyer == nil {
		buyer = cur.Buyer
	}
	ct, err := u.checkout.UpdateCart(buyerContext(ctx, c, buyer), args.ID, req)
	return u.cartAnswer(c, ct, err)
}

func (u *UCP) cancelCart(ctx context.Context, args IDArgs) (CartResult, string, error) {
	c, r, t, err := u.beginCart(ctx, args.Meta)
	if c == nil {
		return *r, t, err
	}
	if err := idempotencyKey(args.Meta); err != nil {
		return u.cartAnswer(c, nil, err)
	}
	ct, err := u.checkout.CancelCart(ctx, args.ID)
	return u.cartAnswer(c, ct, err)
}

func (u *UCP) orderTool() shop.Tool {
	return shop.NewTool(shop.Tool{
		Name: "get_order", Title: "Get an order", ReadOnly: true, Idempotent: true,
		Description: "Get an order by its id (the order.id of a completed checkout) and the email the buyer placed it with: " +
			"its lines, quantities fulfilled, where it ships, totals (minor units) and permalink_url, the buyer's receipt page. " +
			"An order whose email does not match is answered like an unknown one.",
	}, u.getOrder)
}

// getOrder answers an order by its id and the email it was placed with.
func (u *UCP) getOrder(ctx context.Context, args OrderArgs) (OrderResult, string, error) {
	c, refused, err := u.begin(ctx, args.Meta, CapOrder)
	if err != nil {
		return OrderResult{}, "", err
	}
	if refused != nil {
		return OrderResult{Error: refused}, "", nil
	}
	o, err := u.orders.Get(ctx, args.ID, args.Email)
	if err != nil {
		refused, err := u.refusal(c, err, func(p string) string {
			if p == "$.email" {
				return p
			}
			return "$.id"
		})
		if err != nil {
			return OrderResult{}, "", err
		}
		return OrderResult{Error: refused}, "", nil
	}
	out := u.toOrder(c, o)
	return OrderResult{Order: out}, "", nil
}
