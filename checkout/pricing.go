package checkout

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"shop"
	"shop/contract"
	"shop/money"
)

// cartLine is a line of the cart, priced from the catalog by the caller.
type cartLine struct {
	VariantID string // the catalog variant
	Quantity  int64  // 1..999
	Name      string // shown to the buyer
	// Description says what the product is, for the payment sheet's line.
	Description string
	Images      []string // image URLs of the variant
	UnitAmount  int64    // minor units, from the catalog
	OnHand      int64    // the variant's stock on hand (addrlimits.go)
}

// pricingInput is everything price needs; it does no I/O.
type pricingInput struct {
	Policy   *Policy    // the merchant policy: currency, shipping, tax
	Lines    []cartLine // the cart, at most 50 lines
	Address  *Address   // nil, or an address already validated as complete and shippable (Policy.Zone finds its country)
	OptionID string     // the option the buyer chose, "" for none
	// OptionKept is true when OptionID was one of the options before and
	// the caller did not send it again: when it is not one of the options
	// now (the address moved to another zone), the cheapest replaces it
	// with an info message. Otherwise an OptionID that is not one of the
	// options is an error and none is chosen.
	OptionKept bool
	// Promos are the codes the buyer entered, in order (discounts.go).
	Promos []promoIn
	// Promo, when Promos is empty, is the one code entered (a known one),
	// and PromoUses the uses of it already taken: orders it applied to and
	// payments in flight (for its usage limit).
	Promo     *Promotion
	PromoUses int64
	Now       time.Time // the time promotions and delivery estimates are judged at
}

// priced is the result.
type priced struct {
	LineItems []LineItem          // one per cart line, in cart order (never nil)
	Options   []FulfillmentOption // [] (never nil) without an address
	OptionID  string              // the chosen option: in.OptionID when it is one of Options; "" when it is not and it was not kept (see Errors); else the cheapest option (ties: policy order) when there is an address; else ""
	Totals    []Total             // in this order: items_base_amount, items_discount, subtotal, discount, fulfillment, tax, total (all seven always present)
	Messages  []Message           // info messages only (never nil)
	Errors    []Message           // error messages: an OptionID sent that is not one of Options (nil when none)
	Promo     string              // the codes of the promotions applied, joined by commas, "" when none applies
	Total     int64               // == the "total" entry
	Applied   []AppliedDiscount   // the promotions applied, in the order entered (never nil)
	Rejected  []RejectedDiscount  // the codes that do not apply, and why
}

// price prices a cart under the merchant policy: the line items, the
// shipping options for the address, the chosen option, the totals and info
// messages about the promotion and the shipping choice, and an error
// message for a shipping option asked for that is not offered. It is pure:
// the same input always gives the same result.
//
// Amounts are integers in minor units. Every rate is applied once per line
// (or once per option) with [money.Percent], rounding half away from zero, and
// totals are sums of those rounded integers, so the identities of CONTRACT.md
// §4 hold exactly:
//
//	line:   BaseAmount = UnitAmount × Quantity, Subtotal = BaseAmount − Discount, Total = Subtotal + Tax
//	option: Total = Subtotal + Tax
//	totals: items_base_amount = Σ BaseAmount, items_discount = Σ Discount,
//	        subtotal = items_base_amount − items_discount,
//	        discount = the order-level discount (amount_off; 0 otherwise),
//	        fulfillment = the chosen option's Subtotal (0 with none),
//	        tax = Σ line Tax + the chosen option's Tax,
//	        total = subtotal − discount + fulfillment + tax
//
// Shipping tax: CONTRACT.md §4 says fulfillment is the chosen option's total,
// tax is Σ line tax + option tax, and total = subtotal − discount +
// fulfillment + tax. Taken together these count shipping tax twice when
// shipping is taxed. price resolves it by putting the option's pre-tax
// Subtotal in fulfillment (equal to the option's Total whenever shipping is
// untaxed), so the buyer pays the shipping tax exactly once, inside tax.
//
// A percent_off promotion is a line discount (each line's Discount). An
// amount_off promotion is an order discount: the discount total is
// min(Amount, subtotal), and for tax it is shared out over the lines in
// proportion to their Subtotal (see [allocate]); each line is taxed on its
// Subtotal minus its share while its Discount stays 0. A free_shipping
// promotion makes every option's Subtotal 0. A promotion that does not apply
// (not started, ended, used up, items below its minimum) is left out, with an
// info message coded invalid for $.promo_code saying why.
//
// Bounds: money.Percent accepts amounts below 1e15 minor units. The caller
// bounds unit prices to 1e11 and quantities to 999, so a line's BaseAmount is
// below 1e14 and the sums over 50 lines below 5e15, far inside int64. Shipping
// prices come from the policy, which must keep them below 1e15 as well;
// price caps nothing and money.Percent panics beyond its bound.
func price(in pricingInput) priced {
	cur := in.Policy.Currency()
	out := priced{Messages: []Message{}}
	var base int64
	out.LineItems, base = lineItems(in.Lines)

	promos := in.Promos
	if len(promos) == 0 && in.Promo != nil {
		promos = []promoIn{{Code: in.Promo.Code, Promo: in.Promo, Uses: in.PromoUses}}
	}
	sel := choosePromos(cur, promos, base, in.Now)
	out.Messages = append(out.Messages, sel.messages...)
	out.Rejected = sel.rejected
	itemsDiscount, subtotals := discountLines(out.LineItems, sel.percent)
	subtotal := base - itemsDiscount
	var discount int64
	if sel.amount != nil {
		discount = min(sel.amount.Amount, subtotal)
	}
	codes := make([]string, len(sel.applied))
	for i, p := range sel.applied {
		codes[i] = p.Code
		out.Messages = append(out.Messages, applied(cur, p, discount))
	}
	out.Promo = strings.Join(codes, ",")

	var rate decimal.Decimal
	var shippingTaxable bool
	if in.Address != nil {
		rate, shippingTaxable = in.Policy.TaxRate(in.Address.Country, in.Address.State)
	}
	shares := allocate(discount, subtotals)
	tax := taxLines(out.LineItems, shares, rate)

	var freeOver []Message
	out.Options, freeOver = shippingOptions(in, subtotal-discount, sel.shipping != nil, rate, shippingTaxable)
	out.Messages = append(out.Messages, freeOver...)
	fulfillment, optionTax := out.choose(cur, in.OptionID, in.OptionKept)
	tax += optionTax
	var saved int64
	if sel.shipping != nil {
		saved = shippingSaved(in, out.OptionID, subtotal-discount)
	}
	out.Applied = appliedDiscounts(sel, out.LineItems, shares, saved)

	out.Total = subtotal - discount + fulfillment + tax
	out.Totals = []Total{
		{Type: TotalItemsBase, DisplayText: "Items", Amount: base},
		{Type: TotalItemsDiscount, DisplayText: "Item discounts", Amount: itemsDiscount},
		{Type: TotalSubtotal, DisplayText: "Subtotal", Amount: subtotal},
		{Type: TotalDiscount, DisplayText: "Discount", Amount: discount},
		{Type: TotalFulfillment, DisplayText: "Shipping", Amount: fulfillment},
		{Type: TotalTax, DisplayText: "Tax", Amount: tax},
		{Type: TotalTotal, DisplayText: "Total", Amount: out.Total},
	}
	return out
}

// maxLineImages bounds the images of a line item (the variant's first):
// with the catalog's bounds on names and URLs it bounds the priced snapshot
// a session keeps to about 50 × 1.5 KiB for its 50 lines.
const maxLineImages = 3

// lineItems are the cart's lines as line items (never nil), priced before
// discounts and tax, and the sum of their BaseAmount, with at most
// maxLineImages images each.
func lineItems(lines []cartLine) ([]LineItem, int64) {
	items := make([]LineItem, 0, len(lines))
	var base int64
	for _, l := range lines {
		li := LineItem{
			ID:   "li_" + l.VariantID,
			Item: Item{ID: l.VariantID, Quantity: l.Quantity},
			Name: l.Name, Description: l.Description,
			Images:     append([]string{}, l.Images[:min(len(l.Images), maxLineImages)]...),
			UnitAmount: l.UnitAmount,
			BaseAmount: l.UnitAmount * l.Quantity,
		}
		base += li.BaseAmount
		items = append(items, li)
	}
	return items, base
}

// discountLines sets each line's Discount (a percent_off promo's, else 0)
// and Subtotal, and returns the sum of the discounts and the subtotals.
func discountLines(items []LineItem, promo *Promotion) (int64, []int64) {
	var discount int64
	subtotals := make([]int64, len(items))
	for i := range items {
		li := &items[i]
		if promo != nil && promo.Kind == PercentOff {
			li.Discount = min(money.Percent(li.BaseAmount, promo.Percent), li.BaseAmount)
		}
		li.Subtotal = li.BaseAmount - li.Discount
		subtotals[i] = li.Subtotal
		discount += li.Discount
	}
	return discount, subtotals
}

// taxLines sets each line's Tax, on its Subtotal less its share of the
// order discount, and Total, and returns the sum of the lines' tax.
func taxLines(items []LineItem, shares []int64, rate decimal.Decimal) int64 {
	var tax int64
	for i := range items {
		li := &items[i]
		li.Tax = money.Percent(li.Subtotal-shares[i], rate)
		li.Total = li.Subtotal + li.Tax
		tax += li.Tax
	}
	return tax
}

// shippingOptions are the options of the address's zone ([] without an
// address or a zone), priced for goods worth goods after discounts: free
// with a free_shipping promo or over a rate's FreeOver (with an info
// message saying so when that rate has a price), taxed at rate when
// shipping is taxable.
func shippingOptions(in pricingInput, goods int64, freeShipping bool, rate decimal.Decimal, taxable bool) ([]FulfillmentOption, []Message) {
	options := []FulfillmentOption{}
	var messages []Message
	var zone *Zone
	if in.Address != nil {
		zone, _ = in.Policy.Zone(in.Address.Country)
	}
	if zone == nil {
		return options, nil
	}
	cur := in.Policy.Currency()
	for _, r := range zone.Rates {
		o := FulfillmentOption{
			Type:                 "shipping",
			ID:                   r.ID,
			Title:                r.Title,
			Subtitle:             r.Subtitle,
			Carrier:              r.Carrier,
			EarliestDeliveryTime: addBusinessDays(in.Now, r.MinDays),
			LatestDeliveryTime:   addBusinessDays(in.Now, r.MaxDays),
			Subtotal:             r.Price,
		}
		if o.Subtitle == "" {
			o.Subtitle = daysText(r.MinDays, r.MaxDays)
		}
		switch {
		case freeShipping:
			o.Subtotal = 0
		case r.FreeOver != nil && goods >= *r.FreeOver:
			o.Subtotal = 0
			if r.Price > 0 {
				messages = append(messages, keyed(infoMessage("", "",
					fmt.Sprintf("Free %s shipping on orders over %s.", r.Title, cur.Format(*r.FreeOver))),
					KeyFreeOver, "option", r.Title, "threshold_amount", itoa(*r.FreeOver)))
			}
		}
		if taxable {
			o.Tax = money.Percent(o.Subtotal, rate)
		}
		o.Total = o.Subtotal + o.Tax
		options = append(options, o)
	}
	return options, messages
}

// choose chooses among out.Options (chooseOption) and records
// the choice and its message in out; it returns the chosen option's
// Subtotal and Tax (0, 0 with none).
func (out *priced) choose(cur money.Currency, wanted string, kept bool) (fulfillment, tax int64) {
	i, msg, ok := chooseOption(cur, out.Options, wanted, kept)
	switch {
	case msg == nil:
	case msg.Type == MessageError:
		out.Errors = append(out.Errors, *msg)
	default:
		out.Messages = append(out.Messages, *msg)
	}
	if !ok {
		return 0, 0
	}
	chosen := &out.Options[i]
	out.OptionID = chosen.ID
	return chosen.Subtotal, chosen.Tax
}

// infoMessage returns an info message with plain content.
func infoMessage(code, param, content string) Message {
	return Message{Type: MessageInfo, Code: code, Param: param, ContentType: "plain", Content: content}
}

// promoProblem returns why promo does not apply to items worth base minor
// units at now after uses orders used it: the reason, a sentence for the
// buyer and the catalog key with its params (refused.reason "" when it
// applies).
func promoProblem(cur money.Currency, promo *Promotion, base, uses int64, now time.Time) refused {
	switch {
	case !promo.StartsAt.IsZero() && now.Before(promo.StartsAt):
		return refused{contract.DiscountInvalid, fmt.Sprintf("%s starts on %s.", promo.Code, dateText(promo.StartsAt)),
			KeyPromoNotStarted, []string{"code", promo.Code, "start_date", promo.StartsAt.UTC().Format(time.DateOnly)}}
	case !promo.EndsAt.IsZero() && !now.Before(promo.EndsAt):
		return refused{contract.DiscountExpired, fmt.Sprintf("%s ended on %s.", promo.Code, dateText(promo.EndsAt)),
			KeyPromoEnded, []string{"code", promo.Code, "end_date", promo.EndsAt.UTC().Format(time.DateOnly)}}
	case promo.UsageLimit != nil && uses >= int64(*promo.UsageLimit):
		return refused{contract.DiscountUsageLimit, usedUpText(promo.Code), KeyPromoUsedUp, []string{"code", promo.Code}}
	case base < promo.MinSubtotal:
		return refused{contract.DiscountMinimumNotMet, fmt.Sprintf("%s needs items worth %s; add %s more to use it.",
			promo.Code, cur.Format(promo.MinSubtotal), cur.Format(promo.MinSubtotal-base)),
			KeyPromoMinSubtotal, []string{"code", promo.Code, "min_amount", itoa(promo.MinSubtotal), "missing_amount", itoa(promo.MinSubtotal - base)}}
	}
	return refused{}
}

// refused is why a promotion code does not apply: the reason (UCP's), the
// sentence for the model and the catalog key with its params.
type refused struct {
	reason contract.DiscountRejection
	why    string
	key    string
	params []string
}

// usedUpText says that a promotion reached its usage limit.
func usedUpText(code string) string {
	return fmt.Sprintf("%s has been used up: it has been used as many times as it can be.", code)
}

// applied is the info message of what an applied promotion did; discount
// is the order discount it gave (amount_off only).
func applied(cur money.Currency, promo *Promotion, discount int64) Message {
	say := func(text, key string, params ...string) Message {
		return keyed(infoMessage("", "", text), key, append([]string{"code", promo.Code}, params...)...)
	}
	switch promo.Kind {
	case PercentOff:
		return say(fmt.Sprintf("%s applied: %s%% off your items.", promo.Code, promo.Percent.String()),
			KeyPromoPercentOff, "percent", promo.Percent.String())
	case AmountOff:
		if discount < promo.Amount {
			return say(fmt.Sprintf("%s applied: %s off your order (it is worth up to %s, but no more than your items cost).",
				promo.Code, cur.Format(discount), cur.Format(promo.Amount)),
				KeyPromoAmountCapped, "discount_amount", itoa(discount), "max_amount", itoa(promo.Amount))
		}
		return say(fmt.Sprintf("%s applied: %s off your order.", promo.Code, cur.Format(discount)),
			KeyPromoAmountOff, "discount_amount", itoa(discount))
	case FreeShipping:
		return say(fmt.Sprintf("%s applied: free shipping on this order.", promo.Code), KeyPromoFreeShipping)
	}
	return say(fmt.Sprintf("%s applied.", promo.Code), KeyPromoApplied)
}

// dateText writes the UTC date of t for buyers, e.g. "1 May 2026".
func dateText(t time.Time) string {
	return t.UTC().Format("2 January 2006")
}

// daysText is the subtitle of a rate without one: "3–5 business days", or
// "2 business days" and "1 business day" when both bounds are equal.
func daysText(minDays, maxDays int) string {
	switch {
	case minDays == maxDays && minDays == 1:
		return "1 business day"
	case minDays == maxDays:
		return fmt.Sprintf("%d business days", minDays)
	}
	return fmt.Sprintf("%d–%d business days", minDays, maxDays)
}

// addBusinessDays returns t in UTC moved forward by n business days, skipping
// Saturdays and Sundays (in UTC) and keeping t's time of day. With n ≤ 0 it
// returns t itself, in UTC, even on a weekend.
func addBusinessDays(t time.Time, n int) time.Time {
	t = t.UTC()
	for n > 0 {
		t = t.AddDate(0, 0, 1)
		if wd := t.Weekday(); wd != time.Saturday && wd != time.Sunday {
			n--
		}
	}
	return t
}

// chooseOption returns the index of the chosen option and, when price chose
// for the buyer or refused the buyer's choice, a message about it. The
// option with id wanted is kept. A wanted id that is not one of the options
// is an error message (invalid $.fulfillment_option_id, naming the ids
// offered), with ok false, unless kept says it was chosen before and only
// vanished (the address moved to another zone): the cheapest by Total is
// then chosen with an info message, as it is when nothing is wanted (ties:
// the first). ok is false when there are no options.
func chooseOption(cur money.Currency, options []FulfillmentOption, wanted string, kept bool) (i int, msg *Message, ok bool) {
	if len(options) == 0 {
		return 0, nil, false
	}
	if j := slices.IndexFunc(options, func(o FulfillmentOption) bool { return o.ID == wanted }); wanted != "" && j >= 0 {
		return j, nil, true
	}
	for j, o := range options {
		if o.Total < options[i].Total { // strictly: the first of equals wins
			i = j
		}
	}
	if wanted != "" {
		ids := make([]string, len(options))
		for j, o := range options {
			ids[j] = fmt.Sprintf("%q", o.ID)
		}
		if !kept {
			m := keyed(errorMessage(string(shop.Invalid), "$.fulfillment_option_id",
				fmt.Sprintf("There is no shipping option %q for this address; choose one of %s.", wanted, strings.Join(ids, ", "))),
				KeyOptionUnknown, "option_typed", wanted)
			return 0, &m, false
		}
		m := keyed(infoMessage(string(shop.Invalid), "$.fulfillment_option_id",
			fmt.Sprintf("The shipping option %q is not offered for this address; %s is selected instead. The options are %s.",
				wanted, options[i].Title, strings.Join(ids, ", "))),
			KeyOptionReplaced, "option_typed", wanted, "selected", options[i].Title)
		return i, &m, true
	}
	var others []string
	for j, o := range options {
		if j == i {
			continue
		}
		p := cur.Format(o.Total)
		if o.Total == 0 {
			p = "free"
		}
		others = append(others, fmt.Sprintf("%s (%s)", o.Title, p))
	}
	text := fmt.Sprintf("Shipping: %s selected.", options[i].Title)
	if len(others) > 0 {
		text = fmt.Sprintf("Shipping: %s selected; other options: %s.", options[i].Title, strings.Join(others, ", "))
	}
	m := keyed(infoMessage("", "", text), KeyOptionSelected, "selected", options[i].Title)
	return i, &m, true
}

// allocate shares discount out over lines in proportion to their subtotals
// by the largest-remainder method: each line first gets
// ⌊discount × subtotal / Σ subtotals⌋, then the minor units left over go one
// each to the lines with the largest remainders, ties to the earlier line.
// The shares are exact integers that sum to discount. With 0 ≤ discount ≤
// Σ subtotals (and subtotals ≥ 0) each share lies between 0 and its line's
// subtotal. A zero discount gives all-zero shares. allocate panics when
// discount exceeds Σ subtotals; price never asks that.
func allocate(discount int64, subtotals []int64) []int64 {
	shares := make([]int64, len(subtotals))
	var sum uint64
	for _, s := range subtotals {
		sum += uint64(s)
	}
	if discount <= 0 {
		return shares
	}
	if uint64(discount) > sum {
		panic(fmt.Sprintf("checkout: allocate: discount %d exceeds the subtotals' sum %d", discount, sum))
	}
	rems := make([]uint64, len(subtotals))
	left := discount
	for i, s := range subtotals {
		// discount × s < sum × 2⁶⁴ because discount ≤ sum, so the 128-bit
		// product divides by sum without overflow.
		hi, lo := bits.Mul64(uint64(discount), uint64(s))
		q, r := bits.Div64(hi, lo, sum)
		shares[i], rems[i] = int64(q), r
		left -= int64(q)
	}
	order := make([]int, len(subtotals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rems[b], rems[a]) })
	for _, i := range order[:left] {
		shares[i]++
	}
	return shares
}
