package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shopify's product CSV export (help.shopify.com, "Using CSV files to import
// and export products"): one row per variant and per image, the rows of a
// product sharing its Handle. The product's own fields (Title, Body (HTML),
// Type, Status, the options' names, …) are on its first row; a variant's
// (OptionN Value, Variant SKU, Variant Price, Variant Inventory Qty,
// Variant Image) on its row; further images (Image Src, Image Position) on
// rows of their own or beside a variant.
//
// In the shop: the product's id is its handle (made an id: makeID), its
// category its Type, else the last step of its Product Category; a
// variant's id is the product's and its option values ("enamel-mug-slate"),
// or the product's and "default" for Shopify's single "Default Title"
// variant. Variant Price is the price (Shopify's Compare At Price is the
// "was" price: a sale is a Variant Price below it). Products whose Status is
// draft or archived, or whose Published is FALSE, and gift cards are
// skipped.

// The columns of Shopify's three options.
var (
	shopifyOptionName  = [3]string{"option1 name", "option2 name", "option3 name"}
	shopifyOptionValue = [3]string{"option1 value", "option2 value", "option3 value"}
)

// shopifyProduct is a product as its rows build it.
type shopifyProduct struct {
	first   row
	rec     ProductRecord
	skip    string
	options [3]string // the options' names, from the first row
	images  []shopifyImage
}

type shopifyImage struct {
	position int
	src      string
}

func readShopify(s *sheet, src *Source) {
	s.require("Handle", "Title", "Body (HTML)", "Variant Price", "Variant Inventory Qty", "Image Src")
	if len(s.problems) > 0 {
		return
	}
	var order []*shopifyProduct
	byHandle := map[string]*shopifyProduct{}
	products := map[string]string{} // id → handle
	variants := variantKey{}
	for _, r := range s.rows() {
		handle := r.get("handle")
		r.record = fmt.Sprintf("Handle %q", handle)
		if handle == "" {
			r.record = ""
			r.bad("handle", "missing; send the product's handle on each of its rows, as Shopify exports it")
			continue
		}
		p := byHandle[handle]
		if p == nil {
			p = newShopifyProduct(r, handle)
			byHandle[handle] = p
			order = append(order, p)
			if p.skip == "" {
				if other, dup := products[p.rec.ID]; dup {
					r.bad("handle", "makes the product id %q, as Handle %q does; give the products different handles", p.rec.ID, other)
				}
				products[p.rec.ID] = handle
			}
		}
		if p.skip != "" {
			continue
		}
		if img := r.get("image src"); img != "" {
			if ref, ok := r.image("image src", img); ok {
				pos, err := strconv.Atoi(r.get("image position"))
				if err != nil {
					pos = 1 << 30 // unnumbered: after the numbered, in file order
				}
				p.images = append(p.images, shopifyImage{position: pos, src: ref})
			}
		}
		if r.get("variant price") != "" || r.get("option1 value") != "" || r.get("variant sku") != "" {
			p.variant(r, variants)
		}
	}
	var descs []*string
	for _, p := range order {
		if p.skip == "" {
			descs = append(descs, &p.rec.Description)
		}
	}
	plainTexts(descs)
	for _, p := range order {
		if p.skip != "" {
			src.Skipped[p.skip]++
			continue
		}
		p.finish(src)
		src.File.Products = append(src.File.Products, p.rec)
	}
}

// newShopifyProduct reads a product's own fields from its first row.
func newShopifyProduct(r row, handle string) *shopifyProduct {
	p := &shopifyProduct{first: r, rec: ProductRecord{ID: makeID(handle)}}
	status := strings.ToLower(r.get("status"))
	switch {
	case status == "draft" || status == "archived":
		p.skip = status
		return p
	case strings.EqualFold(r.get("published"), "false"):
		p.skip = "unpublished"
		return p
	case strings.EqualFold(r.get("gift card"), "true"):
		p.skip = "gift card"
		return p
	}
	p.rec.Title = r.text("title", MaxTitleLen, "the product's title on its first row")
	p.rec.Description = r.get("body (html)") // made plain text by readShopify
	switch {
	case r.get("type") != "":
		p.rec.Category = r.text("type", MaxCategoryLen, "")
	case r.get("product category") != "":
		p.rec.Category = lastSegment(r.get("product category"))
		r.checkText("product category", p.rec.Category, MaxCategoryLen, "")
	default:
		r.bad("type", "missing; send the product's type, such as Mugs (the shop's category), or a Product Category")
	}
	for i := range p.options {
		p.options[i] = r.get(shopifyOptionName[i])
	}
	return p
}

// variant reads the variant on row r.
func (p *shopifyProduct) variant(r row, ids variantKey) {
	v := VariantRecord{Options: map[string]string{}}
	var values []string
	for i, name := range p.options {
		col := shopifyOptionValue[i]
		value := r.get(col)
		switch {
		case value == "":
			continue
		case name == "":
			r.bad(col, "%q has no option name: the product's first row has no %q; name the option there", value, r.name(shopifyOptionName[i]))
			continue
		case i == 0 && name == "Title" && value == "Default Title":
			continue // Shopify's one variant of a product without options
		}
		r.checkText(col, value, MaxOptionLen, "")
		r.checkText(shopifyOptionName[i], name, MaxOptionLen, "")
		v.Options[name] = value
		values = append(values, value)
	}
	if len(values) == 0 {
		v.Title, v.ID = "Default", p.rec.ID+"-default"
	} else {
		v.Title, v.ID = strings.Join(values, " / "), makeID(p.rec.ID+"-"+strings.Join(values, "-"))
	}
	if len(v.Title) > MaxTitleLen {
		r.bad("option1 value", "the option values make a variant title of %d characters; at most %d", len(v.Title), MaxTitleLen)
	}
	ids.claim(r, "option1 value", v.ID)
	if price, ok := r.price("variant price", true); ok {
		v.Price = &price
	}
	if stock, ok := r.stock("variant inventory qty"); ok {
		v.Stock = &stock
	} else if r.get("variant inventory qty") == "" {
		r.bad("variant inventory qty", "missing; send the units on hand, such as 12")
	}
	if img := r.get("variant image"); img != "" {
		v.Image, _ = r.image("variant image", img)
	}
	if len(p.rec.Variants) == MaxVariants {
		r.bad("", "Handle %q has more than %d variants; the shop sells at most %d of a product", p.first.get("handle"), MaxVariants, MaxVariants)
	}
	p.rec.Variants = append(p.rec.Variants, v)
}

// finish orders the product's images and checks what only all its rows
// say, and its description once it is plain text.
func (p *shopifyProduct) finish(src *Source) {
	p.first.checkText("body (html)", p.rec.Description, MaxDescriptionLen, "")
	slices.SortStableFunc(p.images, func(a, b shopifyImage) int { return cmp.Compare(a.position, b.position) })
	for _, img := range p.images {
		if !slices.Contains(p.rec.Images, img.src) {
			p.rec.Images = append(p.rec.Images, img.src)
		}
	}
	if len(p.rec.Images) > MaxImages {
		src.Notes = append(src.Notes, fmt.Sprintf("row %d (Handle %q): %d images; the shop keeps the first %d", p.first.n, p.first.get("handle"), len(p.rec.Images), MaxImages))
		p.rec.Images = p.rec.Images[:MaxImages]
	}
	if len(p.rec.Variants) == 0 {
		p.first.bad("variant price", "no row of Handle %q holds a variant; send its price (and options) on its first row", p.first.get("handle"))
	}
}
