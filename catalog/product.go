package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"shop"
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

// summaries returns the summaries of the products with the given ids, in that
// order; the price is the lowest among the variants q's filters admit.
func (c *Catalog) summaries(ctx context.Context, ids []string, q Query) ([]ProductSummary, error) {
	var rows []productRow
	if err := c.db.WithContext(ctx).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("search: products: %w", err)
	}
	var variants []variantRow
	err := c.db.WithContext(ctx).Select("id", "product_id", "price", "stock").Where("product_id IN ? AND removed = ?", ids, false).Find(&variants).Error
	if err != nil {
		return nil, fmt.Errorf("search: variants: %w", err)
	}
	held, err := c.heldOn(ctx, variants)
	if err != nil {
		return nil, err
	}
	type agg struct {
		minPrice int64
		priced   bool
		inStock  bool
		variants int
	}
	aggByID := make(map[string]*agg, len(ids))
	for _, v := range variants {
		a := aggByID[v.ProductID]
		if a == nil {
			a = &agg{}
			aggByID[v.ProductID] = a
		}
		available := v.Stock - held[v.ID]
		a.variants++
		a.inStock = a.inStock || available > 0
		if q.admits(v, available) && (!a.priced || v.Price < a.minPrice) {
			a.minPrice, a.priced = v.Price, true
		}
	}
	byID := make(map[string]productRow, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	out := make([]ProductSummary, 0, len(ids))
	for _, id := range ids {
		r, ok := byID[id]
		if !ok {
			continue // deleted between the two queries
		}
		a := aggByID[id]
		if a == nil {
			a = &agg{}
		}
		s := ProductSummary{
			ID: r.ID, Title: r.Title, Category: r.Category,
			Price: c.currency.Price(a.minPrice), InStock: a.inStock, VariantCount: a.variants,
		}
		if imgs := c.images(r.Images); len(imgs) > 0 {
			s.ImageURL = imgs[0]
		}
		out = append(out, s)
	}
	return out, nil
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

// heldOn sums the live holds on the given variants.
func (c *Catalog) heldOn(ctx context.Context, variants []variantRow) (map[string]int64, error) {
	ids := make([]string, len(variants))
	for i, v := range variants {
		ids[i] = v.ID
	}
	return c.held(c.db.WithContext(ctx), "", ids)
}
