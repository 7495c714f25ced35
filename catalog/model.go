package catalog

import "time"

// productRow is a row of products. Images is a JSON array of references.
type productRow struct {
	ID          string `gorm:"primaryKey"`
	Seq         int64
	Title       string
	Description string
	Category    string
	CategoryKey string
	Images      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

func (productRow) TableName() string { return "products" }

// variantRow is a row of variants. Options is a JSON object; Stock is the
// number of units on hand.
type variantRow struct {
	ID        string `gorm:"primaryKey"`
	ProductID string
	Position  int
	Title     string
	Options   string
	Price     int64
	Stock     int64
	Image     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (variantRow) TableName() string { return "variants" }

// termRow is a row of the search index: a term of a product and its weight.
// ProductSeq is the product's seq, which searches rank and page by: read from
// the index (term, product_seq, weight) alone, without the products table.
// ProductID serves deletes when a product is imported again. CategoryKey
// is the product's (products.category_key), so that a word in a category is
// one range of the index product_terms_category. MinPrice and
// MinStockedPrice are the product's facts of those names (facts.go), so
// that a word under a price cap or in stock is counted in its range of the
// index product_terms_seq, which carries them.
type termRow struct {
	Term            string `gorm:"primaryKey"`
	ProductID       string `gorm:"primaryKey"`
	ProductSeq      int64
	Weight          int
	CategoryKey     string
	MinPrice        *int64
	MinStockedPrice *int64
}

func (termRow) TableName() string { return "product_terms" }
