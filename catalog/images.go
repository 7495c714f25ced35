package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop/database"
)

// imageOriginRow is a row of product_image_origins: an origin that one of a
// product's absolute image URLs (its own or a variant's) loads from. The
// import writes a product's rows with the product. An empty Origin marks a
// product imported before the table existed, whose origins are not known yet
// (see ResolveImageOrigins).
type imageOriginRow struct {
	Origin    string `gorm:"primaryKey"`
	ProductID string `gorm:"primaryKey"`
}

func (imageOriginRow) TableName() string { return "product_image_origins" }

// ImageOrigin is the origin (scheme://host[:port]) of an absolute http or
// https URL, lower-cased and without the scheme's default port; "" for a
// path ("/static/…") or a URL it cannot parse.
func ImageOrigin(ref string) string {
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return ""
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if (scheme == "https" && u.Port() == "443") || (scheme == "http" && u.Port() == "80") {
		host = strings.TrimSuffix(host, ":"+u.Port())
	}
	return scheme + "://" + host
}

// imageOrigins adds the origins of refs to set.
func imageOrigins(set map[string]bool, refs ...string) {
	for _, ref := range refs {
		if o := ImageOrigin(ref); o != "" {
			set[o] = true
		}
	}
}

// originRows are the rows of product_image_origins for a product whose
// images' origins are set.
func originRows(productID string, set map[string]bool) []imageOriginRow {
	rows := make([]imageOriginRow, 0, len(set))
	for o := range set {
		rows = append(rows, imageOriginRow{Origin: o, ProductID: productID})
	}
	return rows
}

// writeImageOrigins replaces the image origins of the batch's products, in
// the import's transaction, after writeBatch wrote the products.
func writeImageOrigins(tx *gorm.DB, batch []ProductRecord) error {
	ids := make([]string, len(batch))
	var rows []imageOriginRow
	for i, p := range batch {
		ids[i] = p.ID
		set := map[string]bool{}
		imageOrigins(set, p.Images...)
		for _, v := range p.Variants {
			imageOrigins(set, v.Image)
		}
		rows = append(rows, originRows(p.ID, set)...)
	}
	if err := tx.Where("product_id IN ?", ids).Delete(&imageOriginRow{}).Error; err != nil {
		return fmt.Errorf("image origins: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	if err := tx.CreateInBatches(rows, 1000).Error; err != nil {
		return fmt.Errorf("image origins: %w", err)
	}
	return nil
}

// imageOriginsQuery reads the distinct origins of product_image_origins by
// a loose index scan: each step seeks the next origin greater than the last
// in the primary key's index, so the cost is one seek per origin however
// many products share it. Marks of products not resolved yet (an empty origin)
// are skipped. The parameter bounds the steps: at most that many origins
// and one more.
const imageOriginsQuery = `WITH RECURSIVE o (origin, n) AS (
    SELECT (SELECT origin FROM product_image_origins WHERE origin > '' ORDER BY origin LIMIT 1), 1
    UNION ALL
    SELECT (SELECT origin FROM product_image_origins WHERE origin > o.origin ORDER BY origin LIMIT 1), n + 1
    FROM o WHERE o.origin IS NOT NULL AND n <= ?
)
SELECT origin FROM o WHERE origin IS NOT NULL`

// ImageOrigins returns the distinct origins (scheme://host[:port]) of the
// catalog's absolute image URLs, products' and variants', as the database
// holds them now, sorted; at most max of them, and more reports that there
// are others. Images under /static/ are the shop's own and not among them.
func (c *Catalog) ImageOrigins(ctx context.Context, max int) (origins []string, more bool, err error) {
	if max < 1 {
		max = 1
	}
	var found []string
	if err := c.db.WithContext(ctx).Raw(imageOriginsQuery, max).Scan(&found).Error; err != nil {
		return nil, false, fmt.Errorf("image origins: %w", err)
	}
	slices.Sort(found)
	if len(found) > max {
		return found[:max], true, nil
	}
	return found, false, nil
}

// resolveBatch is how many marked products ResolveImageOrigins reads at a time.
const resolveBatch = 500

// ResolveImageOrigins computes the image origins of the products that
// migration 00009 marked (a catalog imported before the origins were kept),
// a batch per transaction, and reports how many products it resolved. Once
// none is marked it costs one index probe; running it on several replicas
// at once is harmless.
func (c *Catalog) ResolveImageOrigins(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := c.resolveOriginsBatch(ctx)
		total += n
		if err != nil || n < resolveBatch {
			return total, err
		}
	}
}

func (c *Catalog) resolveOriginsBatch(ctx context.Context) (int, error) {
	var ids []string
	err := database.Transact(database.WithClock(ctx, c.now), c.db, func(tx *gorm.DB) error {
		ids = nil
		if err := tx.Model(&imageOriginRow{}).Where("origin = ?", "").Order("product_id").Limit(resolveBatch).Pluck("product_id", &ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		var products []productRow
		if err := tx.Select("id", "images").Where("id IN ?", ids).Find(&products).Error; err != nil {
			return err
		}
		var variants []variantRow
		if err := tx.Select("product_id", "image").Where("product_id IN ? AND image <> ?", ids, "").Find(&variants).Error; err != nil {
			return err
		}
		sets := make(map[string]map[string]bool, len(products))
		for _, p := range products {
			var refs []string
			_ = json.Unmarshal([]byte(p.Images), &refs) // written by Import from a []string
			sets[p.ID] = map[string]bool{}
			imageOrigins(sets[p.ID], refs...)
		}
		for _, v := range variants {
			if set := sets[v.ProductID]; set != nil {
				imageOrigins(set, v.Image)
			}
		}
		var rows []imageOriginRow
		for id, set := range sets {
			rows = append(rows, originRows(id, set)...)
		}
		if len(rows) > 0 {
			if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, 1000).Error; err != nil {
				return err
			}
		}
		return tx.Where("origin = ? AND product_id IN ?", "", ids).Delete(&imageOriginRow{}).Error
	})
	if err != nil {
		return 0, fmt.Errorf("resolve image origins: %w", err)
	}
	return len(ids), nil
}
