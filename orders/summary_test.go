package orders

import (
	"strings"
	"testing"
	"time"

	"shop/contract"
)

// TestSummaryForBuyers: get_order's text shows refunds with their amounts,
// the address in its country's order and amounts in the buyer's locale,
// and never the payment provider's internals; the staff's text keeps them.
func TestSummaryForBuyers(t *testing.T) {
	ord := &contract.Order{ID: "ord_1", PermalinkURL: "https://shop/orders/ord_1", Receipt: contract.Receipt{
		Number: 1001, Status: "refunded", Currency: "eur", CreatedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		LineItems:          []contract.LineItem{{Name: "Mug", Item: contract.Item{Quantity: 1}, Subtotal: 1800, Tax: 342, Total: 2142}},
		Totals:             []contract.Total{{Type: contract.TotalSubtotal, Amount: 1800}, {Type: contract.TotalTax, Amount: 342}, {Type: contract.TotalTotal, Amount: 2142}},
		FulfillmentAddress: &contract.Address{Name: "Jo", LineOne: "Invalidenstr. 1", City: "Berlin", Country: "DE", PostalCode: "10115"},
		FulfillmentOption:  &contract.FulfillmentOption{Title: "Standard"},
		Payment:            contract.Payment{Provider: "sandbox", Mode: "test", Reference: "pi_sandbox_123", Status: "succeeded"},
		Display:            contract.Display{PricesIncludeTax: true, TaxName: contract.TaxVAT},
		Refunds:            []contract.Refund{{Amount: 500, CreatedAt: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}},
		RefundedAmount:     500,
	}}
	got := summary(ord, "de")
	for _, want := range []string{"Mug (21,42\u00a0€)", "to Jo, Invalidenstr. 1, 10115 Berlin, DE", "Total 21,42\u00a0€, incl. VAT 3,42\u00a0€",
		"Refunded 5,00\u00a0€ on 3 December 2026."} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, never := range []string{"sandbox", "pi_", "reference"} {
		if strings.Contains(got, never) {
			t.Errorf("the buyer's summary shows %q:\n%s", never, got)
		}
	}
	if staff := detailText(&OrderDetail{Order: *ord}); !strings.Contains(staff, "pi_sandbox_123") {
		t.Errorf("the staff's text lost the reference:\n%s", staff)
	}
}
