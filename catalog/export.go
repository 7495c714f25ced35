package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// The whole catalog, read out for what publishes it (the product feed), and
// the two things that tell whether what was read out is still the catalog:
// its version, which every import raises in its transaction, and the
// variants that cannot be bought now, which stock changes and holds move.

// exportPage is how many products Each reads at a time.
const exportPage = 500

// versionRow is the one row of catalog_version.
type versionRow struct {
	ID        int `gorm:"primaryKey"`
	Version   int64
	ChangedAt time.Time
}

func (versionRow) TableName() string { return "catalog_version" }

// bumpVersion raises the catalog's version, in the transaction that changes
// its products.
func bumpVersion(tx *gorm.DB, now time.Time) error {
	err := tx.Model(&versionRow{}).Where("id = ?", 1).
		Updates(map[string]any{"version": gorm.Expr("version + 1"), "changed_at": now}).Error
	if err != nil {
		return fmt.Errorf("raise the catalog version: %w", err)
	}
	return nil
}

// Version is the catalog's version: it changes whenever an import changes
// its products (titles, descriptions, images, variants, prices, stock as
// the file has it), and only then, and it is the same for every replica.
// The stock that checkout takes, restocks and holds does not change it:
// SoldOut follows that.
func (c *Catalog) Version(ctx context.Context) (int64, time.Time, error) {
	var v versionRow
	if err := c.db.WithContext(ctx).Take(&v, 1).Error; err != nil {
		return 0, time.Time{}, fmt.Errorf("read the catalog version: %w", err)
	}
	return v.Version, v.ChangedAt, nil
}

// SoldOut returns the ids of the variants for sale of which no unit is
// available now (stock on hand minus live holds), in id order.
func (c *Catalog) SoldOut(ctx context.Context) ([]string, error) {
	var ids []string
	held := c.db.Model(&holdRow{}).Select("variant_id, SUM(quantity) AS units").
		Where("expires_at > ?", c.now().UTC()).Group("variant_id")
	err := c.db.WithContext(ctx).Table("variants v").
		Joins("LEFT JOIN (?) h ON h.variant_id = v.id", held).
		Where("v.removed = ? AND v.stock - COALESCE(h.units, 0) <= 0", false).
		Order("v.id").Pluck("v.id", &ids).Error
	if err != nil {
		return nil, fmt.Errorf("list sold-out variants: %w", err)
	}
	return ids, nil
}

// Each calls fn with every product of the catalog and its variants for
// sale, in the order they were first imported, as get_product shows them
// (Available counts live holds). A product without a variant for sale is
// left out. It stops at fn's first error and returns it.
func (c *Catalog) Each(ctx context.Context, fn func(*Product) error) error {
	var after int64
	for {
		var rows []productRow
		err := c.db.WithContext(ctx).Where("seq > ?", after).Order("seq").Limit(exportPage).Find(&rows).Error
		if err != nil {
			return fmt.Errorf("read products: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		after = rows[len(rows)-1].Seq
		products, err := c.withVariants(ctx, rows)
		if err != nil {
			return err
		}
		for _, p := range products {
			if len(p.Variants) == 0 {
				continue
			}
			if err := fn(p); err != nil {
				return err
			}
		}
	}
}

// withVariants turns rows into products with their variants for sale (none
// for a product that has none).
func (c *Catalog) withVariants(ctx context.Context, rows []productRow) ([]*Product, error) {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var vrows []variantRow
	err := c.db.WithContext(ctx).Where("product_id IN ? AND removed = ?", ids, false).Order("product_id, position").Find(&vrows).Error
	if err != nil {
		return nil, fmt.Errorf("read variants: %w", err)
	}
	held, err := c.heldOn(ctx, vrows)
	if err != nil {
		return nil, err
	}
	byProduct := make(map[string][]Variant, len(rows))
	for _, v := range vrows {
		var opts map[string]string
		if err := json.Unmarshal([]byte(v.Options), &opts); err != nil {
			return nil, fmt.Errorf("variant %s options: %w", v.ID, err)
		}
		variant := Variant{ID: v.ID, Title: v.Title, Options: opts, Price: c.currency.Price(v.Price), Available: max(0, v.Stock-held[v.ID])}
		if v.Image != "" {
			variant.ImageURL = c.imageURL(v.Image)
		}
		byProduct[v.ProductID] = append(byProduct[v.ProductID], variant)
	}
	out := make([]*Product, 0, len(rows))
	for _, r := range rows {
		p := &Product{ID: r.ID, Title: r.Title, Description: r.Description, Category: r.Category, Images: c.images(r.Images), Variants: byProduct[r.ID]}
		if p.Variants == nil {
			p.Variants = []Variant{}
		}
		for i, v := range p.Variants {
			if i == 0 || v.Price.Amount < p.PriceRange.Min.Amount {
				p.PriceRange.Min = v.Price
			}
			if i == 0 || v.Price.Amount > p.PriceRange.Max.Amount {
				p.PriceRange.Max = v.Price
			}
		}
		out = append(out, p)
	}
	return out, nil
}
