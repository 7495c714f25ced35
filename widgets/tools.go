package widgets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"shop"
	"shop/catalog"
	"shop/checkout"
)

// Tools returns the render tools: render_products and render_checkout. They
// return the data their widget shows and carry its template in _meta.
func (w *Widgets) Tools() []shop.Tool {
	return []shop.Tool{
		{
			Name:  "render_products",
			Title: "Show products",
			Description: fmt.Sprintf("Show products to the buyer as cards with images, prices, availability, a variant choice and an Add to cart button. "+
				"Call search_products first and pass the ids of the 1 to %d products worth showing, best first. "+
				"The widget creates or updates the buyer's checkout session itself and tells you its id; then call render_checkout. "+
				"Answers {products: [Product]} with every variant. Errors: missing or invalid product_ids, not_found (names the id).", MaxProducts),
			InputSchema: json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "product_ids": {
      "type": "array", "minItems": 1, "maxItems": %d, "uniqueItems": true,
      "description": "Product ids from search_products, in the order to show them.",
      "items": {"type": "string", "minLength": 1, "maxLength": %d, "pattern": "^[a-z0-9][a-z0-9_-]*$"}
    }
  },
  "required": ["product_ids"]
}`, MaxProducts, catalog.MaxIDLen)),
			ReadOnly:   true,
			Idempotent: true,
			Meta:       toolMeta(ProductsURI, "Showing products…", "Products shown"),
			Handle:     w.renderProducts,
		},
		{
			Name:  "render_checkout",
			Title: "Show the checkout",
			Description: "Show a checkout session to the buyer: items with quantities, shipping address form, shipping options, promotion code, " +
				"totals, legal links and Pay (which opens the host's payment sheet); after payment, the receipt. " +
				"Call create_checkout_session first (or use the id the products widget reported) and pass its id. " +
				"Answers the CheckoutSession. Errors: missing, invalid or not_found checkout_session_id.",
			InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "checkout_session_id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The session's id (cs_…), from create_checkout_session."}
  },
  "required": ["checkout_session_id"]
}`),
			ReadOnly:   true,
			Idempotent: true,
			Meta:       toolMeta(CheckoutURI, "Opening the checkout…", "Checkout ready"),
			Handle:     w.renderCheckout,
		},
	}
}

// toolMeta is a render tool's _meta in both conventions (CONTRACT.md §3).
func toolMeta(uri, invoking, invoked string) map[string]any {
	return map[string]any{
		"ui":                             map[string]any{"resourceUri": uri},
		"ui/resourceUri":                 uri,
		"openai/outputTemplate":          uri,
		"openai/toolInvocation/invoking": invoking,
		"openai/toolInvocation/invoked":  invoked,
		"openai/widgetAccessible":        true,
	}
}

// ProductsResult is render_products' structuredContent.
type ProductsResult struct {
	Products []*catalog.Product `json:"products"`
}

type renderProductsArgs struct {
	ProductIDs []string `json:"product_ids"`
}

func (w *Widgets) renderProducts(ctx context.Context, raw json.RawMessage) (*shop.Result, error) {
	var args renderProductsArgs
	if err := shop.DecodeArgs(raw, &args); err != nil {
		return nil, err
	}
	if len(args.ProductIDs) == 0 {
		return nil, shop.Errorf(shop.Missing, "$.product_ids", "send 1 to %d product ids from search_products", MaxProducts)
	}
	if len(args.ProductIDs) > MaxProducts {
		return nil, shop.Errorf(shop.Invalid, "$.product_ids", "send at most %d product ids (got %d); show the best matches", MaxProducts, len(args.ProductIDs))
	}
	out := ProductsResult{Products: make([]*catalog.Product, 0, len(args.ProductIDs))}
	seen := map[string]bool{}
	for i, id := range args.ProductIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		p, err := w.catalog.Product(ctx, id)
		if err != nil {
			var e *shop.Error
			if errors.As(err, &e) {
				return nil, shop.Errorf(e.Code, fmt.Sprintf("$.product_ids[%d]", i), "%s", e.Message)
			}
			return nil, err
		}
		out.Products = append(out.Products, p)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Showing %d product(s) to the buyer:", len(out.Products))
	for _, p := range out.Products {
		fmt.Fprintf(&sb, "\n- %s (%s), from %s, id %s", p.Title, p.Category, p.PriceRange.Min.Display, p.ID)
	}
	return &shop.Result{Structured: out, Text: sb.String()}, nil
}

type renderCheckoutArgs struct {
	CheckoutSessionID string `json:"checkout_session_id"`
}

func (w *Widgets) renderCheckout(ctx context.Context, raw json.RawMessage) (*shop.Result, error) {
	var args renderCheckoutArgs
	if err := shop.DecodeArgs(raw, &args); err != nil {
		return nil, err
	}
	s, err := w.checkout.Get(ctx, args.CheckoutSessionID)
	if err != nil {
		return nil, err
	}
	return &shop.Result{Structured: s, Text: checkoutText(s)}, nil
}

// checkoutText is the short text of a shown session for hosts without UI.
func checkoutText(s *checkout.Session) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Showing checkout session %s (%s) to the buyer", s.ID, strings.ReplaceAll(string(s.Status), "_", " "))
	n := 0
	for _, l := range s.LineItems {
		n += int(l.Item.Quantity)
	}
	fmt.Fprintf(&sb, ": %d item(s).", n)
	for _, m := range s.Messages {
		if m.Type == checkout.MessageError {
			fmt.Fprintf(&sb, "\nTo fix (%s): %s", m.Param, m.Content)
		}
	}
	switch {
	case s.Order != nil:
		fmt.Fprintf(&sb, "\nPaid: order %d.", s.Order.Number)
	case s.Status == checkout.Ready:
		sb.WriteString("\nReady for payment: the buyer pays with the widget's Pay button.")
	}
	return sb.String()
}
