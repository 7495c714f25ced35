package ucp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"shop"
	"shop/catalog"
)

// maxLookupIDs bounds a lookup, as the catalog's search limit does a page;
// past it a lookup is request_too_large (HTTP 400, JSON-RPC -32602).
const maxLookupIDs = 50

// maxSearchLimit is the largest page of a search; a larger limit is
// clamped to it, as the specification allows.
const maxSearchLimit = 50

// SearchArgs are search_catalog's arguments.
type SearchArgs struct {
	Meta    Meta `json:"meta"`
	Catalog struct {
		Query   string          `json:"query,omitempty" jsonschema:"What the buyer looks for."`
		Context json.RawMessage `json:"context,omitempty"`
		Filters *struct {
			Categories []string `json:"categories,omitempty" jsonschema:"Categories to search (the first is used)."`
			Price      *struct {
				Min *int64 `json:"min,omitempty" jsonschema:"Lowest price, minor units."`
				Max *int64 `json:"max,omitempty" jsonschema:"Highest price, minor units."`
			} `json:"price,omitempty"`
			Available *bool `json:"available,omitempty" jsonschema:"true: only products that can be bought now."`
		} `json:"filters,omitempty"`
		Pagination *struct {
			Cursor string `json:"cursor,omitempty"`
			Limit  int    `json:"limit,omitempty" jsonschema:"Products per page, 1 to 50 (default 10)."`
		} `json:"pagination,omitempty"`
	} `json:"catalog"`
}

// LookupArgs are lookup_catalog's arguments.
type LookupArgs struct {
	Meta    Meta `json:"meta"`
	Catalog struct {
		IDs     []string        `json:"ids" jsonschema:"Product or variant ids, at most 50."`
		Context json.RawMessage `json:"context,omitempty"`
	} `json:"catalog"`
}

// ProductArgs are get_product's arguments.
type ProductArgs struct {
	Meta    Meta `json:"meta"`
	Catalog struct {
		ID       string           `json:"id" jsonschema:"A product or variant id."`
		Selected []SelectedOption `json:"selected,omitempty" jsonschema:"Option selections so far, such as [{name: Colour, label: Slate}]; ignored with a variant id."`
		// Preferences are option names in the order they are relaxed from
		// the end when no variant matches every selection.
		Preferences []string        `json:"preferences,omitempty" jsonschema:"Option names, the last relaxed first when no variant matches every selection."`
		Context     json.RawMessage `json:"context,omitempty"`
	} `json:"catalog"`
}

// SearchResult, LookupResult and ProductResult are the catalog tools'
// answers, or an error response.
type (
	SearchResult struct {
		shop.OneOf
		Response *SearchResponse
		Error    *ErrorResponse
	}
	LookupResult struct {
		shop.OneOf
		Response *LookupResponse
		Error    *ErrorResponse
	}
	ProductResult struct {
		shop.OneOf
		Response *ProductResponse
		Error    *ErrorResponse
	}
)

func (u *UCP) catalogTools() []shop.Tool {
	return []shop.Tool{
		shop.NewTool(shop.Tool{
			Name: "search_catalog", Title: "Search the catalog", ReadOnly: true, Idempotent: true,
			Description: "Search the shop's products by query text, with filters (categories, price min/max in minor units, available) " +
				"and pagination (limit, cursor). Each product has its variants, whose ids are what carts and checkouts buy.",
		}, u.search),
		shop.NewTool(shop.Tool{
			Name: "lookup_catalog", Title: "Look up products", ReadOnly: true, Idempotent: true,
			Description: "Get products by id (product or variant ids, at most 50) with their current prices and availability; " +
				"ids that match nothing are left out. Each variant says which input id it answers.",
		}, u.lookup),
		shop.NewTool(shop.Tool{
			Name: "get_product", Title: "Get a product", ReadOnly: true, Idempotent: true,
			Description: "Get one product (by product or variant id) with its options (Size, Colour: each value says whether it exists and is " +
				"available with the other selections), selected (the effective selections) and variants, the featured first: a variant id " +
				"is featured and determines the selections; selected and preferences narrow a product's.",
		}, u.product),
		u.orderTool(),
	}
}

func (u *UCP) search(ctx context.Context, args SearchArgs) (SearchResult, string, error) {
	c, refused, err := u.begin(ctx, args.Meta, CapCatalogSearch)
	if err != nil || refused != nil {
		return SearchResult{Error: refused}, "", err
	}
	if err := searchInput(args); err != nil {
		return u.searchRefusal(c, err, func(p string) string { return p })
	}
	q := catalog.Query{Text: args.Catalog.Query, Limit: 10}
	if f := args.Catalog.Filters; f != nil {
		if len(f.Categories) > 0 {
			q.Category = f.Categories[0]
		}
		if f.Price != nil {
			q.MinPrice, q.MaxPrice = f.Price.Min, f.Price.Max
		}
		q.InStockOnly = f.Available != nil && *f.Available
	}
	if p := args.Catalog.Pagination; p != nil {
		q.Cursor = p.Cursor
		if p.Limit != 0 {
			q.Limit = min(p.Limit, maxSearchLimit)
		}
	}
	page, err := u.catalog.Search(ctx, q)
	if err != nil {
		return u.searchRefusal(c, err, searchPath)
	}
	out := &SearchResponse{UCP: u.envelope(c, CapCatalogSearch), Products: []Product{},
		Pagination: &Pagination{Cursor: page.NextCursor, HasNextPage: page.NextCursor != "", TotalCount: page.Total}}
	for _, s := range page.Products {
		p, err := u.catalog.Product(ctx, s.ID)
		if shop.ErrorCode(err) == shop.NotFound {
			continue // removed since the search
		}
		if err != nil {
			return SearchResult{}, "", err
		}
		out.Products = append(out.Products, u.toProduct(p))
	}
	if current(c.version) {
		out.Policies = u.returnPolicy()
	}
	return SearchResult{Response: out}, "", nil
}

func (u *UCP) searchRefusal(c *call, err error, paths func(string) string) (SearchResult, string, error) {
	refused, err := u.refusal(c, err, paths)
	return SearchResult{Error: refused}, "", err
}

// searchPath is the UCP path of a search argument the catalog refused.
func searchPath(p string) string {
	switch p {
	case "$.query":
		return "$.catalog.query"
	case "$.category":
		return "$.catalog.filters.categories[0]"
	case "$.min_price":
		return "$.catalog.filters.price.min"
	case "$.max_price":
		return "$.catalog.filters.price.max"
	case "$.limit":
		return "$.catalog.pagination.limit"
	case "$.cursor":
		return "$.catalog.pagination.cursor"
	}
	return p
}

// products finds the products ids name (product ids, or variant ids of
// them), in the order first named, each with the ids that found it.
func (u *UCP) products(ctx context.Context, ids []string) ([]*catalog.Product, map[string][]string, error) {
	byVariant, err := u.catalog.Items(ctx, nil, ids)
	if err != nil {
		return nil, nil, err
	}
	var out []*catalog.Product
	inputs := map[string][]string{} // product or variant id -> the input ids naming it
	seen := map[string]bool{}
	for _, id := range ids {
		pid := id
		if it, ok := byVariant[id]; ok {
			pid = it.ProductID
		}
		inputs[id] = append(inputs[id], id)
		if seen[pid] {
			continue
		}
		p, err := u.catalog.Product(ctx, pid)
		if shop.ErrorCode(err) == shop.NotFound || shop.ErrorCode(err) == shop.Invalid {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		seen[pid] = true
		out = append(out, p)
	}
	return out, inputs, nil
}

func (u *UCP) lookup(ctx context.Context, args LookupArgs) (LookupResult, string, error) {
	c, refused, err := u.begin(ctx, args.Meta, CapCatalogLookup)
	if err != nil || refused != nil {
		return LookupResult{Error: refused}, "", err
	}
	fail := func(err error) (LookupResult, string, error) {
		refused, err := u.refusal(c, err, nil)
		return LookupResult{Error: refused}, "", err
	}
	ids := args.Catalog.IDs
	switch {
	case len(ids) == 0:
		return fail(shop.Errorf(shop.Missing, "$.catalog.ids", "send the product or variant ids to look up"))
	case len(ids) > maxLookupIDs:
		return LookupResult{}, "", protocolError(-32602, "Invalid params", "request_too_large",
			fmt.Sprintf("%d ids: this business looks up at most %d per request; send them in batches", len(ids), maxLookupIDs),
			map[string]any{"path": "$.catalog.ids"})
	}
	for i, id := range ids {
		if !catalog.ValidID(id) {
			return fail(shop.Errorf(shop.Invalid, fmt.Sprintf("$.catalog.ids[%d]", i), "not a product or variant id"))
		}
	}
	found, inputs, err := u.products(ctx, ids)
	if err != nil {
		return LookupResult{}, "", err
	}
	out := &LookupResponse{UCP: u.envelope(c, CapCatalogLookup), Products: []Product{}}
	for _, p := range found {
		prod := u.toProduct(p)
		for i, v := range prod.Variants {
			// Every variant answers the product's id; a variant named by
			// its own id answers that too.
			for _, in := range append(inputs[p.ID], inputs[v.ID]...) {
				match := "exact"
				if in == p.ID {
					match = "featured"
				}
				prod.Variants[i].Inputs = append(prod.Variants[i].Inputs, InputCorrelation{ID: in, Match: match})
			}
		}
		// A lookup answers only the variants some input named.
		kept := prod.Variants[:0]
		for _, v := range prod.Variants {
			if len(v.Inputs) > 0 {
				kept = append(kept, v)
			}
		}
		prod.Variants = kept
		featureNamed(&prod, ids)
		out.Products = append(out.Products, prod)
	}
	if current(c.version) {
		out.Policies = u.returnPolicy()
	}
	return LookupResult{Response: out}, "", nil
}

func (u *UCP) product(ctx context.Context, args ProductArgs) (ProductResult, string, error) {
	c, refused, err := u.begin(ctx, args.Meta, CapCatalogLookup)
	if err != nil || refused != nil {
		return ProductResult{Error: refused}, "", err
	}
	fail := func(err error) (ProductResult, string, error) {
		refused, err := u.refusal(c, err, func(string) string { return "$.catalog.id" })
		return ProductResult{Error: refused}, "", err
	}
	id := strings.TrimSpace(args.Catalog.ID)
	if !catalog.ValidID(id) {
		return fail(shop.Errorf(shop.Invalid, "$.catalog.id", "send a product or variant id from search_catalog"))
	}
	found, _, err := u.products(ctx, []string{id})
	if err != nil {
		return ProductResult{}, "", err
	}
	if len(found) == 0 {
		return fail(shop.Errorf(shop.NotFound, "$.catalog.id", "no product or variant has id %q; find ids with search_catalog", id))
	}
	prod := u.toProduct(found[0])
	variantID := ""
	if id != found[0].ID {
		variantID = id
	}
	selectVariant(&prod, variantID, args.Catalog.Selected, args.Catalog.Preferences)
	out := &ProductResponse{UCP: u.envelope(c, CapCatalogLookup), Product: prod}
	if current(c.version) {
		out.Policies = u.returnPolicy()
	}
	return ProductResult{Response: out}, "", nil
}

// toProduct is a product of the catalog as UCP shows it.
func (u *UCP) toProduct(p *catalog.Product) Product {
	cur := strings.ToUpper(u.catalog.Currency().Code())
	out := Product{ID: p.ID, Title: p.Title, Description: Description{Plain: p.Description},
		PriceRange: PriceRange{Min: Price{p.PriceRange.Min.Amount, cur}, Max: Price{p.PriceRange.Max.Amount, cur}}}
	if p.Category != "" {
		out.Categories = []Category{{Value: p.Category}}
	}
	for _, img := range p.Images {
		out.Media = append(out.Media, Media{Type: "image", URL: img})
	}
	for _, v := range p.Variants {
		desc := p.Title
		if v.Title != "" {
			desc += " — " + v.Title
		}
		uv := Variant{ID: v.ID, Title: v.Title, Description: Description{Plain: desc}, Price: Price{v.Price.Amount, cur},
			Availability: &Availability{Available: v.Available > 0}}
		if uv.Title == "" {
			uv.Title = p.Title
		}
		for _, name := range slices.Sorted(maps.Keys(v.Options)) {
			uv.Options = append(uv.Options, SelectedOption{Name: name, Label: v.Options[name]})
		}
		if v.ImageURL != "" {
			uv.Media = []Media{{Type: "image", URL: v.ImageURL}}
		}
		out.Variants = append(out.Variants, uv)
	}
	out.Options = productOptions(out.Variants)
	return out
}

// searchInput checks that a search has at least one input, as the
// specification requires: a query that is not blank, or a filter.
func searchInput(args SearchArgs) error {
	f := args.Catalog.Filters
	filtered := f != nil && (len(f.Categories) > 0 || f.Price != nil && (f.Price.Min != nil || f.Price.Max != nil) || f.Available != nil)
	if strings.TrimSpace(args.Catalog.Query) == "" && !filtered {
		return shop.Errorf(shop.Missing, "$.catalog.query", "send a query, or filters (categories, price, available) to browse")
	}
	return nil
}
