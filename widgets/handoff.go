package widgets

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"shop"
	"shop/checkout"
)

// ChatGPT's product checkout conversion contract (docs/connecting.md): a
// product's Open button in ChatGPT calls the tool checkout_session with
// {checkout_session: {items: [{id, quantity, offerId}]}}, the ids those of
// the shop's product feed (variant ids), and shows the template
// ui://widget/checkout-session.html. The tool makes a checkout session on
// the same core as create_checkout_session, and the template is the
// checkout widget itself, so the buyer lands in the shop's checkout. Both
// are offered only when the merchant's policy says product_checkout: true.

// Names the contract fixes.
const (
	HandoffTool = "checkout_session"
	HandoffURI  = "ui://widget/checkout-session.html"
)

// maxHandoffItems bounds a handoff's items, as a session's lines are.
const maxHandoffItems = 50

// HandoffItem is an item of a handoff: a product feed item (a variant id),
// its quantity and the offer ChatGPT showed (kept for nothing: the shop's
// own price applies).
type HandoffItem struct {
	ID       string `json:"id" jsonschema:"The product feed item's id: a variant id."`
	Quantity int64  `json:"quantity" jsonschema:"Units, at least 1 (1 when 0 or absent)."`
	OfferID  string `json:"offerId,omitempty" jsonschema:"The offer ChatGPT showed; the shop's current price applies."`
}

// HandoffArgs are checkout_session's arguments.
type HandoffArgs struct {
	CheckoutSession struct {
		Items []HandoffItem `json:"items" jsonschema:"The items to buy."`
	} `json:"checkout_session"`
}

// RefineSchema bounds the items as the handler checks them.
func (HandoffArgs) RefineSchema(s *jsonschema.Schema) {
	items := s.Properties["checkout_session"].Properties["items"]
	items.MinItems, items.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(maxHandoffItems)
	items.Items.Properties["offerId"].MaxLength = jsonschema.Ptr(200)
}

// handoffTool is checkout_session.
func (w *Widgets) handoffTool() shop.Tool {
	return shop.NewTool(shop.Tool{
		Name:  HandoffTool,
		Title: "Check out products",
		Auth:  shop.AuthRequirement{Scopes: []string{shop.ScopePayments}, Optional: true},
		Description: "ChatGPT's product checkout: make a checkout session of checkout_session.items (id: a variant id from the product feed, " +
			"quantity) and show it in the checkout widget, where the buyer adds the address, chooses shipping and pays. " +
			"Answers the CheckoutSession. Errors: missing or invalid items (an unknown id names it).",
		Meta: toolMeta(HandoffURI, "Opening the checkout…", "Checkout ready"),
	}, w.checkoutSession)
}

func (w *Widgets) checkoutSession(ctx context.Context, args HandoffArgs) (*checkout.Session, string, error) {
	in := args.CheckoutSession.Items
	if len(in) == 0 {
		return nil, "", shop.Errorf(shop.Missing, "$.checkout_session.items", `send the items, such as [{"id": "enamel-camp-mug-slate", "quantity": 1}]`)
	}
	if len(in) > maxHandoffItems {
		return nil, "", shop.Errorf(shop.Invalid, "$.checkout_session.items", "send at most %d items", maxHandoffItems)
	}
	items := make([]checkout.Item, len(in))
	for i, it := range in {
		if len(it.OfferID) > 200 {
			return nil, "", shop.Errorf(shop.Invalid, fmt.Sprintf("$.checkout_session.items[%d].offerId", i), "at most 200 characters")
		}
		items[i] = checkout.Item{ID: it.ID, Quantity: it.Quantity}
		if it.Quantity == 0 {
			items[i].Quantity = 1 // the contract's default; a negative one is refused by checkout, naming the field
		}
	}
	s, err := w.checkout.Create(ctx, checkout.Request{Items: &items})
	if err != nil {
		return nil, "", handoffPath(err)
	}
	return s, checkoutText(s, w.checkout.SheetEnabled()), nil
}

// handoffPath names the handoff's own field where checkout names $.items.
func handoffPath(err error) error {
	var e *shop.Error
	if !errors.As(err, &e) || !strings.HasPrefix(e.Param, "$.items") {
		return err
	}
	return &shop.Error{Code: e.Code, Param: "$.checkout_session.items" + strings.TrimPrefix(e.Param, "$.items"), Message: e.Message}
}
