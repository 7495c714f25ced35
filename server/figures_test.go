package server

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop/contract"
	"shop/i18n"
)

// TestItemViewsDisplay: with tax included (a Berlin buyer), the line shows
// its total, items and shipping add up to the total and the tax is an
// "inkl. MwSt." note; without (a Californian), lines show subtotals and the
// tax is a line of its own.
func TestItemViewsDisplay(t *testing.T) {
	de := i18n.Named("de")
	lines := []contract.LineItem{{Name: "Mug", Item: contract.Item{Quantity: 1}, UnitAmount: 1800, BaseAmount: 1800, Subtotal: 1800, Tax: 342, Total: 2142}}
	totals := []contract.Total{{Type: contract.TotalItemsBase, Amount: 1800}, {Type: contract.TotalSubtotal, Amount: 1800},
		{Type: contract.TotalFulfillment, Amount: 500}, {Type: contract.TotalTax, Amount: 437}, {Type: contract.TotalTotal, Amount: 2737}}
	format := formatter("eur", de)

	gotLines, gotTotals := itemViews(de, contract.Display{PricesIncludeTax: true, TaxName: contract.TaxVAT}, lines, totals, format)
	if want := []lineView{{Name: "Mug", Quantity: 1, Unit: "21,42\u00a0€", Total: "21,42\u00a0€"}}; !cmp.Equal(want, gotLines) {
		t.Errorf("included lines: %s", cmp.Diff(want, gotLines))
	}
	want := []totalView{{Label: "Artikel", Amount: "21,42\u00a0€"}, {Label: "Versand", Amount: "5,95\u00a0€"},
		{Label: "Gesamt", Amount: "27,37\u00a0€", Grand: true}, {Note: "inkl. MwSt. 4,37\u00a0€"}}
	if diff := cmp.Diff(want, gotTotals); diff != "" {
		t.Errorf("included totals (-want +got):\n%s", diff)
	}

	gotLines, gotTotals = itemViews(de, contract.Display{TaxName: contract.TaxSales}, lines, totals, format)
	if gotLines[0].Total != "18,00\u00a0€" {
		t.Errorf("excluded line shows %q, want its subtotal", gotLines[0].Total)
	}
	var labels []string
	for _, tv := range gotTotals {
		labels = append(labels, tv.Label+" "+tv.Amount)
	}
	if got := strings.Join(labels, "; "); got != "Zwischensumme 18,00\u00a0€; Versand 5,00\u00a0€; Umsatzsteuer 4,37\u00a0€; Gesamt 27,37\u00a0€" {
		t.Errorf("excluded totals: %s", got)
	}
}

// TestMessageText: a message in the page's language from its key, amounts
// formatted and countries named; without a known key, its content.
func TestMessageText(t *testing.T) {
	de := i18n.Named("de")
	format := formatter("usd", de)
	tests := []struct {
		m    contract.Message
		want string
	}{
		{contract.Message{Key: "promo.min_subtotal", Params: map[string]string{"code": "BIG", "min_amount": "5000", "missing_amount": "3800"}},
			"BIG gilt ab einem Warenwert von 50,00\u00a0$; füge noch 38,00\u00a0$ hinzu."},
		{contract.Message{Key: "address.country.not_shipped", Params: map[string]string{"country": "JP", "countries": "US, DE"}},
			"Dieser Shop liefert nicht nach Japan. Er liefert nach: US, DE."},
		{contract.Message{Content: "Old words."}, "Old words."},
	}
	for _, tt := range tests {
		if got := messageText(de, tt.m, format); got != tt.want {
			t.Errorf("messageText(%+v) = %q, want %q", tt.m, got, tt.want)
		}
	}
	if got := deliveryText(i18n.Named("ja"), "3–5 business days"); got != "3〜5営業日" {
		t.Errorf("delivery in ja = %q", got)
	}
	if got := deliveryText(de, "1 business day"); got != "1 Werktag" {
		t.Errorf("delivery in de = %q", got)
	}
	if got := deliveryText(de, "Next-day courier"); got != "Next-day courier" {
		t.Errorf("the merchant's subtitle changed: %q", got)
	}
}
