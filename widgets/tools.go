package widgets

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"shop"
	"shop/catalog"
	"shop/checkout"
)

// Instructions introduce the buyers' MCP server to the model, whose tools
// are the catalog's, the checkout's and the widgets': how to go from a
// search to an order ready for payment in the shop named shopName, whose
// amounts are in currency, where the widgets show it, which road to
// payment the checkout widget takes, and how a buyer pays where no widget
// is shown.
func (w *Widgets) Instructions(shopName, currency string) string {
	return fmt.Sprintf("%s sells physical goods. Search its catalog with search_products, "+
		"show details and variants with get_product, then build the buyer's order with create_checkout_session "+
		"and update_checkout_session until it is ready_for_payment. Amounts are integers in minor units of %s. "+
		"Where the host shows widgets, show products with render_products (ids from search_products) and the "+
		"checkout with render_checkout (the session's id); %s "+
		"Where no widget is shown (a host without UI), call create_payment_link for the ready session and give the buyer its url; "+
		"once they have paid, get_checkout_session shows the session completed with its order.",
		shopName, currency, w.road())
}

// road says how the checkout widget's Pay takes the buyer's money, by the
// merchant's policy: the shop's payment page unless the sheet is enabled.
func (w *Widgets) road() string {
	if w.checkout != nil && w.checkout.SheetEnabled() {
		return "the checkout widget's Pay opens the host's payment sheet where the host has one, and the shop's payment page otherwise or when the sheet fails."
	}
	return "the checkout widget's Pay opens the shop's payment page (a payment link) and shows the receipt once the buyer has paid there."
}

// Tools returns the render tools: render_products and render_checkout, and
// with ProductCheckout checkout_session. They return the data their widget
// shows and carry its template in _meta.
func (w *Widgets) Tools() []shop.Tool {
	tools := []shop.Tool{
		shop.NewTool(shop.Tool{
			Name:  "render_products",
			Title: "Show products",
			Description: fmt.Sprintf("Show products to the buyer as cards with images, prices, availability, a variant choice and an Add to cart button. "+
				"Call search_products first and pass the ids of the 1 to %d products worth showing, best first. "+
				"The widget creates or updates the buyer's checkout session itself and tells you its id; then call render_checkout. "+
				"Answers {products: [Product]} with every variant. Errors: missing or invalid product_ids, not_found (names the id).", MaxProducts),
			ReadOnly:   true,
			Idempotent: true,
			Meta:       toolMeta(ProductsURI, "Showing products…", "Products shown"),
		}, w.renderProducts),
		shop.NewTool(shop.Tool{
			Name:  "render_checkout",
			Title: "Show the checkout",
			// A linked buyer's session shows their saved cards.
			Auth: shop.AuthRequirement{Scopes: []string{shop.ScopePayments}, Optional: true},
			Description: "Show a checkout session to the buyer: items with quantities, shipping address form, shipping options, promotion code, " +
				"totals, legal links and Pay; after payment, the receipt. Pay: " + w.road() + " " +
				"Call create_checkout_session first (or use the id the products widget reported) and pass its id. " +
				"Where no widget is shown, call create_payment_link instead and give the buyer its url. " +
				"Answers the CheckoutSession. Errors: missing, invalid or not_found checkout_session_id.",
			ReadOnly:   true,
			Idempotent: true,
			Meta:       toolMeta(CheckoutURI, "Opening the checkout…", "Checkout ready"),
		}, w.renderCheckout),
	}
	if w.handoff {
		tools = append(tools, w.handoffTool())
	}
	return tools
}

// toolMeta is a render tool's _meta in both conventions (docs/buying.md).
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

// RenderProductsArgs are render_products' arguments.
type RenderProductsArgs struct {
	ProductIDs []string `json:"product_ids" jsonschema:"Product ids from search_products, in the order to show them."`
}

// RefineSchema bounds the ids as renderProducts and the catalog check them.
func (RenderProductsArgs) RefineSchema(s *jsonschema.Schema) {
	ids := s.Properties["product_ids"]
	ids.MinItems, ids.MaxItems, ids.UniqueItems = jsonschema.Ptr(1), jsonschema.Ptr(MaxProducts), true
	catalog.RefineIDSchema(ids.Items)
}

func (w *Widgets) renderProducts(ctx context.Context, args RenderProductsArgs) (ProductsResult, string, error) {
	none := ProductsResult{}
	if len(args.ProductIDs) == 0 {
		return none, "", shop.Errorf(shop.Missing, "$.product_ids", "send 1 to %d product ids from search_products", MaxProducts)
	}
	if len(args.ProductIDs) > MaxProducts {
		return none, "", shop.Errorf(shop.Invalid, "$.product_ids", "send at most %d product ids (got %d); show the best matches", MaxProducts, len(args.ProductIDs))
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
				return none, "", shop.Errorf(e.Code, fmt.Sprintf("$.product_ids[%d]", i), "%s", e.Message)
			}
			return none, "", err
		}
		out.Products = append(out.Products, p)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Showing %d product(s) to the buyer:", len(out.Products))
	for _, p := range out.Products {
		fmt.Fprintf(&sb, "\n- %s (%s), from %s, id %s", p.Title, p.Category, p.PriceRange.Min.Display, p.ID)
	}
	return out, sb.String(), nil
}

// RenderCheckoutArgs are render_checkout's arguments.
type RenderCheckoutArgs struct {
	checkout.SessionArgs
}

// RefineSchema says where the id comes from.
func (RenderCheckoutArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["checkout_session_id"].Description = "The session's id (cs_…), from create_checkout_session."
}

func (w *Widgets) renderCheckout(ctx context.Context, args RenderCheckoutArgs) (*checkout.Session, string, error) {
	s, err := w.checkout.Get(ctx, args.CheckoutSessionID)
	if err != nil {
		return nil, "", err
	}
	return s, checkoutText(s, w.checkout.SheetEnabled()), nil
}

// checkoutText is the short text of a shown session for hosts without UI:
// sheet says whether the widget's Pay takes the host's payment sheet.
func checkoutText(s *checkout.Session, sheet bool) string {
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
		if sheet {
			sb.WriteString("\nReady for payment: the buyer pays with the widget's Pay button, on the host's payment sheet (or the shop's payment page when the sheet fails).")
		} else {
			sb.WriteString("\nReady for payment: the buyer pays with the widget's Pay button, on the shop's payment page.")
		}
		sb.WriteString(" If no widget is shown, call create_payment_link and give the buyer its url.")
	}
	return sb.String()
}
