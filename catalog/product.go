package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/segmentio/encoding/json"
	"gorm.io/gorm"

	"shop"
	"shop/database"
)

// Categories returns the catalog's categories, sorted.
func (c *Catalog) Categories(ctx context.Context) ([]string, error) {
	var cats []string
	err := c.db.WithContext(ctx).Model(&productRow{}).Distinct("category").Order("category").Pluck("category", &cats).Error
	if err != nil {
		return nil, fmt.Errorf("list categories: %w", err)
	}
	return cats, nil
}

// Product returns a product with its variants.
//
// Errors: invalid ($.product_id), not_found.
func (c *Catalog) Product(ctx context.Context, id string) (*Product, error) {
	if id == "" {
		return nil, shop.Errorf(shop.Missing, "$.product_id", "send the id of a product, as search_products lists it")
	}
	if !ValidID(id) {
		return nil, shop.Errorf(shop.Invalid, "$.product_id", "not a product id; send an id as search_products lists it")
	}
	var row productRow
	err := c.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, shop.Errorf(shop.NotFound, "$.product_id", "no product has id %q; find ids with search_products", id)
	}
	if err != nil {
		return nil, fmt.Errorf("get product %s: %w", id, err)
	}
	products, err := c.withVariants(ctx, []productRow{row})
	if err != nil {
		return nil, fmt.Errorf("get product %s: %w", id, err)
	}
	return products[0], nil
}

func (c *Catalog) images(stored string) []string {
	var refs []string
	_ = json.Unmarshal([]byte(stored), &refs) // written by Import from a []string
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, c.imageURL(r))
	}
	return out
}

// firstImage is the URL of the first image of a stored list, or "". A
// list as Import writes it (["/static/…", …]) is read without decoding the
// rest of it; anything with escapes is decoded whole.
func (c *Catalog) firstImage(stored string) string {
	if rest, ok := strings.CutPrefix(stored, `["`); ok {
		if end := strings.IndexByte(rest, '"'); end >= 0 && !strings.Contains(rest[:end], `\`) {
			return c.imageURL(rest[:end])
		}
	}
	if imgs := c.images(stored); len(imgs) > 0 {
		return imgs[0]
	}
	return ""
}

// heldOn sums the live holds on the given variants.
func (c *Catalog) heldOn(ctx context.Context, variants []variantRow) (map[string]int64, error) {
	ids := make([]string, len(variants))
	for i, v := range variants {
		ids[i] = v.ID
	}
	args := append(database.Strings(make([]any, 0, len(ids)+1), ids), c.now().UTC())
	held, err := database.Counts(database.Query(c.db.WithContext(ctx),
		"SELECT variant_id, SUM(quantity) FROM stock_holds WHERE variant_id IN ("+database.In(len(ids))+") AND expires_at > ? GROUP BY variant_id", args...))
	if err != nil {
		return nil, fmt.Errorf("sum stock holds: %w", err)
	}
	return held, nil
}
