package contract

// Discounts are the promotion codes a session or cart carries and what
// became of each: the dialects with a discount extension (UCP's, ACP's)
// show them; /mcp shows their effect in totals and messages.
type Discounts struct {
	// Codes are the codes as the buyer entered them (upper-cased), in
	// order; a message about codes[i] names it by that index.
	Codes []string `json:"codes"`
	// Applied are the codes that apply, in the order entered.
	Applied []AppliedDiscount `json:"applied"`
	// Rejected are the codes that do not, each with why.
	Rejected []RejectedDiscount `json:"rejected"`
}

// AppliedDiscount is a promotion that applies: its code, its title (the
// promotion's name in the merchant policy), what it takes off in all and
// where each minor unit of it went.
type AppliedDiscount struct {
	Code   string `json:"code"`
	Title  string `json:"title"`
	Kind   string `json:"kind"` // percent_off, amount_off or free_shipping
	Amount int64  `json:"amount"`
	// Allocations sum to Amount: $.line_items[i] for item discounts,
	// $.totals.shipping for free shipping.
	Allocations []Allocation `json:"allocations"`
}

// Allocation is the part of a discount that went to one target.
type Allocation struct {
	Path   string `json:"path"`
	Amount int64  `json:"amount"`
}

// DiscountRejection is why a code does not apply; the values are the
// standard codes of UCP's and ACP's discount extensions.
type DiscountRejection string

// Why a code does not apply.
const (
	DiscountInvalid        DiscountRejection = "discount_code_invalid"                // no promotion has it, or it has not started
	DiscountExpired        DiscountRejection = "discount_code_expired"                // it ended
	DiscountAlreadyApplied DiscountRejection = "discount_code_already_applied"        // the same code was entered before
	DiscountCombination    DiscountRejection = "discount_code_combination_disallowed" // a code of the same kind applies already
	DiscountMinimumNotMet  DiscountRejection = "discount_code_minimum_not_met"        // the items are worth less than it needs
	DiscountUsageLimit     DiscountRejection = "discount_code_usage_limit_reached"    // it has been used as often as it may
)

// RejectedDiscount is a code that does not apply: its index in Codes,
// the code, why (Reason) and a sentence for the buyer.
type RejectedDiscount struct {
	Index   int               `json:"index"`
	Code    string            `json:"code"`
	Reason  DiscountRejection `json:"reason"`
	Content string            `json:"content"`
}
