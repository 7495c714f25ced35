package widgets

import (
	"context"
	"fmt"
	"time"

	"shop"
)

// Resources returns the widgets' templates: ui://shop/products-v1.html and
// ui://shop/checkout-v1.html.
// With ProductCheckout, the checkout widget is also served as
// ui://widget/checkout-session.html, the template of checkout_session.
func (w *Widgets) Resources() []shop.Resource {
	const checkoutText = "The checkout: items, shipping address, shipping options, promotion code, totals, legal links and Pay; then the receipt."
	out := []shop.Resource{
		w.resource(ProductsURI, "products", "products", "Products", "Product cards: image, title, price, availability; pick a variant and a quantity and add it to the cart."),
		w.resource(CheckoutURI, "checkout", "checkout", "Checkout", checkoutText),
	}
	if w.handoff {
		out = append(out, w.resource(HandoffURI, "checkout-session", "checkout", "Checkout", checkoutText))
	}
	return out
}

// resource is the template uri, named name, serving the built widget file.
func (w *Widgets) resource(uri, name, file, title, description string) shop.Resource {
	file = "dist/" + file + ".html"
	return shop.Resource{
		URI: uri, Name: name, Title: title, Description: description, MIMEType: MIMEType,
		Meta: w.resourceMeta([]string{w.origin}, description),
		MetaFor: func(ctx context.Context) map[string]any {
			return w.resourceMeta(w.ResourceDomains(ctx), description)
		},
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
// (CSP, border, domain) and the OpenAI Apps SDK's openai/widget* keys. The
// CSP names exactly the origins the widget loads from, domains: the shop's
// own and the catalog's image hosts (ResourceDomains, read at each list and
// read through the resource's MetaFor, so an import by any process or
// replica shows at once; Meta, with the shop's origin alone, is what a
// server without MetaFor would send). The widget reaches the shop through
// the host (tools/call), never with fetch, so it connects nowhere; the
// pages it opens are the redirect domains. The domain, when configured,
// goes under both names.
func (w *Widgets) resourceMeta(domains []string, description string) map[string]any {
	ui := map[string]any{
		"prefersBorder": true,
		"csp": map[string]any{
			"connectDomains":  []string{},
			"resourceDomains": domains,
		},
	}
	meta := map[string]any{
		"ui":                         ui,
		"openai/widgetPrefersBorder": true,
		"openai/widgetDescription":   description,
		"openai/widgetCSP": map[string]any{
			"connect_domains":  []string{},
			"resource_domains": domains,
			"redirect_domains": w.redirect,
		},
	}
	if w.domain != "" {
		ui["domain"] = w.domain
		meta["openai/widgetDomain"] = w.domain
	}
	return meta
}

// MaxImageOrigins bounds the image hosts a template's CSP names beside the
// shop's own origin; beyond it the rest are left out and a warning logged.
const MaxImageOrigins = 20

// warnEvery spaces the warnings about image hosts left out of the CSP.
const warnEvery = 10 * time.Minute

// ResourceDomains are the origins the widgets load from, as the catalog
// stands now: the shop's own first, then the distinct origins of the
// catalog's absolute image URLs, sorted, at most MaxImageOrigins of them.
// When the catalog cannot be read it logs why and answers the shop's origin
// alone, so the widget still shows, without the other hosts' images.
func (w *Widgets) ResourceDomains(ctx context.Context) []string {
	domains := []string{w.origin}
	if w.catalog == nil {
		return domains
	}
	origins, more, err := w.catalog.ImageOrigins(ctx, MaxImageOrigins)
	if err != nil {
		w.logger.ErrorContext(ctx, "widget CSP: cannot read the catalog's image hosts; naming the shop's origin alone", "err", err)
		return domains
	}
	for _, o := range origins {
		if o != w.origin {
			domains = append(domains, o)
		}
	}
	if more {
		now := time.Now().Unix()
		if last := w.warned.Load(); now-last >= int64(warnEvery/time.Second) && w.warned.CompareAndSwap(last, now) {
			w.logger.WarnContext(ctx, "widget CSP: the catalog's images come from more hosts than the CSP names; images from the others will not show in the widgets",
				"max", MaxImageOrigins, "named", domains[1:])
		}
	}
	return domains
}
