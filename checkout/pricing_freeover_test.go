package checkout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestPriceFreeOverAfterDiscounts: free_over is judged on the items
// subtotal after every discount, the order-level one (amount_off) as well as
// the line discounts (percent_off). Each case has items worth at least the
// demo's free_over ($75.00) before its discount; shipping is free exactly
// when what is left after the discount is still $75.00 or more.
func TestPriceFreeOverAfterDiscounts(t *testing.T) {
	demo := pricingDemoPolicy(t)
	welcome, save5 := policyPromo(t, demo, "WELCOME10"), policyPromo(t, demo, "SAVE5")
	const chooseStandard = "Shipping: Standard selected; other options: Express ($15.00)."

	tests := []struct {
		name string
		in   pricingInput
		want priced
	}{
		{
			// SAVE5 (500 off the order) on 3900 × 2 = 7800: the subtotal
			// is over 7500, but 7800 − 500 = 7300 is not: Standard costs
			// 500. Tax on 7800 − 500 (a's share) = 7300 × 7.25 % = 529.25
			// → 529; total 7800 − 500 + 500 + 529 = 8329.
			name: "OrderDiscountTakesItUnder",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 3900, 2)}, Address: pricingAddress("US", "CA"), Promo: save5, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 3900, 2, 7800, 0, 7800, 529, 8329)},
				Options:   []FulfillmentOption{usStandard(500, 0, 500), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(7800, 0, 7800, 500, 500, 529, 8329),
				Messages:  []Message{wantInfo("SAVE5 applied: $5.00 off your order."), wantInfo(chooseStandard)},
				Total:     8329,
				Promo:     "SAVE5",
			},
		},
		{
			// SAVE5 on 4000 × 2 = 8000: 8000 − 500 = 7500 = free_over:
			// Standard is free. Tax 7500 × 7.25 % = 543.75 → 544; total
			// 8000 − 500 + 0 + 544 = 8044.
			name: "OrderDiscountLeavesItAtThreshold",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 4000, 2)}, Address: pricingAddress("US", "CA"), Promo: save5, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 4000, 2, 8000, 0, 8000, 544, 8544)},
				Options:   []FulfillmentOption{usStandard(0, 0, 0), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(8000, 0, 8000, 500, 0, 544, 8044),
				Messages: []Message{wantInfo("SAVE5 applied: $5.00 off your order."),
					wantInfo("Free Standard shipping on orders over $75.00."), wantInfo(chooseStandard)},
				Total: 8044,
				Promo: "SAVE5",
			},
		},
		{
			// WELCOME10 (10 % off the lines) on 4000 × 2 = 8000: discount
			// 800, subtotal 7200 < 7500: Standard costs 500. Tax 7200 × 7.25
			// % = 522; total 7200 + 500 + 522 = 8222.
			name: "LineDiscountTakesItUnder",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 4000, 2)}, Address: pricingAddress("US", "CA"), Promo: welcome, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 4000, 2, 8000, 800, 7200, 522, 7722)},
				Options:   []FulfillmentOption{usStandard(500, 0, 500), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(8000, 800, 7200, 0, 500, 522, 8222),
				Messages:  []Message{wantInfo("WELCOME10 applied: 10% off your items."), wantInfo(chooseStandard)},
				Total:     8222,
				Promo:     "WELCOME10",
			},
		},
		{
			// WELCOME10 on 4167 × 2 = 8334: 833.4 → 833 off, subtotal 7501
			// ≥ 7500: Standard is free. Tax 7501 × 7.25 % = 543.8225 → 544;
			// total 7501 + 0 + 544 = 8045.
			name: "LineDiscountLeavesItOver",
			in:   pricingInput{Lines: []cartLine{pricingLine("a", 4167, 2)}, Address: pricingAddress("US", "CA"), Promo: welcome, Now: pricingNow},
			want: priced{
				LineItems: []LineItem{wantLine("a", 4167, 2, 8334, 833, 7501, 544, 8045)},
				Options:   []FulfillmentOption{usStandard(0, 0, 0), usExpress(1500, 0, 1500)},
				OptionID:  "us-standard",
				Totals:    wantTotals(8334, 833, 7501, 0, 0, 544, 8045),
				Messages: []Message{wantInfo("WELCOME10 applied: 10% off your items."),
					wantInfo("Free Standard shipping on orders over $75.00."), wantInfo(chooseStandard)},
				Total: 8045,
				Promo: "WELCOME10",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Policy = demo
			if diff := cmp.Diff(tt.want, price(tt.in), cmpopts.EquateEmpty(), cmpopts.IgnoreFields(priced{}, "Applied", "Rejected"), contentOnly); diff != "" {
				t.Errorf("price (-want +got):\n%s", diff)
			}
		})
	}
}
