package checkout

import (
	"slices"
	"strings"
)

// DefaultCardBrands are the card brands a policy without card_brands
// accepts.
var DefaultCardBrands = []string{"visa", "mastercard", "amex", "discover"}

// cardBrands are the brands a policy may name, as Stripe names them.
var cardBrands = []string{"amex", "diners", "discover", "eftpos_au", "jcb", "mastercard", "unionpay", "visa"}

// AllowedCardBrands are the card brands the payment sheet offers: the
// policy's card_brands, else DefaultCardBrands. The slice is the caller's.
func (p *Policy) AllowedCardBrands() []string {
	if len(p.CardBrands) == 0 {
		return slices.Clone(DefaultCardBrands)
	}
	return slices.Clone(p.CardBrands)
}

// cardBrands checks the policy's card_brands: when given, known brands,
// each once.
func (v *validator) cardBrands(brands []string) {
	for i, b := range brands {
		switch {
		case !slices.Contains(cardBrands, b):
			v.add("card_brands", "unknown brand %q at [%d]; send some of %s", b, i, strings.Join(cardBrands, ", "))
		case slices.Index(brands, b) != i:
			v.add("card_brands", "%q is listed twice", b)
		}
	}
}
