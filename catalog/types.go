package catalog

import "shop/money"

// ProductSummary is a product as a search lists it (docs/buying.md).
type ProductSummary struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Category string `json:"category"`
	ImageURL string `json:"image_url"`
	// Price is the lowest price among the variants the search matched.
	Price        money.Price `json:"price"`
	InStock      bool        `json:"in_stock"`
	VariantCount int         `json:"variant_count"`
}

// Product is a product with its variants (docs/buying.md).
type Product struct {
	ID          string     `json:"id"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Category    string     `json:"category"`
	Images      []string   `json:"images"`
	PriceRange  PriceRange `json:"price_range"`
	Variants    []Variant  `json:"variants"`
}

// ProductResult is what get_product answers.
type ProductResult struct {
	Product *Product `json:"product"`
}

// PriceRange is the lowest and highest variant price of a product.
type PriceRange struct {
	Min money.Price `json:"min"`
	Max money.Price `json:"max"`
}

// Variant is one buyable version of a product: its id is what a checkout
// session's items name.
type Variant struct {
	ID      string            `json:"id"`
	Title   string            `json:"title"`
	Options map[string]string `json:"options"`
	Price   money.Price       `json:"price"`
	// Available is the number of units buyable now.
	Available int64  `json:"available"`
	ImageURL  string `json:"image_url,omitempty"`
}
