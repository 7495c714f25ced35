package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"shop"
)

// Tools returns the buyer tools over the catalog: search_products and get_product.
func (c *Catalog) Tools() []shop.Tool {
	return []shop.Tool{
		shop.NewTool(shop.Tool{
			Name:  "search_products",
			Title: "Search products",
			Description: "Search the shop's catalog. Returns product summaries, best match first, with the lowest matching price " +
				"in minor units of the currency (1250 = 12.50 USD) and whether any variant is in stock, plus total and next_cursor " +
				"for the next page. Omit query to browse. Use get_product for a product's variants (their ids go in checkout items). " +
				"Errors: invalid (names the field: query, category, min_price, max_price, limit, cursor).",
			ReadOnly:   true,
			Idempotent: true,
		}, c.searchTool),
		shop.NewTool(shop.Tool{
			Name:  "get_product",
			Title: "Get a product",
			Description: "Get one product with its description, images, price range and every variant (id, options such as size and colour, " +
				"price in minor units, units available now). A variant's id is what create_checkout_session's items take. " +
				"Errors: missing or invalid product_id, not_found.",
			ReadOnly:   true,
			Idempotent: true,
			Meta:       map[string]any{"openai/widgetAccessible": true},
		}, c.getProductTool),
	}
}

// SearchArgs are search_products' arguments.
type SearchArgs struct {
	Query       string `json:"query,omitempty" jsonschema:"Words to look for in titles, descriptions, categories and options, e.g. \"blue mug\". Every word must match."`
	Category    string `json:"category,omitempty" jsonschema:"Only products of this category (case-insensitive), e.g. \"Kitchen\"."`
	MinPrice    *int64 `json:"min_price,omitempty" jsonschema:"Lowest variant price, in minor units."`
	MaxPrice    *int64 `json:"max_price,omitempty" jsonschema:"Highest variant price, in minor units."`
	InStockOnly bool   `json:"in_stock_only,omitempty" jsonschema:"Only products with a variant in stock."`
	Limit       *int   `json:"limit,omitempty" jsonschema:"Products per page."`
	Cursor      string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page, with the same query and filters."`
}

// RefineSchema bounds the arguments as Search checks them.
func (SearchArgs) RefineSchema(s *jsonschema.Schema) {
	p := s.Properties
	p["query"].MaxLength = jsonschema.Ptr(MaxQueryLen)
	p["category"].MaxLength = jsonschema.Ptr(MaxCategoryLen)
	for _, price := range []string{"min_price", "max_price"} {
		p[price].Minimum, p[price].Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(MaxPrice))
	}
	p["in_stock_only"].Default = json.RawMessage("false")
	p["limit"].Minimum, p["limit"].Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(MaxLimit))
	p["limit"].Default = json.RawMessage(strconv.Itoa(DefaultLimit))
	p["cursor"].MaxLength = jsonschema.Ptr(maxCursorLen)
}

func (c *Catalog) searchTool(ctx context.Context, args SearchArgs) (*Page, string, error) {
	q := Query{
		Text: args.Query, Category: args.Category, MinPrice: args.MinPrice, MaxPrice: args.MaxPrice,
		InStockOnly: args.InStockOnly, Cursor: args.Cursor,
	}
	if args.Limit != nil {
		if *args.Limit == 0 {
			return nil, "", shop.Errorf(shop.Invalid, "$.limit", "must be from 1 to %d (got 0)", MaxLimit)
		}
		q.Limit = *args.Limit
	}
	page, err := c.Search(ctx, q)
	if err != nil {
		return nil, "", err
	}
	return page, searchText(args.Query, page), nil
}

func searchText(query string, page *Page) string {
	// Written without fmt, as %q and %d would: it is built on every search.
	var sb strings.Builder
	what := "products"
	if page.Total == 1 {
		what = "product" // "1 product", never "1 products"
	}
	if query != "" {
		what += " for " + strconv.Quote(query)
	}
	if len(page.Products) == 0 {
		return "No " + what + "."
	}
	sb.Grow(64 + 96*len(page.Products))
	sb.WriteString(strconv.FormatInt(page.Total, 10))
	sb.WriteString(" " + what)
	if int64(len(page.Products)) < page.Total {
		sb.WriteString(", showing " + strconv.Itoa(len(page.Products)))
	}
	sb.WriteString(":")
	for _, p := range page.Products {
		for _, part := range [...]string{"\n- ", p.Title, " (", p.Category, ", from ", p.Price.Display} {
			sb.WriteString(part)
		}
		if !p.InStock {
			sb.WriteString(", out of stock")
		}
		sb.WriteString(") id " + p.ID)
	}
	if page.NextCursor != "" {
		sb.WriteString("\nMore: pass next_cursor as cursor.")
	}
	return sb.String()
}

// ProductArgs are get_product's arguments.
type ProductArgs struct {
	ProductID string `json:"product_id" jsonschema:"A product id from search_products."`
}

// RefineSchema bounds product_id as ValidID does.
func (ProductArgs) RefineSchema(s *jsonschema.Schema) { RefineIDSchema(s.Properties["product_id"]) }

// RefineIDSchema bounds the schema of a product id as ValidID checks it.
func RefineIDSchema(s *jsonschema.Schema) {
	s.MinLength, s.MaxLength, s.Pattern = jsonschema.Ptr(1), jsonschema.Ptr(MaxIDLen), idPattern.String()
}

func (c *Catalog) getProductTool(ctx context.Context, args ProductArgs) (ProductResult, string, error) {
	p, err := c.Product(ctx, args.ProductID)
	if err != nil {
		return ProductResult{}, "", err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (%s), %s", p.Title, p.Category, p.PriceRange.Min.Display)
	if p.PriceRange.Max.Amount != p.PriceRange.Min.Amount {
		fmt.Fprintf(&sb, "–%s", p.PriceRange.Max.Display)
	}
	sb.WriteString(". Variants:")
	for _, v := range p.Variants {
		fmt.Fprintf(&sb, "\n- %s: %s, %d available, id %s", v.Title, v.Price.Display, v.Available, v.ID)
	}
	return ProductResult{Product: p}, sb.String(), nil
}
