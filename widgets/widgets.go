// Package widgets serves the shop's UI inside ChatGPT and other MCP Apps
// hosts: two HTML templates (resources) and the render tools that show them.
//
// The templates are built from web/ (TypeScript) by esbuild into one
// self-contained HTML file each under dist/, which is committed and embedded
// here, so building the shop needs no Node. render_products shows products
// as cards the buyer adds to a cart; render_checkout shows a checkout
// session the buyer completes and pays through the host's payment sheet.
// Both carry the metadata of the MCP Apps extension and of the OpenAI Apps
// SDK (CONTRACT.md §3), so every host finds its template.
package widgets

import (
	"embed"
	"net/url"

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
}

// Options configure the widgets; nil means defaults.
type Options struct {
	// PublicURL is the shop's base URL; its origin is the one the widgets
	// load images from, and the only one their CSP names. Default
	// catalog.DefaultPublicURL.
	PublicURL string
}

// New returns the widgets of a shop.
func New(co *checkout.Checkout, cat *catalog.Catalog, opts *Options) *Widgets {
	public := catalog.DefaultPublicURL
	if opts != nil && opts.PublicURL != "" {
		public = opts.PublicURL
	}
	return &Widgets{checkout: co, catalog: cat, origin: origin(public)}
}

// origin is the scheme and host of a URL ("https://shop.example.com").
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		u, _ = url.Parse(catalog.DefaultPublicURL)
	}
	return u.Scheme + "://" + u.Host
}

// Origin is the origin the widgets load images from.
func (w *Widgets) Origin() string { return w.origin }
