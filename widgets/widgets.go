// Package widgets serves the shop's UI inside ChatGPT and other MCP Apps
// hosts: two HTML templates (resources) and the render tools that show them.
//
// The templates are built from web/ (TypeScript) by esbuild into one
// self-contained HTML file each under dist/, which is committed and embedded
// here, so building the shop needs no Node. render_products shows products
// as cards the buyer adds to a cart; render_checkout shows a checkout
// session the buyer completes and pays through the host's payment sheet.
// Both carry the metadata of the MCP Apps extension and of the OpenAI Apps
// SDK (docs/buying.md), so every host finds its template.
package widgets

import (
	"embed"
	"log/slog"
	"slices"
	"sync/atomic"

	"shop/catalog"
	"shop/checkout"
)

// dist holds the built widgets (web/build.mjs writes them).
//
//go:embed dist/products.html dist/checkout.html
var dist embed.FS

// The widgets' template URIs. A template URI is a cache key: an
// incompatible change of a widget ships under a new one (-v2).
const (
	ProductsURI = "ui://shop/products-v1.html"
	CheckoutURI = "ui://shop/checkout-v1.html"
)

// MIMEType is the MIME type of an MCP Apps HTML template.
const MIMEType = "text/html;profile=mcp-app"

// MaxProducts bounds render_products' product_ids.
const MaxProducts = 20

// Widgets are the shop's widgets over its catalog and checkout.
type Widgets struct {
	checkout *checkout.Checkout
	catalog  *catalog.Catalog
	origin   string
	domain   string
	redirect []string
	logger   *slog.Logger
	handoff  bool         // Options.ProductCheckout
	warned   atomic.Int64 // when the CSP last dropped image origins (unix seconds)
}

// Options configure the widgets; nil means defaults.
type Options struct {
	// PublicURL is the shop's base URL; its origin is the one the widgets
	// load the shop's own images (/static/) from, the first their CSP names;
	// the catalog's image hosts follow. Default catalog.DefaultPublicURL.
	PublicURL string
	// Domain is the widgets' own origin in the host (_meta.ui.domain and
	// openai/widgetDomain), which ChatGPT requires, unique per app, to list
	// an app in its directory; "" leaves both keys out and the host chooses.
	// It is sent as it is: its form is the host's (ChatGPT's is an https
	// origin such as https://shop.example.com).
	Domain string
	// RedirectDomains are the origins, beside the shop's own, of pages the
	// widgets open (openExternal, ui/open-link): Stripe Checkout's and the
	// legal pages' hosts (openai/widgetCSP.redirect_domains).
	RedirectDomains []string
	// ProductCheckout offers ChatGPT's product checkout conversion
	// contract: the tool checkout_session and its template (handoff.go).
	ProductCheckout bool
	// Logger receives the CSP's warnings: image hosts beyond
	// MaxImageOrigins, or a failure to read them (the CSP then names the
	// shop's origin alone); nil discards them.
	Logger *slog.Logger
}

// New returns the widgets of a shop.
func New(co *checkout.Checkout, cat *catalog.Catalog, opts *Options) *Widgets {
	public, logger := catalog.DefaultPublicURL, slog.New(slog.DiscardHandler)
	if opts != nil && opts.PublicURL != "" {
		public = opts.PublicURL
	}
	if opts != nil && opts.Logger != nil {
		logger = opts.Logger
	}
	w := &Widgets{checkout: co, catalog: cat, origin: origin(public), logger: logger}
	w.redirect = []string{w.origin}
	if opts != nil {
		w.domain, w.handoff = opts.Domain, opts.ProductCheckout
		for _, d := range opts.RedirectDomains {
			if o := catalog.ImageOrigin(d); o != "" && !slices.Contains(w.redirect, o) {
				w.redirect = append(w.redirect, o)
			}
		}
	}
	return w
}

// origin is the scheme and host of the shop's base URL
// ("https://shop.example.com"), in the form catalog.ImageOrigin gives the
// catalog's image hosts, so that the CSP compares like with like.
func origin(raw string) string {
	if o := catalog.ImageOrigin(raw); o != "" {
		return o
	}
	return catalog.ImageOrigin(catalog.DefaultPublicURL)
}

// Origin is the shop's own origin, which the widgets load its /static/
// images from.
func (w *Widgets) Origin() string { return w.origin }
