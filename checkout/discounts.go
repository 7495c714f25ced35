package checkout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/money"
)

// A session or cart keeps the codes the buyer entered, upper-cased, in one
// column (promo_code), joined by commas: a code's characters are mapped to
// [A-Z0-9_-] or '?', so a comma never occurs in one, and a code with a '?'
// is one no promotion has (policy codes match promoPattern). Pricing
// decides afresh, each time, which codes apply (choosePromos).
//
// Stacking: one code of each kind applies (percent_off on the items,
// amount_off on the order, free_shipping), in the order entered; a second
// code of a kind already applied is refused as not combinable, a code
// entered twice as already applied.

// Discount type aliases, so that checkout names them as its own.
type (
	// Discounts are a session's codes and what became of each.
	Discounts = contract.Discounts
	// AppliedDiscount is a code that applies.
	AppliedDiscount = contract.AppliedDiscount
	// RejectedDiscount is a code that does not.
	RejectedDiscount = contract.RejectedDiscount
)

// Bounds of the codes a request may send.
const (
	maxPromoCodes   = 10 // codes per session or cart
	maxPromoCodeLen = 64 // characters per code; longer is refused as input, shorter but unknown is a rejected code
)

// promoIn is a code as the buyer entered it, with its promotion.
type promoIn struct {
	Code  string     // upper-cased
	Promo *Promotion // nil when no promotion has the code
	Uses  int64      // uses of Promo taken (only read when it has a usage limit)
}

// splitCodes are the codes of a promo_code column.
func splitCodes(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

// normalizeCode upper-cases a code and maps what no code has to '?'.
func normalizeCode(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '?'
	}, strings.ToUpper(strings.TrimSpace(s)))
}

// checkCodes validates the codes a request sends (bounded in count and
// length, none empty) and returns them as a promo_code column keeps them.
func checkCodes(codes []string) (string, error) {
	if len(codes) > maxPromoCodes {
		return "", shop.Errorf(shop.Invalid, "$.promo_codes", "send at most %d codes", maxPromoCodes)
	}
	out := make([]string, len(codes))
	for i, code := range codes {
		code = strings.TrimSpace(code)
		at := fmt.Sprintf("$.promo_codes[%d]", i)
		switch {
		case code == "":
			return "", shop.Errorf(shop.Invalid, at, "an empty code: leave it out, or send codes: [] to remove every code")
		case len(code) > maxPromoCodeLen:
			return "", shop.Errorf(shop.Invalid, at, "not a promotion code: codes are at most %d characters", maxPromoCodeLen)
		}
		out[i] = normalizeCode(code)
	}
	return strings.Join(out, ","), nil
}

// promoInputs are the codes of a promo_code column with their promotions
// and, for those with a usage limit, the uses taken.
func (c *Checkout) promoInputs(ctx context.Context, tx *gorm.DB, joined string) ([]promoIn, error) {
	codes := splitCodes(joined)
	out := make([]promoIn, len(codes))
	for i, code := range codes {
		out[i].Code = code
		if promo, ok := c.policy.Promotion(code); ok {
			out[i].Promo = promo
			if promo.UsageLimit != nil {
				n, err := c.promoUses(ctx, tx, promo.Code)
				if err != nil {
					return nil, err
				}
				out[i].Uses = n
			}
		}
	}
	return out, nil
}

// promoSelection is which codes apply: one of each kind, in the order
// entered, and why each other does not.
type promoSelection struct {
	percent, amount, shipping *Promotion
	applied                   []*Promotion // in the order entered
	rejected                  []RejectedDiscount
	messages                  []Message // info messages for the rejected codes
}

// choosePromos decides which of the codes apply to items worth base at now.
func choosePromos(cur money.Currency, in []promoIn, base int64, now time.Time) promoSelection {
	var sel promoSelection
	for i, p := range in {
		r := sel.refusal(cur, in[:i], p, base, now)
		if r.reason == "" {
			switch p.Promo.Kind {
			case PercentOff:
				sel.percent = p.Promo
			case AmountOff:
				sel.amount = p.Promo
			case FreeShipping:
				sel.shipping = p.Promo
			}
			sel.applied = append(sel.applied, p.Promo)
			continue
		}
		param := "$.promo_code"
		if len(in) > 1 {
			param = fmt.Sprintf("$.promo_codes[%d]", i)
		}
		sel.rejected = append(sel.rejected, RejectedDiscount{Index: i, Code: p.Code, Reason: r.reason, Content: r.why})
		sel.messages = append(sel.messages, keyed(infoMessage(string(shop.Invalid), param, r.why), r.key, r.params...))
	}
	return sel
}

// refusal says why the code p, entered after earlier, does not apply, or
// "" when it does.
func (sel *promoSelection) refusal(cur money.Currency, earlier []promoIn, p promoIn, base int64, now time.Time) refused {
	promo := p.Promo
	if promo == nil {
		return refused{contract.DiscountInvalid, fmt.Sprintf("No promotion has the code %s.", p.Code), KeyPromoUnknown, []string{"code_typed", p.Code}}
	}
	if slices.ContainsFunc(earlier, func(e promoIn) bool { return e.Code == p.Code }) {
		return refused{contract.DiscountAlreadyApplied, fmt.Sprintf("%s was entered already.", promo.Code), KeyPromoRepeated, []string{"code", promo.Code}}
	}
	if r := promoProblem(cur, promo, base, p.Uses, now); r.reason != "" {
		return r
	}
	taken := map[PromotionKind]*Promotion{PercentOff: sel.percent, AmountOff: sel.amount, FreeShipping: sel.shipping}[promo.Kind]
	if taken != nil {
		return refused{contract.DiscountCombination, fmt.Sprintf("%s cannot be combined with %s: one code of each kind applies.", promo.Code, taken.Code),
			KeyPromoCombination, []string{"code", promo.Code, "other", taken.Code}}
	}
	return refused{}
}

// promoTitle is the name buyers see of a promotion: its title, else its
// description, else its code.
func promoTitle(p *Promotion) string {
	switch {
	case p.Title != "":
		return p.Title
	case p.Description != "":
		return p.Description
	}
	return p.Code
}

// appliedDiscounts says what each applied promotion took off and where:
// percent_off the lines' discounts, amount_off the order discount as shared
// out over the lines (shares), free_shipping the shipping saved.
func appliedDiscounts(sel promoSelection, items []LineItem, shares []int64, shippingSaved int64) []AppliedDiscount {
	out := []AppliedDiscount{}
	for _, p := range sel.applied {
		a := AppliedDiscount{Code: p.Code, Title: promoTitle(p), Kind: string(p.Kind), Allocations: []contract.Allocation{}}
		add := func(path string, amount int64) {
			if amount > 0 {
				a.Allocations = append(a.Allocations, contract.Allocation{Path: path, Amount: amount})
				a.Amount += amount
			}
		}
		for i, li := range items {
			switch p.Kind {
			case PercentOff:
				add(fmt.Sprintf("$.line_items[%d]", i), li.Discount)
			case AmountOff:
				add(fmt.Sprintf("$.line_items[%d]", i), shares[i])
			}
		}
		if p.Kind == FreeShipping {
			add("$.totals.shipping", shippingSaved)
		}
		out = append(out, a)
	}
	return out
}

// shippingSaved is what the chosen option would cost, before tax, without
// a free_shipping promotion: its rate's price, unless the rate is free over
// an amount the goods reach anyway.
func shippingSaved(in pricingInput, optionID string, goods int64) int64 {
	if in.Address == nil || optionID == "" {
		return 0
	}
	zone, ok := in.Policy.Zone(in.Address.Country)
	if !ok {
		return 0
	}
	for _, r := range zone.Rates {
		if r.ID == optionID && (r.FreeOver == nil || goods < *r.FreeOver) {
			return r.Price
		}
	}
	return 0
}

// discountsOf are the discounts a priced session or cart shows.
func discountsOf(joined string, applied []AppliedDiscount, rejected []RejectedDiscount) *Discounts {
	d := &Discounts{Codes: splitCodes(joined), Applied: applied, Rejected: rejected}
	if d.Applied == nil {
		d.Applied = []AppliedDiscount{}
	}
	if d.Rejected == nil {
		d.Rejected = []RejectedDiscount{}
	}
	return d
}
