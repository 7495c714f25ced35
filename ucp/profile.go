package ucp

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// Version is the UCP release the shop speaks.
const Version = "2026-04-08"

// The capabilities the shop implements, and the service they are served by.
const (
	ServiceShopping      = "dev.ucp.shopping"
	CapCheckout          = "dev.ucp.shopping.checkout"
	CapFulfillment       = "dev.ucp.shopping.fulfillment"
	CapDiscount          = "dev.ucp.shopping.discount"
	CapCart              = "dev.ucp.shopping.cart"
	CapOrder             = "dev.ucp.shopping.order"
	CapCatalogSearch     = "dev.ucp.shopping.catalog.search"
	CapCatalogLookup     = "dev.ucp.shopping.catalog.lookup"
	specBase             = "https://ucp.dev/" + Version
	handlerStripe        = "com.stripe.payment_method"
	handlerSandbox       = "dev.shop.sandbox"
	handlerStripeID      = "stripe_card"
	handlerSandboxID     = "sandbox_card"
	profileMaxAgeSeconds = "300"
)

// capability is one the shop offers: its name, the capabilities it extends
// (none for a root), and the documents that define it.
type capability struct {
	name    string
	extends []string
	spec    string
	schema  string
}

// capabilities are the shop's, roots first.
var capabilities = []capability{
	{CapCatalogSearch, nil, "/specification/catalog/search", "/schemas/shopping/catalog_search.json"},
	{CapCatalogLookup, nil, "/specification/catalog/lookup", "/schemas/shopping/catalog_lookup.json"},
	{CapCart, nil, "/specification/cart", "/schemas/shopping/cart.json"},
	{CapCheckout, nil, "/specification/checkout", "/schemas/shopping/checkout.json"},
	{CapOrder, nil, "/specification/order", "/schemas/shopping/order.json"},
	{CapFulfillment, []string{CapCheckout}, "/specification/fulfillment", "/schemas/shopping/fulfillment.json"},
	{CapDiscount, []string{CapCheckout, CapCart}, "/specification/discount", "/schemas/shopping/discount.json"},
}

// BusinessProfile is the document served at /.well-known/ucp.
type BusinessProfile struct {
	UCP struct {
		Version         string                      `json:"version"`
		Services        map[string][]map[string]any `json:"services"`
		Capabilities    map[string][]map[string]any `json:"capabilities"`
		PaymentHandlers map[string][]profileHandler `json:"payment_handlers"`
	} `json:"ucp"`
}

type profileHandler struct {
	Handler
	Schema string `json:"schema,omitempty"`
}

// Profile is the shop's business profile: release Version, the shopping
// service over MCP at the shop's /ucp/mcp, its capabilities and payment
// handlers.
func (u *UCP) Profile() BusinessProfile {
	var p BusinessProfile
	p.UCP.Version = Version
	p.UCP.Services = map[string][]map[string]any{ServiceShopping: {{
		"version":   Version,
		"spec":      specBase + "/specification/overview",
		"transport": "mcp",
		"schema":    specBase + "/services/shopping/mcp.openrpc.json",
		"endpoint":  u.publicURL + "/ucp/mcp",
	}}}
	p.UCP.Capabilities = map[string][]map[string]any{}
	for _, c := range capabilities {
		e := map[string]any{"version": Version, "spec": specBase + c.spec, "schema": specBase + c.schema}
		switch len(c.extends) {
		case 0:
		case 1:
			e["extends"] = c.extends[0]
		default:
			e["extends"] = c.extends
		}
		p.UCP.Capabilities[c.name] = []map[string]any{e}
	}
	p.UCP.PaymentHandlers = map[string][]profileHandler{}
	for name, hs := range u.handlers() {
		for _, h := range hs {
			p.UCP.PaymentHandlers[name] = append(p.UCP.PaymentHandlers[name], profileHandler{Handler: h})
		}
	}
	return p
}

// handlers are the payment handlers of the shop: a card handler for Stripe
// payment methods (the tokens Stripe's SDKs and shared payment tokens
// give), and in the sandbox a test handler taking Stripe's test payment
// methods, charged by nobody.
func (u *UCP) handlers() map[string][]Handler {
	cards := []InstrumentKind{{Type: "card"}}
	if brands := u.brands(); len(brands) > 0 {
		cards[0].Constraints = map[string]any{"brands": brands}
	}
	if u.sandbox {
		return map[string][]Handler{handlerSandbox: {{
			ID: handlerSandboxID, Version: Version, AvailableInstruments: cards,
			Config: map[string]any{
				"environment": "sandbox",
				"credential":  map[string]any{"type": "token"},
				"test_tokens": u.testTokens,
			},
		}}}
	}
	return map[string][]Handler{handlerStripe: {{
		ID: handlerStripeID, Version: Version, Spec: "https://docs.stripe.com/api/payment_methods",
		AvailableInstruments: cards,
		Config:               map[string]any{"environment": "production", "credential": map[string]any{"type": "token"}},
	}}}
}

// brands are the card brands the shop's payment provider takes.
func (u *UCP) brands() []string {
	var out []string
	for _, b := range u.cardBrands {
		out = append(out, strings.ToLower(b))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ServeHTTP serves the business profile (GET /.well-known/ucp), cacheable by
// anyone for five minutes as the specification asks.
func (u *UCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "GET the profile", http.StatusMethodNotAllowed)
		return
	}
	b, err := json.Marshal(u.Profile())
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age="+profileMaxAgeSeconds)
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Write(b)
}
