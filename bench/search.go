package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The search scenario of `shop bench`: search_products with the catalog's
// own words and categories.

// searchScenario calls search_products with words and categories taken
// from the catalog itself, price filters and next pages.
type searchScenario struct {
	words      []string
	categories []string
}

func (s *searchScenario) unit() (string, int) { return "calls", 1 }

func (s *searchScenario) setup(ctx context.Context, c *benchClient) error {
	seenWord, seenCat := map[string]bool{}, map[string]bool{}
	err := c.browse(ctx, newRecorder(nil), map[string]any{}, func(res *mcp.CallToolResult) (bool, error) {
		for _, p := range summaries(res) {
			for _, w := range words(p.title) {
				if !seenWord[w] {
					seenWord[w] = true
					s.words = append(s.words, w)
				}
			}
			if p.category != "" && !seenCat[p.category] {
				seenCat[p.category] = true
				s.categories = append(s.categories, p.category)
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if len(s.words) == 0 || len(s.categories) == 0 {
		return fmt.Errorf("%w: the catalog has no products to search (import one: shop catalog import FILE)", errNoWork)
	}
	slices.Sort(s.words)
	slices.Sort(s.categories)
	return nil
}

// browse pages through search_products with args, 50 products a page and
// at most benchSetupPages pages, handing each page to page until it says
// there is no need of more.
func (c *benchClient) browse(ctx context.Context, r *recorder, args map[string]any, page func(*mcp.CallToolResult) (bool, error)) error {
	args["limit"] = 50
	for range benchSetupPages {
		res, ok := c.call(ctx, r, "search_products", args)
		if !ok {
			return fmt.Errorf("bench: setup: search_products: %s", r.firstError())
		}
		more, err := page(res)
		if err != nil || !more {
			return err
		}
		cursor, _ := structuredField(res, "next_cursor").(string)
		if cursor == "" {
			return nil
		}
		args["cursor"] = cursor
	}
	return nil
}

// iterate sends one of: a word (35 %), two words (15 %), a word in a
// category (15 %), a category with a price range (10 %), a word with
// in-stock only and a price cap (10 %), the next page of the client's last
// search that had one (10 %), browsing without a query (5 %).
func (s *searchScenario) iterate(ctx context.Context, c *benchClient, r *recorder) bool {
	word := func() string { return s.words[c.rng.IntN(len(s.words))] }
	category := func() string { return s.categories[c.rng.IntN(len(s.categories))] }
	var args map[string]any
	switch n := c.rng.IntN(100); {
	case n < 10 && c.cursor != "":
		args = map[string]any{"cursor": c.cursor}
		for k, v := range c.cursorArgs {
			args[k] = v
		}
	case n < 35+10:
		args = map[string]any{"query": word()}
	case n < 60:
		args = map[string]any{"query": word() + " " + word()}
	case n < 75:
		args = map[string]any{"query": word(), "category": category()}
	case n < 85:
		lo := int64(c.rng.IntN(100)) * 100
		args = map[string]any{"category": category(), "min_price": lo, "max_price": lo + 5000}
	case n < 95:
		args = map[string]any{"query": word(), "in_stock_only": true, "max_price": int64(1000 + c.rng.IntN(20000))}
	default:
		args = map[string]any{"in_stock_only": true, "limit": 20}
	}
	res, ok := c.call(ctx, r, "search_products", args)
	if !ok {
		return true
	}
	r.done()
	if next, _ := structuredField(res, "next_cursor").(string); next != "" {
		if _, paging := args["cursor"]; !paging {
			c.cursorArgs = args
		}
		c.cursor = next
	} else {
		c.cursor, c.cursorArgs = "", nil
	}
	return true
}
