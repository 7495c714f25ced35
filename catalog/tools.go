package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"shop"
)

// Tools returns the buyer tools over the catalog: search_products and get_product.
func (c *Catalog) Tools() []shop.Tool {
	return []shop.Tool{
		{
			Name:  "search_products",
			Title: "Search products",
			Description: "Search the shop's catalog. Returns product summaries, best match first, with the lowest matching price " +
				"in minor units of the currency (1250 = 12.50 USD) and whether any variant is in stock, plus total and next_cursor " +
				"for the next page. Omit query to browse. Use get_product for a product's variants (their ids go in checkout items). " +
				"Errors: invalid (names the field: query, category, min_price, max_price, limit, cursor).",
			InputSchema: json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "maxLength": %d, "description": "Words to look for in titles, descriptions, categories and options, e.g. \"blue mug\". Every word must match."},
    "category": {"type": "string", "maxLength": %d, "description": "Only products of this category (case-insensitive), e.g. \"Kitchen\"."},
    "min_price": {"type": "integer", "minimum": 0, "maximum": %d, "description": "Lowest variant price, in minor units."},
    "max_price": {"type": "integer", "minimum": 0, "maximum": %d, "description": "Highest variant price, in minor units."},
    "in_stock_only": {"type": "boolean", "default": false, "description": "Only products with a variant in stock."},
    "limit": {"type": "integer", "minimum": 1, "maximum": %d, "default": %d, "description": "Products per page."},
    "cursor": {"type": "string", "maxLength": %d, "description": "next_cursor of the previous page, with the same query and filters."}
  }
}`, MaxQueryLen, MaxCategoryLen, int64(MaxPrice), int64(MaxPrice), MaxLimit, DefaultLimit, maxCursorLen)),
			ReadOnly:   true,
			Idempotent: true,
			Handle:     c.searchTool,
		},
		{
			Name:  "get_product",
			Title: "Get a product",
			Description: "Get one product with its description, images, price range and every variant (id, options such as size and colour, " +
				"price in minor units, units available now). A variant's id is what create_checkout_session's items take. " +
				"Errors: missing or invalid product_id, not_found.",
			InputSchema: json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "product_id": {"type": "string", "minLength": 1, "maxLength": %d, "pattern": "^[a-z0-9][a-z0-9_-]*$", "description": "A product id from search_products."}
  },
  "required": ["product_id"]
}`, MaxIDLen)),
			ReadOnly:   true,
			Idempotent: true,
			Meta:       map[string]any{"openai/widgetAccessible": true},
			Handle:     c.getProductTool,
		},
	}
}

type searchArgs struct {
	Query       string `json:"query"`
	Category    string `json:"category"`
	MinPrice    *int64 `json:"min_price"`
	MaxPrice    *int64 `json:"max_price"`
	InStockOnly bool   `json:"in_stock_only"`
	Limit       *int   `json:"limit"`
	Cursor      string `json:"cursor"`
}

func (c *Catalog) searchTool(ctx context.Context, raw json.RawMessage) (*shop.Result, error) {
	var args searchArgs
	if err := shop.DecodeArgs(raw, &args); err != nil {
		return nil, err
	}
	q := Query{
		Text: args.Query, Category: args.Category, MinPrice: args.MinPrice, MaxPrice: args.MaxPrice,
		InStockOnly: args.InStockOnly, Cursor: args.Cursor,
	}
	if args.Limit != nil {
		if *args.Limit == 0 {
			return nil, shop.Errorf(shop.Invalid, "$.limit", "must be from 1 to %d (got 0)", MaxLimit)
		}
		q.Limit = *args.Limit
	}
	page, err := c.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	return &shop.Result{Structured: page, Text: searchText(args.Query, page)}, nil
}

func searchText(query string, page *Page) string {
	var sb strings.Builder
	what := "products"
	if query != "" {
		what = fmt.Sprintf("products for %q", query)
	}
	if len(page.Products) == 0 {
		fmt.Fprintf(&sb, "No %s.", what)
		return sb.String()
	}
	fmt.Fprintf(&sb, "%d %s", page.Total, what)
	if int64(len(page.Products)) < page.Total {
		fmt.Fprintf(&sb, ", showing %d", len(page.Products))
	}
	sb.WriteString(":")
	for _, p := range page.Products {
		stock := ""
		if !p.InStock {
			stock = ", out of stock"
		}
		fmt.Fprintf(&sb, "\n- %s (%s, from %s%s) id %s", p.Title, p.Category, p.Price.Display, stock, p.ID)
	}
	if page.NextCursor != "" {
		sb.WriteString("\nMore: pass next_cursor as cursor.")
	}
	return sb.String()
}

type getProductArgs struct {
	ProductID string `json:"product_id"`
}

func (c *Catalog) getProductTool(ctx context.Context, raw json.RawMessage) (*shop.Result, error) {
	var args getProductArgs
	if err := shop.DecodeArgs(raw, &args); err != nil {
		return nil, err
	}
	p, err := c.Product(ctx, args.ProductID)
	if err != nil {
		return nil, err
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
	return &shop.Result{Structured: ProductResult{Product: p}, Text: sb.String()}, nil
}
