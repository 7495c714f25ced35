package feed

// The records of the feed, as schema.feed.json of ACP 2026-04-17 defines
// them ($defs Product, Variant and theirs); only the fields the shop fills.

// Product is a product of the feed: what its variants share.
type Product struct {
	ID          string       `json:"id"`
	Title       string       `json:"title"`
	Description *Description `json:"description,omitempty"`
	Media       []Media      `json:"media,omitempty"`
	Variants    []Variant    `json:"variants"`
}

// Variant is a purchasable variant: ID is what checkout items take.
type Variant struct {
	ID             string          `json:"id"`
	Title          string          `json:"title"`
	Price          *Price          `json:"price,omitempty"`
	Availability   *Availability   `json:"availability,omitempty"`
	Categories     []Category      `json:"categories,omitempty"`
	VariantOptions []VariantOption `json:"variant_options,omitempty"`
	Media          []Media         `json:"media,omitempty"`
	Seller         *Seller         `json:"seller,omitempty"`
}

// Description is a product's description; the shop's is plain text.
type Description struct {
	Plain string `json:"plain"`
}

// Price is an amount in minor units of Currency, an upper-case ISO 4217 code.
type Price struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Availability says whether a variant can be bought now.
type Availability struct {
	Available bool   `json:"available"`
	Status    string `json:"status"` // in_stock or out_of_stock
}

// Media is an image of a product or variant.
type Media struct {
	Type    string `json:"type"` // image
	URL     string `json:"url"`
	AltText string `json:"alt_text,omitempty"`
}

// Category is a category in a taxonomy: the shop's are the merchant's.
type Category struct {
	Value    string `json:"value"`
	Taxonomy string `json:"taxonomy,omitempty"`
}

// VariantOption is one option of a variant, such as Colour: Slate.
type VariantOption struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Seller is the merchant of record and its pages.
type Seller struct {
	Name  string `json:"name,omitempty"`
	Links []Link `json:"links,omitempty"`
}

// Link is a page of the seller: Type is an ACP link type (terms_of_service,
// privacy_policy, refund_policy, …).
type Link struct {
	Type  string `json:"type"`
	Title string `json:"title,omitempty"`
	URL   string `json:"url"`
}
