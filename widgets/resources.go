package widgets

import (
	"context"
	"fmt"

	"shop"
)

// Resources returns the widgets' templates: ui://shop/products-v1.html and
// ui://shop/checkout-v1.html.
func (w *Widgets) Resources() []shop.Resource {
	return []shop.Resource{
		w.resource(ProductsURI, "products", "Products", "Product cards: image, title, price, availability; pick a variant and a quantity and add it to the cart."),
		w.resource(CheckoutURI, "checkout", "Checkout", "The checkout: items, shipping address, shipping options, promotion code, totals, legal links and Pay; then the receipt."),
	}
}

func (w *Widgets) resource(uri, name, title, description string) shop.Resource {
	file := "dist/" + name + ".html"
	return shop.Resource{
		URI: uri, Name: name, Title: title, Description: description, MIMEType: MIMEType,
		Meta: w.resourceMeta(description),
		Read: func(context.Context) (string, error) {
			b, err := dist.ReadFile(file)
			if err != nil {
				return "", fmt.Errorf("widget %s: %w", file, err)
			}
			return string(b), nil
		},
	}
}

// resourceMeta is a template's _meta in both conventions: MCP Apps' ui
// (CSP and border) and the OpenAI Apps SDK's openai/widget* keys. The CSP
// names exactly the origins the widget loads from: the shop's own, for
// images. The widget reaches the shop through the host (tools/call), never
// with fetch, so it connects nowhere.
func (w *Widgets) resourceMeta(description string) map[string]any {
	resources := []string{w.origin}
	return map[string]any{
		"ui": map[string]any{
			"prefersBorder": true,
			"csp": map[string]any{
				"connectDomains":  []string{},
				"resourceDomains": resources,
			},
		},
		"openai/widgetPrefersBorder": true,
		"openai/widgetDescription":   description,
		"openai/widgetCSP": map[string]any{
			"connect_domains":  []string{},
			"resource_domains": resources,
		},
	}
}
