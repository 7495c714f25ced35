package contract

// CatalogFile is a catalog in the import format of `shop catalog import`
// (testdata/demo/catalog.json).
type CatalogFile struct {
	// Currency is the currency of every price in the file; it must be the shop's.
	Currency string          `json:"currency"`
	Products []ProductRecord `json:"products"`
}

// ProductRecord is a product in the import format.
type ProductRecord struct {
	ID          string          `json:"id"`
	Title       string          `json:"title"`
	Category    string          `json:"category"`
	Description string          `json:"description"`
	Images      []string        `json:"images"`
	Variants    []VariantRecord `json:"variants"`
}

// VariantRecord is a variant in the import format: Price in minor units of
// the file's currency, Stock the units on hand.
type VariantRecord struct {
	ID      string            `json:"id"`
	Title   string            `json:"title"`
	Options map[string]string `json:"options"`
	Price   *int64            `json:"price"`
	Stock   *int64            `json:"stock"`
	Image   string            `json:"image,omitempty"`
}
