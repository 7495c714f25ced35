package orders

import (
	"context"
	"fmt"
	"shop"
	"shop/money"
	"strings"
	"time"
)

// SalesFigures are the sales of a day or a range. Orders and Gross count
// every order created, canceled ones too (Gross is what was charged; money
// given back is under Refunds); Refunds sums the succeeded refunds created;
// Net = Gross − Refunds.
type SalesFigures struct {
	Orders  int64       `json:"orders"`
	Gross   money.Price `json:"gross"`
	Refunds money.Price `json:"refunds"`
	Net     money.Price `json:"net"`
}

// SalesDay is one UTC day of a sales report.
type SalesDay struct {
	Date string `json:"date"`
	SalesFigures
}

// SalesReport is sales_report's structured content: every day of the range.
type SalesReport struct {
	Currency string       `json:"currency"`
	From     string       `json:"from"`
	To       string       `json:"to"`
	Days     []SalesDay   `json:"days"`
	Totals   SalesFigures `json:"totals"`
}

// salesReportTool adds up the orders and the succeeded refunds created on
// each UTC day from one date to another (both included). Rows are summed
// here, not in SQL, so that both engines agree to the minor unit.
func (a *Admin) salesReportTool(ctx context.Context, args SalesReportArgs) (*SalesReport, string, error) {
	to, err := parseDay("$.to", args.To, a.now().UTC().Truncate(24*time.Hour))
	if err != nil {
		return nil, "", err
	}
	from, err := parseDay("$.from", args.From, to.AddDate(0, 0, 1-defaultReportDays))
	if err != nil {
		return nil, "", err
	}
	days := int(to.Sub(from)/(24*time.Hour)) + 1
	switch {
	case days < 1:
		return nil, "", shop.Errorf(shop.Invalid, "$.to", "is before from (%s); send to on or after from", from.Format(dayLayout))
	case days > maxReportDays:
		return nil, "", shop.Errorf(shop.Invalid, "$.from", "the range is %d days; send at most %d", days, maxReportDays)
	}
	end := to.AddDate(0, 0, 1)
	type amountAt struct {
		Amount    int64
		Currency  string
		CreatedAt time.Time
	}
	var orders, refunds []amountAt
	db := a.db.WithContext(ctx)
	if err := db.Raw("SELECT total AS amount, currency, created_at FROM orders WHERE created_at >= ? AND created_at < ?", from, end).
		Scan(&orders).Error; err != nil {
		return nil, "", fmt.Errorf("sales report: orders: %w", err)
	}
	if err := db.Raw("SELECT r.amount, o.currency, r.created_at FROM refunds r JOIN orders o ON o.id = r.order_id "+
		"WHERE r.status = ? AND r.created_at >= ? AND r.created_at < ?", refundSucceeded, from, end).Scan(&refunds).Error; err != nil {
		return nil, "", fmt.Errorf("sales report: refunds: %w", err)
	}
	cur := "usd"
	if a.catalog != nil {
		cur = a.catalog.Currency().Code()
	}
	type sums struct{ orders, gross, refunds int64 }
	byDay := make([]sums, days)
	for i, rows := range [][]amountAt{orders, refunds} {
		for _, r := range rows {
			day := int(r.CreatedAt.UTC().Sub(from) / (24 * time.Hour))
			switch {
			case r.Currency != cur:
				return nil, "", fmt.Errorf("sales report: an amount in %s, the shop's currency is %s", r.Currency, cur)
			case day < 0 || day >= days:
				return nil, "", fmt.Errorf("sales report: a row at %s outside %s..%s", r.CreatedAt, from, end)
			case i == 0:
				byDay[day].orders++
				byDay[day].gross += r.Amount
			default:
				byDay[day].refunds += r.Amount
			}
		}
	}
	figures := func(s sums) SalesFigures {
		return SalesFigures{Orders: s.orders, Gross: PriceOf(cur, s.gross), Refunds: PriceOf(cur, s.refunds), Net: PriceOf(cur, s.gross-s.refunds)}
	}
	rep := &SalesReport{Currency: cur, From: from.Format(dayLayout), To: to.Format(dayLayout), Days: make([]SalesDay, days)}
	var total sums
	for i, s := range byDay {
		rep.Days[i] = SalesDay{Date: from.AddDate(0, 0, i).Format(dayLayout), SalesFigures: figures(s)}
		total = sums{total.orders + s.orders, total.gross + s.gross, total.refunds + s.refunds}
	}
	rep.Totals = figures(total)
	var sb strings.Builder
	fmt.Fprintf(&sb, "Sales %s to %s (UTC days, %s):", rep.From, rep.To, strings.ToUpper(cur))
	for _, d := range append(rep.Days, SalesDay{Date: "Total", SalesFigures: rep.Totals}) {
		fmt.Fprintf(&sb, "\n%s: %d orders, gross %s, refunds %s, net %s", d.Date, d.Orders, d.Gross.Display, d.Refunds.Display, d.Net.Display)
	}
	return rep, sb.String(), nil
}
