package contract

import "strings"

// TotalTaxIncluded is the row of Display.Rows that says how much tax the
// figures above it include: information, not a term of the sum.
const TotalTaxIncluded TotalType = "tax_included"

// Row is one figure as a display shows it.
type Row struct {
	Type   TotalType
	Amount int64
}

// Line is the amount a line shows: its total with tax included, else its
// subtotal.
func (d Display) Line(l LineItem) int64 {
	if d.PricesIncludeTax {
		return l.Total
	}
	return l.Subtotal
}

// Option is the amount a shipping option shows: its total with tax
// included, else its subtotal.
func (d Display) Option(o FulfillmentOption) int64 {
	if d.PricesIncludeTax {
		return o.Total
	}
	return o.Subtotal
}

// Rows are the totals as d shows them (docs/messages.md). With tax
// included: items (Σ line totals), fulfillment (the rest, which is the
// chosen option's total), discount when not 0, total, and then the tax
// included, TotalTaxIncluded; items + fulfillment − discount = total
// exactly. Without: subtotal, discount when not 0, fulfillment, tax, total.
func (d Display) Rows(lines []LineItem, totals []Total) []Row {
	by := map[TotalType]int64{}
	for _, t := range totals {
		by[t.Type] = t.Amount
	}
	discount := func(rows []Row) []Row {
		if by[TotalDiscount] != 0 {
			rows = append(rows, Row{TotalDiscount, by[TotalDiscount]})
		}
		return rows
	}
	if !d.PricesIncludeTax {
		rows := discount([]Row{{TotalSubtotal, by[TotalSubtotal]}})
		return append(rows, Row{TotalFulfillment, by[TotalFulfillment]}, Row{TotalTax, by[TotalTax]}, Row{TotalTotal, by[TotalTotal]})
	}
	var items int64
	for _, l := range lines {
		items += l.Total
	}
	rows := []Row{{TotalItemsBase, items}, {TotalFulfillment, by[TotalTotal] + by[TotalDiscount] - items}}
	rows = discount(rows)
	return append(rows, Row{TotalTotal, by[TotalTotal]}, Row{TotalTaxIncluded, by[TotalTax]})
}

// English is the tax's name in English, for the shop's English texts
// (emails, tool texts): "VAT", "GST", "consumption tax", "sales tax".
func (n TaxName) English() string {
	switch n {
	case TaxVAT, TaxGST:
		return strings.ToUpper(string(n))
	case TaxConsumption:
		return "consumption tax"
	}
	return "sales tax"
}

// englishLabels are the rows' labels in the shop's English texts.
var englishLabels = map[TotalType]string{TotalItemsBase: "Items", TotalSubtotal: "Subtotal", TotalFulfillment: "Shipping",
	TotalDiscount: "Discount", TotalTotal: "Total"}

// EnglishLabel is a row's label in English ("Sales tax", "incl. VAT").
func (d Display) EnglishLabel(t TotalType) string {
	switch t {
	case TotalTax:
		name := d.TaxName.English()
		return strings.ToUpper(name[:1]) + name[1:]
	case TotalTaxIncluded:
		return "incl. " + d.TaxName.English()
	}
	return englishLabels[t]
}
