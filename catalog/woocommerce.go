package catalog

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// WooCommerce's product CSV export (Products → Export, woocommerce.com's
// "Product CSV Import Schema"): one row per product and one per variation.
// Type is simple, variable, variation, grouped or external (with ", virtual"
// or ", downloadable" after it); a variation names its variable product in
// Parent ("id:40", or the parent's SKU) and its options in Attribute N name
// and Attribute N value(s). Published is 1, or 0 (private) or -1 (draft).
//
// In the shop: a product's id is its SKU (made an id: makeID), else
// "woo-" and its ID; its category is the last step of the first of its
// Categories ("Clothing > Tshirts, Decor" is Tshirts). A simple product has
// one variant, its id the product's and "default"; a variation's id is its
// product's and its option values. The price is Sale price when it is below
// Regular price (and today lies within the sale's dates, when it has any),
// else Regular price. A variation without Stock counts its product's.
// Drafts, private products, disabled variations, grouped and external
// products are skipped.

// wooAttributes are the columns of a variation's attributes (names and
// values): one more than a variant may have options, to tell of it.
var wooAttributes = func() [][2]string {
	cols := make([][2]string, MaxOptions+1)
	for i := range cols {
		cols[i] = [2]string{fmt.Sprintf("attribute %d name", i+1), fmt.Sprintf("attribute %d value(s)", i+1)}
	}
	return cols
}()

// wooProduct is a simple or variable product as its rows build it.
type wooProduct struct {
	first    row
	rec      ProductRecord
	variable bool
	stock    string // the product's own Stock, which variations may share
	images   int    // how many images its row lists
	descCol  string // the column of its description
}

func readWooCommerce(s *sheet, src *Source) {
	s.require("Type", "Name", "Published", "Description", "Regular price", "Sale price", "Stock", "Categories", "Images", "Parent")
	if len(s.problems) > 0 {
		return
	}
	var order []*wooProduct
	parents := map[string]*wooProduct{} // "id:40" and SKU → product
	skippedParents := map[string]bool{}
	products := map[string]int{} // id → row
	var variations []row
	for _, r := range s.rows() {
		r.record = wooRecord(r)
		kind, _, _ := strings.Cut(strings.ToLower(r.get("type")), ",")
		switch kind = strings.TrimSpace(kind); kind {
		case "variation":
			variations = append(variations, r)
			continue
		case "grouped", "external":
			src.Skipped[kind]++
			continue
		case "simple", "variable":
		default:
			r.bad("type", "%q is not a product type the shop sells; send simple, variable or variation", r.get("type"))
			continue
		}
		keys := wooKeys(r)
		if why := wooUnpublished(r); why != "" {
			src.Skipped[why]++
			for _, k := range keys {
				skippedParents[k] = true
			}
			continue
		}
		p := newWooProduct(r, kind == "variable")
		if p == nil {
			continue
		}
		if first, dup := products[p.rec.ID]; dup {
			r.bad(idColumn(r), "makes the product id %q, as row %d does; give each product its own SKU", p.rec.ID, first)
			continue
		}
		products[p.rec.ID] = r.n
		for _, k := range keys {
			parents[k] = p
		}
		order = append(order, p)
	}
	ids := variantKey{}
	for _, p := range order {
		if !p.variable {
			p.simpleVariant(ids)
		}
	}
	attachVariations(variations, parents, skippedParents, ids, src)
	descs := make([]*string, len(order))
	for i, p := range order {
		descs[i] = &p.rec.Description
	}
	plainTexts(descs)
	for _, p := range order {
		p.first.checkText(p.descCol, p.rec.Description, MaxDescriptionLen, "")
		if p.variable && len(p.rec.Variants) == 0 {
			p.first.bad("type", "a variable product needs its variations; no row of Type variation names it in Parent")
		}
		if len(p.rec.Variants) > MaxVariants {
			p.first.bad("", "%d variations; the shop sells at most %d of a product", len(p.rec.Variants), MaxVariants)
		}
		if p.images > MaxImages {
			src.Notes = append(src.Notes, fmt.Sprintf("row %d (%s): %d images; the shop keeps the first %d", p.first.n, p.first.record, p.images, MaxImages))
		}
		src.File.Products = append(src.File.Products, p.rec)
	}
}

// attachVariations reads the variations into the products their Parent
// names; skipped are the keys of the products left out.
func attachVariations(variations []row, parents map[string]*wooProduct, skipped map[string]bool, ids variantKey, src *Source) {
	for _, r := range variations {
		parent := strings.TrimSpace(r.get("parent"))
		p := parents[parent]
		switch {
		case skipped[parent]:
			continue // counted with its product
		case r.get("published") != "" && r.get("published") != "1":
			src.Skipped["disabled variation"]++
			continue
		case parent == "":
			r.bad("parent", "missing; send the variable product's ID (as id:40) or SKU")
			continue
		case p == nil || !p.variable:
			r.bad("parent", "%q names no variable product in the file; send the ID (as id:40) or SKU of the product this variation belongs to", parent)
			continue
		}
		p.variation(r, ids)
	}
}

// wooRecord names the product of a row in problems.
func wooRecord(r row) string {
	if id := r.get("id"); id != "" {
		return "ID " + id
	}
	if sku := r.get("sku"); sku != "" {
		return fmt.Sprintf("SKU %q", sku)
	}
	return ""
}

// wooKeys are the ways a variation's Parent may name the product of row r.
func wooKeys(r row) []string {
	var keys []string
	if id := r.get("id"); id != "" {
		keys = append(keys, "id:"+id)
	}
	if sku := r.get("sku"); sku != "" {
		keys = append(keys, sku)
	}
	return keys
}

func idColumn(r row) string {
	if r.get("sku") != "" {
		return "sku"
	}
	return "id"
}

// wooUnpublished says why a product is not for sale ("" when it is).
func wooUnpublished(r row) string {
	switch r.get("published") {
	case "1", "":
		return ""
	case "-1":
		return "draft"
	default:
		return "unpublished"
	}
}

// newWooProduct reads a simple or variable product's own fields.
func newWooProduct(r row, variable bool) *wooProduct {
	p := &wooProduct{first: r, variable: variable, stock: r.get("stock")}
	switch {
	case r.get("sku") != "":
		p.rec.ID = makeID(r.get("sku"))
	case r.get("id") != "":
		p.rec.ID = makeID("woo-" + r.get("id"))
	default:
		r.bad("id", "missing, and so is SKU; send the product's ID or SKU, as WooCommerce exports them")
		return nil
	}
	p.rec.Title = r.text("name", MaxTitleLen, "the product's name")
	p.rec.Description, p.descCol = r.get("description"), "description" // made plain text by readWooCommerce
	if p.rec.Description == "" {
		p.rec.Description, p.descCol = r.get("short description"), "short description"
	}
	category, _, _ := strings.Cut(strings.ReplaceAll(r.get("categories"), `\,`, "\x00"), ",")
	p.rec.Category = lastSegment(strings.ReplaceAll(category, "\x00", ","))
	r.checkText("categories", p.rec.Category, MaxCategoryLen, "the product's category, such as Clothing > Tshirts")
	for _, img := range wooImages(r) {
		if ref, ok := r.image("images", img); ok && !slices.Contains(p.rec.Images, ref) {
			p.rec.Images = append(p.rec.Images, ref)
		}
	}
	if p.images = len(p.rec.Images); p.images > MaxImages {
		p.rec.Images = p.rec.Images[:MaxImages]
	}
	return p
}

// wooImages are the URLs of a row's Images, which separates them by commas.
func wooImages(r row) []string {
	var out []string
	for _, img := range strings.Split(r.get("images"), ",") {
		if img = strings.TrimSpace(img); img != "" {
			out = append(out, img)
		}
	}
	return out
}

// simpleVariant is a simple product's one variant, from its own row.
func (p *wooProduct) simpleVariant(ids variantKey) {
	r := p.first
	v := VariantRecord{ID: p.rec.ID + "-default", Title: "Default", Options: map[string]string{}}
	if !ids.claim(r, idColumn(r), v.ID) {
		return
	}
	p.priceAndStock(r, &v, "")
	p.rec.Variants = append(p.rec.Variants, v)
}

// variation reads the variation on row r into the product.
func (p *wooProduct) variation(r row, ids variantKey) {
	v := VariantRecord{Options: map[string]string{}}
	var values []string
	for i := 1; i <= len(wooAttributes) && r.s.has(wooAttributes[i-1][0]); i++ {
		nameCol, valueCol := wooAttributes[i-1][0], wooAttributes[i-1][1]
		name, value := r.get(nameCol), r.get(valueCol)
		if name == "" || value == "" {
			continue
		}
		r.checkText(nameCol, name, MaxOptionLen, "")
		r.checkText(valueCol, value, MaxOptionLen, "")
		v.Options[name] = value
		values = append(values, value)
	}
	if len(v.Options) > MaxOptions {
		r.bad("", "%d attributes; a variant has at most %d options", len(v.Options), MaxOptions)
	}
	switch {
	case len(values) > 0:
		v.Title, v.ID = strings.Join(values, " / "), makeID(p.rec.ID+"-"+strings.Join(values, "-"))
	case r.get("sku") != "":
		v.Title, v.ID = r.get("sku"), makeID(r.get("sku"))
	default:
		v.Title, v.ID = r.get("name"), makeID(p.rec.ID+"-"+r.get("id"))
	}
	if v.Title == "" || len(v.Title) > MaxTitleLen {
		r.bad("attribute 1 value(s)", "the variation needs its options (Attribute 1 name and value), or a Name of at most %d characters", MaxTitleLen)
	}
	col := "attribute 1 value(s)"
	if len(values) == 0 {
		col = idColumn(r)
	}
	if !ids.claim(r, col, v.ID) {
		return
	}
	if imgs := wooImages(r); len(imgs) > 0 {
		v.Image, _ = r.image("images", imgs[0])
	}
	p.priceAndStock(r, &v, p.stock)
	p.rec.Variants = append(p.rec.Variants, v)
}

// priceAndStock reads a variant's price and stock from row r; shared is the
// product's Stock, counted when the row has none.
func (p *wooProduct) priceAndStock(r row, v *VariantRecord, shared string) {
	regular, ok := r.price("regular price", true)
	if ok {
		v.Price = &regular
		if sale, ok := r.price("sale price", false); ok && sale < regular && wooOnSale(r) {
			v.Price = &sale
		}
	}
	stock, ok := r.stock("stock")
	switch {
	case ok:
		v.Stock = &stock
	case r.get("stock") != "":
		// reported
	case shared != "":
		if stock, ok := p.first.stock("stock"); ok {
			v.Stock = &stock
		}
	case r.get("in stock?") == "0":
		v.Stock = new(int64)
	default:
		r.bad("stock", "missing; send the units on hand, such as 12 (the shop counts stock: have WooCommerce manage it, or fill it in)")
	}
}

// wooOnSale reports whether today lies within the sale's dates, when the
// row has them (WooCommerce writes "2026-11-27 00:00:00" or "2026-11-27").
func wooOnSale(r row) bool {
	day := func(col string) (time.Time, bool) {
		v := r.get(col)
		if len(v) < 10 {
			return time.Time{}, false
		}
		t, err := time.Parse("2006-01-02", v[:10])
		if err != nil {
			r.bad(col, "%q is not a date; send it as 2026-11-27", v)
		}
		return t, err == nil
	}
	today := r.s.now.UTC().Truncate(24 * time.Hour)
	if start, ok := day("date sale price starts"); ok && today.Before(start) {
		return false
	}
	if end, ok := day("date sale price ends"); ok && today.After(end) {
		return false
	}
	return true
}
