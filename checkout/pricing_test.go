package checkout

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/shopspring/decimal"

	"shop/money"
)

// pricingNow is Friday 6 March 2026, 15:04:05 UTC: one business day later
// is Monday 9 March.
var pricingNow = time.Date(2026, 3, 6, 15, 4, 5, 0, time.UTC)

// pricingMarch returns the given day of March 2026 at pricingNow's time of day.
func pricingMarch(day int) time.Time { return time.Date(2026, 3, day, 15, 4, 5, 0, time.UTC) }

// pricingPtr returns a pointer to v.
func pricingPtr[T any](v T) *T { return &v }

// pricingDemoPolicy is the demo merchant's policy (USD; US-CA 7.25 % with
// shipping untaxed, US-NY 8.875 % with shipping taxed; WELCOME10, SAVE5, FREESHIP).
func pricingDemoPolicy(t testing.TB) *Policy {
	t.Helper()
	p, err := LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pricingPolicy is testdata/valid.yaml changed by edit; it must still validate.
func pricingPolicy(t testing.TB, edit func(*Policy)) *Policy {
	t.Helper()
	p, err := LoadPolicyFile(os.DirFS("testdata"), "valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edit(p)
	if err := p.Validate(); err != nil {
		t.Fatalf("edited policy does not validate: %v", err)
	}
	return p
}

// jpyPolicy ships to Japan at ¥805 (free from ¥10,000) with 10 % tax on
// items and shipping.
func jpyPolicy(t testing.TB) *Policy {
	return pricingPolicy(t, func(p *Policy) {
		p.CurrencyCode = "jpy"
		p.Shipping.Zones = []Zone{{ID: "jp", Name: "Japan", Countries: []string{"JP"}, Rates: []ShippingRate{
			{ID: "yamato", Title: "Yamato", Carrier: "Yamato Transport", Price: 805, FreeOver: pricingPtr[int64](10000), MinDays: 1, MaxDays: 3},
		}}}
		p.Tax = []TaxRule{{Country: "JP", Rate: decimal.RequireFromString("10"), ShippingTaxable: true}}
		p.Promotions = nil
	})
}

// kwdPolicy ships to Kuwait at KWD 2.500 with 2.5 % tax on items and
// shipping, and has KWD10: KWD 1.000 off orders of KWD 10.000 or more.
func kwdPolicy(t testing.TB) *Policy {
	return pricingPolicy(t, func(p *Policy) {
		p.CurrencyCode = "kwd"
		p.Shipping.Zones = []Zone{{ID: "kw", Name: "Kuwait", Countries: []string{"KW"}, Rates: []ShippingRate{
			{ID: "aramex", Title: "Aramex", Carrier: "Aramex", Price: 2500, MinDays: 2, MaxDays: 2},
		}}}
		p.Tax = []TaxRule{{Country: "KW", Rate: decimal.RequireFromString("2.5"), ShippingTaxable: true}}
		p.Promotions = []Promotion{{Code: "KWD10", Kind: AmountOff, Amount: 1000, MinSubtotal: 10000}}
	})
}

// policyPromo returns the policy's promotion with the code.
func policyPromo(t testing.TB, p *Policy, code string) *Promotion {
	t.Helper()
	pr, ok := p.Promotion(code)
	if !ok {
		t.Fatalf("no promotion %s", code)
	}
	return pr
}

// pricingAddress is a complete address in country and state.
func pricingAddress(country, state string) *Address {
	return &Address{Name: "Ada Buyer", LineOne: "1 Main St", City: "Town", State: state, Country: country, PostalCode: "12345"}
}

// pricingLine is a cart line of variant id.
func pricingLine(id string, unit, qty int64) cartLine {
	return cartLine{VariantID: id, Quantity: qty, Name: "Item " + id, Images: []string{"https://img.example/" + id + ".jpg"}, UnitAmount: unit}
}

// wantLine is the expected line item of pricingLine(id, unit, qty); every
// amount is written out by hand.
func wantLine(id string, unit, qty, base, discount, subtotal, tax, total int64) LineItem {
	return LineItem{
		ID: "li_" + id, Item: Item{ID: id, Quantity: qty}, Name: "Item " + id,
		Images:     []string{"https://img.example/" + id + ".jpg"},
		UnitAmount: unit, BaseAmount: base, Discount: discount, Subtotal: subtotal, Tax: tax, Total: total,
	}
}

// wantTotals is the seven totals in their order, written out by hand.
func wantTotals(itemsBase, itemsDiscount, subtotal, discount, fulfillment, tax, total int64) []Total {
	return []Total{
		{Type: TotalItemsBase, DisplayText: "Items", Amount: itemsBase},
		{Type: TotalItemsDiscount, DisplayText: "Item discounts", Amount: itemsDiscount},
		{Type: TotalSubtotal, DisplayText: "Subtotal", Amount: subtotal},
		{Type: TotalDiscount, DisplayText: "Discount", Amount: discount},
		{Type: TotalFulfillment, DisplayText: "Shipping", Amount: fulfillment},
		{Type: TotalTax, DisplayText: "Tax", Amount: tax},
		{Type: TotalTotal, DisplayText: "Total", Amount: total},
	}
}

// usStandard is the demo's Standard option at pricingNow: 3–5 business days
// from Friday 6 March is Wednesday 11 to Friday 13 March.
func usStandard(subtotal, tax, total int64) FulfillmentOption {
	return FulfillmentOption{Type: "shipping", ID: "us-standard", Title: "Standard", Subtitle: "3–5 business days", Carrier: "USPS",
		EarliestDeliveryTime: pricingMarch(11), LatestDeliveryTime: pricingMarch(13), Subtotal: subtotal, Tax: tax, Total: total}
}

// usExpress is the demo's Express option at pricingNow: 1–2 business days
// from Friday 6 March is Monday 9 to Tuesday 10 March.
func usExpress(subtotal, tax, total int64) FulfillmentOption {
	return FulfillmentOption{Type: "shipping", ID: "us-express", Title: "Express", Subtitle: "1–2 business days", Carrier: "UPS",
		EarliestDeliveryTime: pricingMarch(9), LatestDeliveryTime: pricingMarch(10), Subtotal: subtotal, Tax: tax, Total: total}
}

// wantInfo is an info message without code.
func wantInfo(content string) Message {
	return Message{Type: MessageInfo, ContentType: "plain", Content: content}
}

// wantInvalid is an info message coded invalid for the field at param.
func wantInvalid(param, content string) Message {
	return Message{Type: MessageInfo, Code: "invalid", Param: param, ContentType: "plain", Content: content}
}

// TestPrice checks price against hand-computed carts; each case shows its
// arithmetic.
func TestPrice(t *testing.T) {
	demo := pricingDemoPolicy(t)
	jpy, kwd := jpyPolicy(t), kwdPolicy(t)
	welcome, save5, freeship := policyPromo(t, demo, "WELCOME10"), policyPromo(t, demo, "SAVE5"), policyPromo(t, demo, "FREESHIP")
	spring := &Promotion{Code: "SPRING", Kind: PercentOff, Percent: decimal.RequireFromString("15"),
		StartsAt: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), EndsAt: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	big20 := &Promotion{Code: "BIG20", Kind: AmountOff, Amount: 2000}
	const chooseStandard = "Shipping: Standard selected; other options: Express ($15.00)."

	tests := []struct {
		name string
		in   pricingInput
		want priced
	}{
		{
			// a: 1250×2 = 2500; b: 999. Items 3499; no address: no options, no tax.
			name: "NoAddress",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1250, 2), pricingLine("b", 999, 1)}},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1250, 2, 2500, 0, 2500, 0, 2500), wantLine("b", 999, 1, 999, 0, 999, 0, 999)},
				Totals:    wantTotals(3499, 0, 3499, 0, 0, 0, 3499),
				Total:     3499,
			},
		},
		{
			// Option id without an address: nothing to choose from.
			name: "OptionWithoutAddress",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1000, 1)}, OptionID: "us-express"},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1000, 1, 1000, 0, 1000, 0, 1000)},
				Totals:    wantTotals(1000, 0, 1000, 0, 0, 0, 1000),
				Total:     1000,
			},
		},
		{
			// CA 7.25 %, shipping untaxed. a: 2500 × 7.25 % = 181.25 → 181;
			// b: 999 × 7.25 % = 72.4275 → 72. Standard 500 (3499 < 7500) is
			// cheaper than Express 1500. Tax 181 + 72 = 253;
			// total 3499 + 500 + 253 = 4252.
			name: "CaliforniaStandard",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1250, 2), pricingLine("b", 999, 1)}, Address: pricingAddress("US", "CA")},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1250, 2, 2500, 0, 2500, 181, 2681), wantLine("b", 999, 1, 999, 0, 999, 72, 1071)},
				Options:   []FulfillmentOption{usStandard(500, 0, 500), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(3499, 0, 3499, 0, 500, 253, 4252),
				Messages:  []Message{wantInfo(chooseStandard)},
				Total:     4252,
			},
		},
		{
			// NY 8.875 %, shipping taxed; Express chosen. a: 2000 × 8.875 % =
			// 177.5 → 178; b: 1000 → 88.75 → 89. Standard: 500 → 44.375 → 44,
			// total 544; Express: 1500 → 133.125 → 133, total 1633.
			// fulfillment = Express subtotal 1500 (not its total 1633);
			// tax = 178 + 89 + 133 = 400; total = 3000 + 1500 + 400 = 4900
			// (the literal contract reading would charge 133 twice: 5033).
			name: "NewYorkShippingTaxed",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 2000, 1), pricingLine("b", 1000, 1)}, Address: pricingAddress("US", "NY"), OptionID: "us-express"},
			want: priced{
				LineItems: []LineItem{wantLine("a", 2000, 1, 2000, 0, 2000, 178, 2178), wantLine("b", 1000, 1, 1000, 0, 1000, 89, 1089)},
				Options:   []FulfillmentOption{usStandard(500, 44, 544), usExpress(1500, 133, 1633)},
				OptionID:  "us-express",
				Totals:    wantTotals(3000, 0, 3000, 0, 1500, 400, 4900),
				Total:     4900,
			},
		},
		{
			// 2500 × 3 = 7500 = free_over: Standard is free. Tax 7500 × 7.25 % =
			// 543.75 → 544; total 7500 + 0 + 544 = 8044.
			name: "FreeOverAtThreshold",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 2500, 3)}, Address: pricingAddress("US", "CA")},
			want: priced{
				LineItems: []LineItem{wantLine("a", 2500, 3, 7500, 0, 7500, 544, 8044)},
				Options:   []FulfillmentOption{usStandard(0, 0, 0), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(7500, 0, 7500, 0, 0, 544, 8044),
				Messages:  []Message{wantInfo("Free Standard shipping on orders over $75.00."), wantInfo(chooseStandard)},
				Total:     8044,
			},
		},
		{
			// 7499 < 7500: Standard costs 500. Tax 7499 × 7.25 % = 543.6775 →
			// 544; total 7499 + 500 + 544 = 8543.
			name: "FreeOverOneCentBelow",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 7499, 1)}, Address: pricingAddress("US", "CA")},
			want: priced{
				LineItems: []LineItem{wantLine("a", 7499, 1, 7499, 0, 7499, 544, 8043)},
				Options:   []FulfillmentOption{usStandard(500, 0, 500), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(7499, 0, 7499, 0, 500, 544, 8543),
				Messages:  []Message{wantInfo(chooseStandard)},
				Total:     8543,
			},
		},
		{
			// WELCOME10 (10 %, min 2500; items 5005). a: 1005 × 10 % = 100.5 →
			// 101, subtotal 904, tax 904 × 7.25 % = 65.54 → 66; b: 4000 → 400,
			// subtotal 3600, tax 261. Items discount 501, subtotal 4504 < 7500:
			// Standard 500. Tax 327; total 4504 + 500 + 327 = 5331.
			name: "PercentOffRoundsHalfUp",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1005, 1), pricingLine("b", 2000, 2)}, Address: pricingAddress("US", "CA"), Promo: welcome, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1005, 1, 1005, 101, 904, 66, 970), wantLine("b", 2000, 2, 4000, 400, 3600, 261, 3861)},
				Options:   []FulfillmentOption{usStandard(500, 0, 500), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(5005, 501, 4504, 0, 500, 327, 5331),
				Messages:  []Message{wantInfo("WELCOME10 applied: 10% off your items."), wantInfo(chooseStandard)},
				Total:     5331,
				Promo:     "WELCOME10",
			},
		},
		{
			// SAVE5 (500 off, min 4000; items exactly 4000), NY. Shares of 500
			// over 1333, 1333, 1334: 166.625, 166.625, 166.75 → floors 166 ×3 =
			// 498, 2 left: c (.75), then a (.625, tie with b, earlier wins):
			// 167, 166, 167. Tax on 1166 = 103.4825 → 103, on 1167 = 103.57125
			// → 104, on 1167 → 104. 4000 − 500 = 3500 < 7500: Standard 500,
			// tax 44. Tax 103 + 104 + 104 + 44 = 355; total 4000 − 500 + 500 +
			// 355 = 4355.
			name: "AmountOffAllocatedWithRemainder",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1333, 1), pricingLine("b", 1333, 1), pricingLine("c", 1334, 1)}, Address: pricingAddress("US", "NY"), Promo: save5, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{
					wantLine("a", 1333, 1, 1333, 0, 1333, 103, 1436),
					wantLine("b", 1333, 1, 1333, 0, 1333, 104, 1437),
					wantLine("c", 1334, 1, 1334, 0, 1334, 104, 1438),
				},
				Options:  []FulfillmentOption{usStandard(500, 44, 544), usExpress(1500, 133, 1633)},
				OptionID: "us-standard",
				Totals:   wantTotals(4000, 0, 4000, 500, 500, 355, 4355),
				Messages: []Message{wantInfo("SAVE5 applied: $5.00 off your order."), wantInfo("Shipping: Standard selected; other options: Express ($16.33).")},
				Total:    4355,
				Promo:    "SAVE5",
			},
		},
		{
			// BIG20 (2000 off) on 1500 + 499 = 1999: discount 1999, shares 1500
			// and 499, so no tax. 0 < 7500: Standard 500. Total 1999 − 1999 +
			// 500 + 0 = 500.
			name: "AmountOffLargerThanSubtotal",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1500, 1), pricingLine("b", 499, 1)}, Address: pricingAddress("US", "CA"), Promo: big20, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1500, 1, 1500, 0, 1500, 0, 1500), wantLine("b", 499, 1, 499, 0, 499, 0, 499)},
				Options:   []FulfillmentOption{usStandard(500, 0, 500), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(1999, 0, 1999, 1999, 500, 0, 500),
				Messages: []Message{
					wantInfo("BIG20 applied: $19.99 off your order (it is worth up to $20.00, but no more than your items cost)."),
					wantInfo(chooseStandard),
				},
				Total: 500,
				Promo: "BIG20",
			},
		},
		{
			// FREESHIP (min 3000; items 1500 × 2 = 3000), NY: both options 0.
			// Tax 3000 × 8.875 % = 266.25 → 266; total 3266.
			name: "FreeShipping",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1500, 2)}, Address: pricingAddress("US", "NY"), Promo: freeship, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1500, 2, 3000, 0, 3000, 266, 3266)},
				Options:   []FulfillmentOption{usStandard(0, 0, 0), usExpress(0, 0, 0)},
				OptionID:  "us-standard",
				Totals:    wantTotals(3000, 0, 3000, 0, 0, 266, 3266),
				Messages:  []Message{wantInfo("FREESHIP applied: free shipping on this order."), wantInfo("Shipping: Standard selected; other options: Express (free).")},
				Total:     3266,
				Promo:     "FREESHIP",
			},
		},
		{
			// WELCOME10 needs 2500; items 1950: 550 short.
			name: "PromoBelowMinSubtotal",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1950, 1)}, Promo: welcome, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1950, 1, 1950, 0, 1950, 0, 1950)},
				Totals:    wantTotals(1950, 0, 1950, 0, 0, 0, 1950),
				Messages:  []Message{wantInvalid("$.promo_code", "WELCOME10 needs items worth $25.00; add $5.50 more to use it.")},
				Total:     1950,
			},
		},
		{
			name: "PromoNotYetStarted",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1000, 1)}, Promo: spring, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1000, 1, 1000, 0, 1000, 0, 1000)},
				Totals:    wantTotals(1000, 0, 1000, 0, 0, 0, 1000),
				Messages:  []Message{wantInvalid("$.promo_code", "SPRING starts on 1 April 2026.")},
				Total:     1000,
			},
		},
		{
			// Now == StartsAt: it applies. 1000 × 15 % = 150.
			name: "PromoStartsNow",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1000, 1)}, Promo: spring, Now: spring.StartsAt},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1000, 1, 1000, 150, 850, 0, 850)},
				Totals:    wantTotals(1000, 150, 850, 0, 0, 0, 850),
				Messages:  []Message{wantInfo("SPRING applied: 15% off your items.")},
				Total:     850,
				Promo:     "SPRING",
			},
		},
		{
			// One second before EndsAt: it still applies.
			name: "PromoLastSecond",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1000, 1)}, Promo: spring, Now: spring.EndsAt.Add(-time.Second)},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1000, 1, 1000, 150, 850, 0, 850)},
				Totals:    wantTotals(1000, 150, 850, 0, 0, 0, 850),
				Messages:  []Message{wantInfo("SPRING applied: 15% off your items.")},
				Total:     850,
				Promo:     "SPRING",
			},
		},
		{
			// Now == EndsAt: it has ended.
			name: "PromoEnded",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1000, 1)}, Promo: spring, Now: spring.EndsAt},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1000, 1, 1000, 0, 1000, 0, 1000)},
				Totals:    wantTotals(1000, 0, 1000, 0, 0, 0, 1000),
				Messages:  []Message{wantInvalid("$.promo_code", "SPRING ended on 1 May 2026.")},
				Total:     1000,
			},
		},
		{
			// WELCOME10's usage_limit is 10000.
			name: "PromoUsageLimitReached",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 3000, 1)}, Promo: welcome, PromoUses: 10000, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 3000, 1, 3000, 0, 3000, 0, 3000)},
				Totals:    wantTotals(3000, 0, 3000, 0, 0, 0, 3000),
				Messages:  []Message{wantInvalid("$.promo_code", "WELCOME10 has been used up: it has been used as many times as it can be.")},
				Total:     3000,
			},
		},
		{
			// The 10000th use is allowed: 3000 × 10 % = 300.
			name: "PromoLastUse",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 3000, 1)}, Promo: welcome, PromoUses: 9999, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 3000, 1, 3000, 300, 2700, 0, 2700)},
				Totals:    wantTotals(3000, 300, 2700, 0, 0, 0, 2700),
				Messages:  []Message{wantInfo("WELCOME10 applied: 10% off your items.")},
				Total:     2700,
				Promo:     "WELCOME10",
			},
		},
		{
			// An unknown id sent: an error naming the ids offered, and no
			// option chosen. Tax 1000 × 7.25 % = 72.5 → 73; total 1000 + 73.
			name: "UnknownOptionID",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1000, 1)}, Address: pricingAddress("US", "CA"), OptionID: "overnight"},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1000, 1, 1000, 0, 1000, 73, 1073)},
				Options:   []FulfillmentOption{usStandard(500, 0, 500), usExpress(1500, 0, 1500)},
				Totals:    wantTotals(1000, 0, 1000, 0, 0, 73, 1073),
				Errors: []Message{{Type: MessageError, Code: "invalid", Param: "$.fulfillment_option_id", ContentType: "plain",
					Content: `There is no shipping option "overnight" for this address; choose one of "us-standard", "us-express".`}},
				Total: 1073,
			},
		},
		{
			// A choice made before that the address's zone does not offer
			// (kept): the cheapest (Standard) replaces it, with an info
			// message. Total 1000 + 500 + 73 = 1573.
			name: "KeptOptionVanished",
			in: pricingInput{Lines: []cartLine{pricingLine("a", 1000, 1)}, Address: pricingAddress("US", "CA"),
				OptionID: "ca-standard", OptionKept: true},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1000, 1, 1000, 0, 1000, 73, 1073)},
				Options:   []FulfillmentOption{usStandard(500, 0, 500), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(1000, 0, 1000, 0, 500, 73, 1573),
				Messages: []Message{wantInvalid("$.fulfillment_option_id",
					`The shipping option "ca-standard" is not offered for this address; Standard is selected instead. The options are "us-standard", "us-express".`)},
				Total: 1573,
			},
		},
		{
			// Express kept although dearer: 1000 + 1500 + 73 = 2573.
			name: "ChosenOptionKept",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 1000, 1)}, Address: pricingAddress("US", "CA"), OptionID: "us-express"},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1000, 1, 1000, 0, 1000, 73, 1073)},
				Options:   []FulfillmentOption{usStandard(500, 0, 500), usExpress(1500, 0, 1500)},
				OptionID:  "us-express",
				Totals:    wantTotals(1000, 0, 1000, 0, 1500, 73, 2573),
				Total:     2573,
			},
		},
		{
			// JPY (exponent 0), 10 % on items and shipping. a: 1205 → 120.5 →
			// 121; b: 999 × 3 = 2997 → 299.7 → 300; Yamato 805 → 80.5 → 81,
			// total 886. Items 4202 < 10000. Tax 121 + 300 + 81 = 502; total
			// 4202 + 805 + 502 = 5509. 1–3 business days from Friday: Monday 9
			// to Wednesday 11 March.
			name: "JPYHalfYenRoundsUp",
			in:   pricingInput{Policy: jpy, Lines: []cartLine{pricingLine("a", 1205, 1), pricingLine("b", 999, 3)}, Address: pricingAddress("JP", "13")},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1205, 1, 1205, 0, 1205, 121, 1326), wantLine("b", 999, 3, 2997, 0, 2997, 300, 3297)},
				Options: []FulfillmentOption{{Type: "shipping", ID: "yamato", Title: "Yamato", Subtitle: "1–3 business days", Carrier: "Yamato Transport",
					EarliestDeliveryTime: pricingMarch(9), LatestDeliveryTime: pricingMarch(11), Subtotal: 805, Tax: 81, Total: 886}},
				OptionID: "yamato",
				Totals:   wantTotals(4202, 0, 4202, 0, 805, 502, 5509),
				Messages: []Message{wantInfo("Shipping: Yamato selected.")},
				Total:    5509,
			},
		},
		{
			// JPY: 1205 + 8795 = 10000 = free_over. Tax 120.5 → 121 and 879.5
			// → 880 = 1001; total 11001.
			name: "JPYFreeOver",
			in:   pricingInput{Policy: jpy, Lines: []cartLine{pricingLine("a", 1205, 1), pricingLine("b", 8795, 1)}, Address: pricingAddress("JP", "13")},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1205, 1, 1205, 0, 1205, 121, 1326), wantLine("b", 8795, 1, 8795, 0, 8795, 880, 9675)},
				Options: []FulfillmentOption{{Type: "shipping", ID: "yamato", Title: "Yamato", Subtitle: "1–3 business days", Carrier: "Yamato Transport",
					EarliestDeliveryTime: pricingMarch(9), LatestDeliveryTime: pricingMarch(11)}},
				OptionID: "yamato",
				Totals:   wantTotals(10000, 0, 10000, 0, 0, 1001, 11001),
				Messages: []Message{wantInfo("Free Yamato shipping on orders over ¥10,000."), wantInfo("Shipping: Yamato selected.")},
				Total:    11001,
			},
		},
		{
			// KWD (exponent 3), 2.5 % on items and shipping. a: 1234 → 30.85 →
			// 31; b: 1340 × 3 = 4020 → 100.5 → 101; Aramex 2500 → 62.5 → 63.
			// KWD10 needs 10000; items 5254: 4746 short. Tax 31 + 101 + 63 =
			// 195; total 5254 + 2500 + 195 = 7949. 2 business days from
			// Friday: Tuesday 10 March.
			name: "KWDHalfFilsRoundsUp",
			in: pricingInput{Policy: kwd, Lines: []cartLine{pricingLine("a", 1234, 1), pricingLine("b", 1340, 3)}, Address: pricingAddress("KW", ""),
				Promo: policyPromo(t, kwd, "KWD10"), Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 1234, 1, 1234, 0, 1234, 31, 1265), wantLine("b", 1340, 3, 4020, 0, 4020, 101, 4121)},
				Options: []FulfillmentOption{{Type: "shipping", ID: "aramex", Title: "Aramex", Subtitle: "2 business days", Carrier: "Aramex",
					EarliestDeliveryTime: pricingMarch(10), LatestDeliveryTime: pricingMarch(10), Subtotal: 2500, Tax: 63, Total: 2563}},
				OptionID: "aramex",
				Totals:   wantTotals(5254, 0, 5254, 0, 2500, 195, 7949),
				Messages: []Message{
					wantInvalid("$.promo_code", "KWD10 needs items worth KWD\u00a010.000; add KWD\u00a04.746 more to use it."),
					wantInfo("Shipping: Aramex selected."),
				},
				Total: 7949,
			},
		},
		{
			// KWD10 on 3333 + 3333 + 3334 = 10000: shares 333.3, 333.3, 333.4
			// → 333 ×3 = 999, 1 left to c (.4): 333, 333, 334. Each line taxed
			// on 3000: 75. Tax 75 × 3 + 63 = 288; total 10000 − 1000 + 2500 +
			// 288 = 11788.
			name: "KWDAmountOff",
			in: pricingInput{Policy: kwd, Lines: []cartLine{pricingLine("a", 3333, 1), pricingLine("b", 3333, 1), pricingLine("c", 3334, 1)}, Address: pricingAddress("KW", ""),
				Promo: policyPromo(t, kwd, "KWD10"), Now: pricingNow},
			want: priced{
				LineItems: []LineItem{
					wantLine("a", 3333, 1, 3333, 0, 3333, 75, 3408),
					wantLine("b", 3333, 1, 3333, 0, 3333, 75, 3408),
					wantLine("c", 3334, 1, 3334, 0, 3334, 75, 3409),
				},
				Options: []FulfillmentOption{{Type: "shipping", ID: "aramex", Title: "Aramex", Subtitle: "2 business days", Carrier: "Aramex",
					EarliestDeliveryTime: pricingMarch(10), LatestDeliveryTime: pricingMarch(10), Subtotal: 2500, Tax: 63, Total: 2563}},
				OptionID: "aramex",
				Totals:   wantTotals(10000, 0, 10000, 1000, 2500, 288, 11788),
				Messages: []Message{wantInfo("KWD10 applied: KWD\u00a01.000 off your order."), wantInfo("Shipping: Aramex selected.")},
				Total:    11788,
				Promo:    "KWD10",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.Policy == nil {
				tc.in.Policy = demo
			}
			if tc.in.Now.IsZero() {
				tc.in.Now = pricingNow
			}
			got := price(tc.in)
			if got.Options == nil || got.Messages == nil || got.LineItems == nil {
				t.Errorf("nil slice in %+v; want [] for none", got)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(priced{}, "Applied", "Rejected"), contentOnly); diff != "" {
				t.Errorf("price() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAllocate checks the largest-remainder shares of an order discount.
func TestAllocate(t *testing.T) {
	tests := []struct {
		name      string
		discount  int64
		subtotals []int64
		want      []int64
	}{
		// 166.625, 166.625, 166.75: 2 left go to c, then a.
		{"LargestRemainder", 500, []int64{1333, 1333, 1334}, []int64{167, 166, 167}},
		// 2/3 each: 0 + remainder 2 each; 2 left go to the first two.
		{"TiesToEarlierLine", 2, []int64{1, 1, 1}, []int64{1, 1, 0}},
		{"Zero", 0, []int64{5, 5}, []int64{0, 0}},
		{"Empty", 0, nil, []int64{}},
		{"WholeSubtotal", 10, []int64{3, 0, 7}, []int64{3, 0, 7}},
		{"ZeroLineGetsNothing", 5, []int64{0, 10}, []int64{0, 5}},
		// Products up to 2e31 need 128 bits: 4e15 × (5e15 − 1) / 5e15 =
		// 4e15 − 0.8 and 1e15 − 0.2; the 1 left goes to the second line.
		{"NoOverflow", 5e15 - 1, []int64{4e15, 1e15}, []int64{4e15 - 1, 1e15}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, allocate(tc.discount, tc.subtotals)); diff != "" {
				t.Errorf("allocate(%d, %v) mismatch (-want +got):\n%s", tc.discount, tc.subtotals, diff)
			}
		})
	}
}

// TestAddBusinessDays checks delivery estimates skip UTC weekends.
func TestAddBusinessDays(t *testing.T) {
	at := func(month time.Month, day, hour, min int) time.Time {
		return time.Date(2026, month, day, hour, min, 0, 0, time.UTC)
	}
	newYork := time.FixedZone("EST", -5*3600)
	tests := []struct {
		name string
		from time.Time
		days int
		want time.Time
	}{
		{"ZeroIsNow", at(3, 6, 15, 4), 0, at(3, 6, 15, 4)},
		{"ZeroOnSaturdayIsNow", at(3, 7, 9, 0), 0, at(3, 7, 9, 0)},
		{"FridayPlusOneIsMonday", at(3, 6, 15, 4), 1, at(3, 9, 15, 4)},
		{"SaturdayPlusOneIsMonday", at(3, 7, 9, 0), 1, at(3, 9, 9, 0)},
		{"SundayPlusOneIsMonday", at(3, 8, 23, 59), 1, at(3, 9, 23, 59)},
		{"MondayPlusFiveIsMonday", at(3, 9, 8, 0), 5, at(3, 16, 8, 0)},
		{"FridayPlusTen", at(3, 6, 15, 4), 10, at(3, 20, 15, 4)},
		{"AcrossMonths", at(3, 27, 12, 0), 3, at(4, 1, 12, 0)},
		// Friday 23:30 in New York is Saturday 04:30 UTC: weekdays are UTC's.
		{"WeekdayInUTC", time.Date(2026, 3, 6, 23, 30, 0, 0, newYork), 1, at(3, 9, 4, 30)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := addBusinessDays(tc.from, tc.days)
			if !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Errorf("addBusinessDays(%v, %d) = %v, want %v in UTC", tc.from, tc.days, got, tc.want)
			}
		})
	}
}

// TestPriceProperties prices random carts under random policies and checks
// every identity of CONTRACT.md §4 (with fulfillment = the chosen option's
// subtotal, see price).
func TestPriceProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(20260306, 1))
	seen := map[string]int{} // how often each case came up, so that none goes untested
	for n := range 5000 {
		p := randomPricingPolicy(t, rng)
		in := randomPricingInput(rng, p)
		got := price(in)
		if t.Failed() {
			return
		}
		if err := checkPriced(in, got); err != nil {
			t.Fatalf("cart %d: %v\ninput: %+v\nlines: %+v\naddress: %+v\npromo: %+v\ngot: %+v", n, err, in, in.Lines, in.Address, in.Promo, got)
		}
		for _, m := range got.Messages {
			switch {
			case m.Param == "$.promo_code":
				seen["promo refused"]++
			case m.Param == "$.fulfillment_option_id":
				seen["vanished option replaced"]++
			case strings.Contains(m.Content, " applied: "):
				seen[string(in.Promo.Kind)+" applied"]++
			case strings.HasPrefix(m.Content, "Free "):
				seen["free over"]++
			case strings.HasPrefix(m.Content, "Shipping: "):
				seen["option chosen for the buyer"]++
			}
		}
		if len(got.Errors) > 0 {
			seen["unknown option refused"]++
		}
		if got.Totals[3].Amount > 0 && got.Totals[3].Amount == got.Totals[2].Amount {
			seen["amount_off takes everything"]++
		}
		if got.OptionID != "" && got.OptionID == in.OptionID {
			seen["option kept"]++
		}
		if slices.ContainsFunc(got.Options, func(o FulfillmentOption) bool { return o.Tax > 0 }) {
			seen["shipping taxed"]++
		}
		if in.Address == nil {
			seen["no address"]++
		}
	}
	for _, c := range []string{"promo refused", "vanished option replaced", "unknown option refused", "percent_off applied", "amount_off applied", "free_shipping applied",
		"free over", "option chosen for the buyer", "amount_off takes everything", "option kept", "shipping taxed", "no address"} {
		if seen[c] < 20 {
			t.Errorf("%q came up in %d carts only; want ≥ 20 (%v)", c, seen[c], seen)
		}
	}
	t.Logf("cases: %v", seen)
}

// propCountries are the countries random policies ship to.
var propCountries = []string{"US", "CA", "DE", "FR", "JP", "KW", "GB"}

// randomPricingPolicy returns a valid random policy (from
// testdata/valid.yaml) with one random promotion.
func randomPricingPolicy(t *testing.T, rng *rand.Rand) *Policy {
	return pricingPolicy(t, func(p *Policy) {
		p.CurrencyCode = []string{"usd", "jpy", "kwd"}[rng.IntN(3)]
		countries := slices.Clone(propCountries)
		rng.Shuffle(len(countries), func(i, j int) { countries[i], countries[j] = countries[j], countries[i] })
		p.Shipping.Zones = nil
		for z := 0; len(countries) > 0; z++ {
			k := 1 + rng.IntN(len(countries))
			zone := Zone{ID: fmt.Sprintf("z%d", z), Name: "Zone", Countries: countries[:k]}
			countries = countries[k:]
			for r := range 1 + rng.IntN(3) {
				minDays := rng.IntN(11)
				rate := ShippingRate{ID: fmt.Sprintf("r%d", r), Title: fmt.Sprintf("Rate %d", r), Price: rng.Int64N(1_000_001),
					MinDays: minDays, MaxDays: minDays + rng.IntN(11)}
				if rng.IntN(2) == 0 {
					rate.FreeOver = pricingPtr(spreadAmount(rng, 11))
				}
				zone.Rates = append(zone.Rates, rate)
			}
			p.Shipping.Zones = append(p.Shipping.Zones, zone)
		}
		p.Tax = nil
		for _, c := range propCountries {
			if rng.IntN(4) > 0 {
				p.Tax = append(p.Tax, TaxRule{Country: c, Rate: randomTaxRate(rng), ShippingTaxable: rng.IntN(2) == 0})
			}
		}
		for _, r := range []string{"CA", "NY"} {
			if rng.IntN(2) == 0 {
				p.Tax = append(p.Tax, TaxRule{Country: "US", Region: r, Rate: randomTaxRate(rng), ShippingTaxable: rng.IntN(2) == 0})
			}
		}
		pr := Promotion{Code: "RANDOM"}
		switch rng.IntN(3) {
		case 0:
			pr.Kind, pr.Percent = PercentOff, decimal.New(1+rng.Int64N(100_000), -3) // 0.001 to 100
		case 1:
			pr.Kind, pr.Amount = AmountOff, 1+spreadAmount(rng, 11)
		default:
			pr.Kind = FreeShipping
		}
		if rng.IntN(2) == 0 {
			pr.MinSubtotal = spreadAmount(rng, 11)
		}
		if rng.IntN(3) == 0 {
			pr.StartsAt = pricingNow.Add(time.Duration(rng.IntN(21)-10) * time.Hour)
			pr.EndsAt = pr.StartsAt.Add(time.Duration(1+rng.IntN(20)) * time.Hour)
		}
		if rng.IntN(3) == 0 {
			pr.UsageLimit = pricingPtr(1 + rng.IntN(5))
		}
		p.Promotions = []Promotion{pr}
	})
}

// spreadAmount returns a random amount below 10^k for a random k ≤ maxDigits,
// so that small and large amounts are both common.
func spreadAmount(rng *rand.Rand, maxDigits int) int64 {
	n := int64(1)
	for range rng.IntN(maxDigits + 1) {
		n *= 10
	}
	return rng.Int64N(n)
}

// randomTaxRate is a percentage from 0 to 25 with up to 3 decimals.
func randomTaxRate(rng *rand.Rand) decimal.Decimal { return decimal.New(rng.Int64N(25_001), -3) }

// randomPricingInput is a random cart of 1–50 lines for p, with or without an
// address, option and promotion. Unit prices are up to 1e6 minor units, or
// in one cart of 20 close to 1e11, the caller's bound, where line amounts
// stay below 1e14 (money.Percent accepts up to 1e15) and sums below 5e15.
func randomPricingInput(rng *rand.Rand, p *Policy) pricingInput {
	in := pricingInput{Policy: p, Now: pricingNow, PromoUses: rng.Int64N(6)}
	huge := rng.IntN(20) == 0
	for i := range 1 + rng.IntN(50) {
		unit := rng.Int64N(1_000_001)
		if huge {
			unit = 100_000_000_000 - rng.Int64N(1000) // near the caller's bound of 1e11
		}
		in.Lines = append(in.Lines, pricingLine(fmt.Sprintf("v%d", i), unit, 1+rng.Int64N(999)))
	}
	if rng.IntN(4) > 0 {
		in.Address = pricingAddress(propCountries[rng.IntN(len(propCountries))], []string{"", "CA", "NY", "WA"}[rng.IntN(4)])
	}
	switch rng.IntN(4) {
	case 0:
		in.OptionID = fmt.Sprintf("r%d", rng.IntN(3)) // may be in no zone of the address
	case 1:
		in.OptionID = "bogus"
	}
	in.OptionKept = in.OptionID != "" && rng.IntN(2) == 0
	if rng.IntN(5) > 0 {
		in.Promo = &p.Promotions[0]
	}
	return in
}

// checkPriced checks got against the identities of CONTRACT.md §4.
func checkPriced(in pricingInput, got priced) error {
	if got.LineItems == nil || got.Options == nil || got.Messages == nil {
		return fmt.Errorf("nil slice")
	}
	if len(got.LineItems) != len(in.Lines) {
		return fmt.Errorf("%d line items for %d lines", len(got.LineItems), len(in.Lines))
	}
	var sumBase, sumDiscount, sumTax int64
	subtotals := make([]int64, len(got.LineItems))
	for i, l := range got.LineItems {
		c := in.Lines[i]
		switch {
		case l.ID != "li_"+c.VariantID || l.Item != (Item{ID: c.VariantID, Quantity: c.Quantity}) || l.UnitAmount != c.UnitAmount:
			return fmt.Errorf("line %d: %+v does not match the cart line %+v", i, l, c)
		case l.BaseAmount != l.UnitAmount*l.Item.Quantity:
			return fmt.Errorf("line %d: base_amount %d ≠ %d × %d", i, l.BaseAmount, l.UnitAmount, l.Item.Quantity)
		case l.Subtotal != l.BaseAmount-l.Discount:
			return fmt.Errorf("line %d: subtotal %d ≠ %d − %d", i, l.Subtotal, l.BaseAmount, l.Discount)
		case l.Total != l.Subtotal+l.Tax:
			return fmt.Errorf("line %d: total %d ≠ %d + %d", i, l.Total, l.Subtotal, l.Tax)
		case l.UnitAmount < 0 || l.BaseAmount < 0 || l.Discount < 0 || l.Subtotal < 0 || l.Tax < 0 || l.Total < 0:
			return fmt.Errorf("line %d: negative amount in %+v", i, l)
		}
		sumBase += l.BaseAmount
		sumDiscount += l.Discount
		sumTax += l.Tax
		subtotals[i] = l.Subtotal
	}

	var zone *Zone
	if in.Address != nil {
		zone, _ = in.Policy.Zone(in.Address.Country)
	}
	if zone == nil && len(got.Options) != 0 || zone != nil && len(got.Options) != len(zone.Rates) {
		return fmt.Errorf("%d options for address %+v", len(got.Options), in.Address)
	}
	var chosen *FulfillmentOption
	for i, o := range got.Options {
		if o.Total != o.Subtotal+o.Tax || o.Subtotal < 0 || o.Tax < 0 {
			return fmt.Errorf("option %d: %+v: want total = subtotal + tax, all ≥ 0", i, o)
		}
		if o.ID == got.OptionID {
			chosen = &got.Options[i]
		}
	}
	offered := slices.ContainsFunc(got.Options, func(o FulfillmentOption) bool { return o.ID == in.OptionID })
	refused := len(got.Options) > 0 && in.OptionID != "" && !offered && !in.OptionKept
	switch {
	case len(got.Options) == 0 && got.OptionID != "":
		return fmt.Errorf("option %q chosen without options", got.OptionID)
	case refused && (got.OptionID != "" || len(got.Errors) != 1 || got.Errors[0].Type != MessageError ||
		got.Errors[0].Code != "invalid" || got.Errors[0].Param != "$.fulfillment_option_id" || !strings.Contains(got.Errors[0].Content, in.OptionID)):
		return fmt.Errorf("option %q sent and not offered: chose %q, errors %+v; want none chosen and an invalid error", in.OptionID, got.OptionID, got.Errors)
	case !refused && len(got.Errors) > 0:
		return fmt.Errorf("errors %+v for option %q (kept %t)", got.Errors, in.OptionID, in.OptionKept)
	case len(got.Options) > 0 && chosen == nil && !refused:
		return fmt.Errorf("chosen option %q is not among the options", got.OptionID)
	case chosen != nil:
		// The option asked for when it is offered, else the first cheapest.
		best := 0
		for i, o := range got.Options {
			if o.ID == in.OptionID {
				best = i
				break
			}
			if o.Total < got.Options[best].Total {
				best = i
			}
		}
		if want := got.Options[best].ID; chosen.ID != want {
			return fmt.Errorf("option %q chosen (asked for %q), want %q", chosen.ID, in.OptionID, want)
		}
	}

	want := []TotalType{TotalItemsBase, TotalItemsDiscount, TotalSubtotal, TotalDiscount, TotalFulfillment, TotalTax, TotalTotal}
	if len(got.Totals) != len(want) {
		return fmt.Errorf("totals %+v: want the 7 entries", got.Totals)
	}
	amount := map[TotalType]int64{}
	for i, tot := range got.Totals {
		if tot.Type != want[i] {
			return fmt.Errorf("totals[%d] is %s, want %s", i, tot.Type, want[i])
		}
		if tot.Amount < 0 {
			return fmt.Errorf("negative total %+v", tot)
		}
		amount[tot.Type] = tot.Amount
	}
	var fulfillment, optionTax int64
	if chosen != nil {
		fulfillment, optionTax = chosen.Subtotal, chosen.Tax
	}
	discount := amount[TotalDiscount]
	switch {
	case amount[TotalItemsBase] != sumBase:
		return fmt.Errorf("items_base_amount %d ≠ Σ base_amount %d", amount[TotalItemsBase], sumBase)
	case amount[TotalItemsDiscount] != sumDiscount:
		return fmt.Errorf("items_discount %d ≠ Σ discount %d", amount[TotalItemsDiscount], sumDiscount)
	case amount[TotalSubtotal] != sumBase-sumDiscount:
		return fmt.Errorf("subtotal %d ≠ %d − %d", amount[TotalSubtotal], sumBase, sumDiscount)
	case discount > amount[TotalSubtotal]:
		return fmt.Errorf("discount %d exceeds the subtotal %d", discount, amount[TotalSubtotal])
	case amount[TotalFulfillment] != fulfillment:
		return fmt.Errorf("fulfillment %d ≠ the chosen option's subtotal %d", amount[TotalFulfillment], fulfillment)
	case amount[TotalTax] != sumTax+optionTax:
		return fmt.Errorf("tax %d ≠ Σ line tax %d + option tax %d", amount[TotalTax], sumTax, optionTax)
	case amount[TotalTotal] != amount[TotalSubtotal]-discount+fulfillment+amount[TotalTax]:
		return fmt.Errorf("total %d ≠ %d − %d + %d + %d", amount[TotalTotal], amount[TotalSubtotal], discount, fulfillment, amount[TotalTax])
	case got.Total != amount[TotalTotal]:
		return fmt.Errorf("Total %d ≠ the total entry %d", got.Total, amount[TotalTotal])
	case in.Address == nil && amount[TotalTax] != 0:
		return fmt.Errorf("tax %d without an address", amount[TotalTax])
	case discount > 0 && (in.Promo == nil || in.Promo.Kind != AmountOff):
		return fmt.Errorf("order discount %d without an amount_off promotion", discount)
	}

	// The order discount's shares: they sum to it, each is the floor or the
	// ceiling of the line's exact proportional share, and each line is
	// taxed on its subtotal minus its share.
	shares := allocate(discount, subtotals)
	var sumShares int64
	var rate decimal.Decimal
	if in.Address != nil {
		rate, _ = in.Policy.TaxRate(in.Address.Country, in.Address.State)
	}
	for i, s := range shares {
		sumShares += s
		exact := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(discount), big.NewInt(subtotals[i])), big.NewInt(max(sumBase-sumDiscount, 1)))
		floor := new(big.Int).Quo(exact.Num(), exact.Denom())
		if s < 0 || s > subtotals[i] || (s != floor.Int64() && s != floor.Int64()+1) {
			return fmt.Errorf("line %d: share %d of %d, exactly %s", i, s, discount, exact.FloatString(3))
		}
		if tax := money.Percent(subtotals[i]-s, rate); got.LineItems[i].Tax != tax {
			return fmt.Errorf("line %d: tax %d, want %s %% of %d − %d = %d", i, got.LineItems[i].Tax, rate, subtotals[i], s, tax)
		}
	}
	if sumShares != discount {
		return fmt.Errorf("shares %v sum to %d, not the discount %d", shares, sumShares, discount)
	}

	for _, m := range got.Messages {
		if m.Type != MessageInfo || m.ContentType != "plain" || m.Content == "" {
			return fmt.Errorf("message %+v: want a plain info message", m)
		}
	}
	return nil
}
