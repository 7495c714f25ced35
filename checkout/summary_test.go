package checkout

import (
	"strings"
	"testing"

	"shop/contract"
)

// TestSummaryLocaleAndDisplay: a session's tool text writes amounts in the
// buyer's locale and as the session displays them.
func TestSummaryLocaleAndDisplay(t *testing.T) {
	c := &Checkout{policy: addrDemoPolicy(t)}
	s := &Session{ID: "cs_1", Status: Ready,
		LineItems: []LineItem{{Name: "Mug", Item: Item{Quantity: 1}, UnitAmount: 1800, BaseAmount: 1800, Subtotal: 1800, Tax: 342, Total: 2142}},
		Totals:    []Total{{Type: TotalSubtotal, Amount: 1800}, {Type: TotalFulfillment, Amount: 500}, {Type: TotalTax, Amount: 437}, {Type: TotalTotal, Amount: 2737}},
		Display:   contract.Display{PricesIncludeTax: true, TaxName: contract.TaxVAT}}
	got := c.summary(s, "de-DE")
	for _, want := range []string{"1 × Mug: 21,42\u00a0$", "Items 21,42\u00a0$, Shipping 5,95\u00a0$, Total 27,37\u00a0$, incl. VAT 4,37\u00a0$."} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	s.Display = contract.Display{TaxName: contract.TaxSales}
	got = c.summary(s, "")
	for _, want := range []string{"1 × Mug: $18.00", "Subtotal $18.00, Shipping $5.00, Sales tax $4.37, Total $27.37."} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}
