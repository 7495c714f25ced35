package ucp

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
)

// The UCP releases the shop speaks: Version, the current one, whose profile
// is at /.well-known/ucp, and PreviousVersion, whose profile is at
// /.well-known/ucp/PreviousVersion (the current one's supported_versions).
// Each call is answered in the release of the agent's profile.
const (
	Version         = "2026-08-25"
	PreviousVersion = "2026-04-08"
)

// supported reports whether the shop speaks release v.
func supported(v string) bool { return v == Version || v == PreviousVersion }

// current reports whether v is the current release, whose shapes differ
// from the previous one's (a card's constraints, a destination's type, …).
func current(v string) bool { return v == Version }

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

// BusinessProfile is the document served at /.well-known/ucp (release
// Version, naming the previous release's in SupportedVersions, its signing
// keys in Keys) and at /.well-known/ucp/PreviousVersion (SigningKeys).
type BusinessProfile struct {
	UCP struct {
		Version           string                      `json:"version"`
		SupportedVersions map[string]string           `json:"supported_versions,omitempty"`
		Services          map[string][]map[string]any `json:"services"`
		Capabilities      map[string][]map[string]any `json:"capabilities"`
		PaymentHandlers   map[string][]profileHandler `json:"payment_handlers"`
	} `json:"ucp"`
	Keys        []jose.JSONWebKey `json:"keys,omitempty"`
	SigningKeys []jose.JSONWebKey `json:"signing_keys,omitempty"`
}

// specBase is where release version's documents are published.
func specBase(version string) string { return "https://ucp.dev/" + version }

type profileHandler struct {
	Handler
	Schema string `json:"schema,omitempty"`
}

// Profile is the shop's business profile in release version (Version or
// PreviousVersion): the shopping service over MCP at the shop's /ucp/mcp,
// its capabilities and payment handlers, each with its version, and the
// public key the shop signs with.
func (u *UCP) Profile(version string) BusinessProfile {
	var p BusinessProfile
	base := specBase(version)
	p.UCP.Version = version
	p.UCP.Services = map[string][]map[string]any{ServiceShopping: {{
		"version":   version,
		"spec":      base + "/specification/overview",
		"transport": "mcp",
		"schema":    base + "/services/shopping/mcp.openrpc.json",
		"endpoint":  u.publicURL + "/ucp/mcp",
	}}}
	if current(version) { // the REST binding is 2026-08-25's
		p.UCP.Services[ServiceShopping] = append(p.UCP.Services[ServiceShopping], map[string]any{
			"version":   version,
			"spec":      base + "/specification/overview",
			"transport": "rest",
			"schema":    base + "/services/shopping/rest.openapi.json",
			"endpoint":  u.publicURL + RESTPath,
		})
	}
	if keys := u.publicKeys(); current(version) {
		p.UCP.SupportedVersions = map[string]string{PreviousVersion: u.publicURL + "/.well-known/ucp/" + PreviousVersion}
		p.Keys = keys
	} else {
		p.SigningKeys = keys
	}
	p.UCP.Capabilities = map[string][]map[string]any{}
	for _, c := range capabilities {
		e := map[string]any{"version": version, "spec": base + c.spec, "schema": base + c.schema}
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
	for name, hs := range u.handlers(version) {
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
func (u *UCP) handlers(version string) map[string][]Handler {
	cards := []InstrumentKind{{Type: "card"}}
	if brands := u.brands(); len(brands) > 0 {
		cards[0].Constraints = map[string]any{"brands": brands}
		if current(version) { // a constraint expression on the card's brand
			cards[0].Constraints = map[string]any{"properties": map[string]any{"brand": map[string]any{"enum": brands}}}
		}
	}
	if u.sandbox {
		return map[string][]Handler{handlerSandbox: {{
			ID: handlerSandboxID, Version: version, AvailableInstruments: cards,
			Config: map[string]any{
				"environment": "sandbox",
				"credential":  map[string]any{"type": "token"},
				"test_tokens": u.testTokens,
			},
		}}}
	}
	return map[string][]Handler{handlerStripe: {{
		ID: handlerStripeID, Version: version, Spec: "https://docs.stripe.com/api/payment_methods",
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

// ServeHTTP serves the business profile, cacheable by anyone for five
// minutes as the specification asks: release Version at GET
// /.well-known/ucp, PreviousVersion at GET /.well-known/ucp/PreviousVersion.
func (u *UCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "GET the profile", http.StatusMethodNotAllowed)
		return
	}
	version := Version
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/.well-known/ucp":
	case "/.well-known/ucp/" + PreviousVersion:
		version = PreviousVersion
	default:
		http.Error(w, "no such profile: GET /.well-known/ucp (UCP "+Version+") or /.well-known/ucp/"+PreviousVersion, http.StatusNotFound)
		return
	}
	b, err := json.Marshal(u.Profile(version))
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age="+profileMaxAgeSeconds)
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Write(b)
}
