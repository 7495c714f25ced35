package server

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"shop/contract"
	"shop/i18n"
	"shop/money"
)

// The figures of a session or an order as the shop's pages show them: the
// session's display convention (docs/messages.md), amounts in the page's
// language, messages from the catalogs by their key.

// formatter formats amounts of a currency in the page's language; an
// unknown currency shows minor units and its code rather than failing the
// page.
func formatter(code string, l *i18n.Lang) func(int64) string {
	cur, err := money.Lookup(code)
	if err != nil {
		return func(a int64) string { return fmt.Sprintf("%d %s (minor units)", a, strings.ToUpper(code)) }
	}
	tag := l.Tag()
	return func(a int64) string { return cur.FormatIn(tag, a) }
}

// itemViews are the lines and totals of a session or an order as d shows
// them: with tax included, a line's total (and its unit price with tax
// when it divides exactly) and the tax as "incl. VAT …" information below
// the total; without, a line's subtotal and the tax as its own line.
func itemViews(l *i18n.Lang, d contract.Display, items []contract.LineItem, totals []contract.Total, format func(int64) string) ([]lineView, []totalView) {
	lines := make([]lineView, 0, len(items))
	for _, li := range items {
		lv := lineView{Name: li.Name, Quantity: li.Item.Quantity, Unit: format(li.UnitAmount), Total: format(d.Line(li))}
		if d.PricesIncludeTax {
			lv.Unit = ""
			if q := li.Item.Quantity; q > 0 && (li.BaseAmount+li.Tax)%q == 0 {
				lv.Unit = format((li.BaseAmount + li.Tax) / q)
			}
		}
		if li.Discount != 0 {
			lv.Discount = format(li.Discount)
		}
		lines = append(lines, lv)
	}
	rows := d.Rows(items, totals)
	out := make([]totalView, 0, len(rows))
	for _, r := range rows {
		tv := totalView{Label: l.T("total_" + string(r.Type)), Amount: format(r.Amount), Grand: r.Type == contract.TotalTotal}
		switch r.Type {
		case contract.TotalTax:
			tv.Label = l.T("tax_" + string(d.TaxName))
		case contract.TotalTaxIncluded:
			tv = totalView{Note: l.T("tax_included_"+string(d.TaxName), "amount", format(r.Amount))}
		}
		out = append(out, tv)
	}
	return lines, out
}

// daysPattern is checkout's subtitle of a rate the merchant gave none:
// "3–5 business days", "2 business days", "1 business day".
var daysPattern = regexp.MustCompile(`^(\d+)(?:–(\d+))? business days?$`)

// deliveryText is an option's subtitle in the page's language when it is
// the shop's own delivery estimate; the merchant's words stay as written.
func deliveryText(l *i18n.Lang, subtitle string) string {
	m := daysPattern.FindStringSubmatch(subtitle)
	if m == nil {
		return subtitle
	}
	if m[2] == "" {
		n, _ := strconv.Atoi(m[1])
		return l.N("days", n)
	}
	return l.T("days_between", "min", m[1], "max", m[2])
}

// messageText is a session's message in the page's language: the catalog's
// sentence under its key with its params (amounts formatted, dates and
// countries named), else its content (checkout's English words).
func messageText(l *i18n.Lang, m contract.Message, format func(int64) string) string {
	if m.Key == "" || !l.Has(m.Key) {
		return m.Content
	}
	args := make([]any, 0, 2*len(m.Params))
	for k, v := range m.Params {
		switch {
		case strings.HasSuffix(k, "_amount"):
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				v = format(n)
			}
		case k == "country":
			v = l.Country(v)
		}
		args = append(args, k, v)
	}
	return l.T(m.Key, args...)
}

// addressLines are an address in its country's order, the country named
// in the page's language.
func addressLines(l *i18n.Lang, a *contract.Address) []string {
	if a == nil {
		return nil
	}
	return a.Lines(l.Country(a.Country))
}
