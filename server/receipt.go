package server

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"shop"
	"shop/contract"
	"shop/money"
	"shop/orders"
)

//go:embed receipt.html
var receiptHTML string

//go:embed pay.html
var payHTML string

var receiptTemplates = template.Must(template.Must(template.New("receipt.html").Parse(receiptHTML)).Parse(payHTML))

// receiptCSP lets the receipt page use its inline stylesheet and nothing else:
// no scripts, no external resources.
const receiptCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'"

// ReceiptHandler serves the order receipt page, GET /orders/{order_id}?t=…,
// the permalink_url of CONTRACT.md: a small, accessible, printable HTML page
// when t is the order's signed token; for a missing or wrong token or an
// unknown order, a 404 page that tells nothing about which.
func ReceiptHandler(o *orders.Orders, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ord, err := o.ByPermalink(r.Context(), r.PathValue("order_id"), r.URL.Query().Get("t"))
		switch {
		case shop.ErrorCode(err) == shop.NotFound:
			writePage(w, logger, http.StatusNotFound, "notfound", nil)
		case err != nil:
			logger.ErrorContext(r.Context(), "receipt page", "err", err)
			writePage(w, logger, http.StatusInternalServerError, "error", nil)
		default:
			v := newReceiptView(ord)
			v.Paid = r.URL.Query().Get("paid") == "1"
			writePage(w, logger, http.StatusOK, "receipt", v)
		}
	})
}

// writePage renders a page completely before sending any of it, so that a
// template error becomes a clean 500.
func writePage(w http.ResponseWriter, logger *slog.Logger, status int, name string, data any) {
	writeHTML(w, logger, receiptCSP, status, name, data)
}

// writeHTML renders a page of the receipt templates under a content
// security policy.
func writeHTML(w http.ResponseWriter, logger *slog.Logger, csp string, status int, name string, data any) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("Cache-Control", "private, no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Type", "text/html; charset=utf-8")
	var buf bytes.Buffer
	if err := receiptTemplates.ExecuteTemplate(&buf, name, data); err != nil {
		logger.Error("receipt page: render", "template", name, "err", err)
		buf.Reset()
		status = http.StatusInternalServerError
		_ = receiptTemplates.ExecuteTemplate(&buf, "error", nil)
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// receiptView is what the receipt template shows, with amounts formatted.
type receiptView struct {
	Title   string
	Caption string
	Number  int64
	Placed  string
	Status  string
	Email   string
	Lines   []lineView
	Totals  []totalView
	Address *contract.Address
	Option  *optionView
	Payment contract.Payment
	Links   []linkView
	// Tracking is the order's parcels, oldest first.
	Tracking []contract.Tracking
	// Paid: the buyer just paid on the shop's payment page, which sent
	// them here; the page says they can go back to the conversation.
	Paid bool
}

type lineView struct {
	Name                  string
	Quantity              int64
	Unit, Total, Discount string
}

type totalView struct {
	Label, Amount string
	Grand         bool
}

type optionView struct {
	Title, Subtitle, Carrier, Price, Window string
}

type linkView struct{ Label, URL string }

func newReceiptView(ord *contract.Order) *receiptView {
	rec := &ord.Receipt
	format := formatter(rec.Currency)
	v := &receiptView{
		Title:    fmt.Sprintf("Receipt for order %d", rec.Number),
		Number:   rec.Number,
		Placed:   rec.CreatedAt.UTC().Format("2 January 2006, 15:04 UTC"),
		Status:   rec.Status,
		Email:    rec.Email,
		Address:  rec.FulfillmentAddress,
		Payment:  rec.Payment,
		Tracking: rec.Tracking,
	}
	v.Caption = fmt.Sprintf("Items in order %d", rec.Number)
	v.Lines, v.Totals = itemViews(rec.LineItems, rec.Totals, format)
	if opt := rec.FulfillmentOption; opt != nil {
		v.Option = &optionView{Title: opt.Title, Subtitle: opt.Subtitle, Carrier: opt.Carrier, Price: format(opt.Total),
			Window: window(opt.EarliestDeliveryTime, opt.LatestDeliveryTime)}
	}
	for _, l := range rec.Links {
		if l.Type == "support_url" && slices.ContainsFunc(rec.Links, func(s contract.Link) bool { return s.Type == "support" && s.URL == l.URL }) {
			continue // the support page again, under ChatGPT's name for it
		}
		v.Links = append(v.Links, linkView{Label: linkLabel(l.Type), URL: l.URL})
	}
	return v
}

// itemViews are the lines and totals of a session or an order, formatted.
func itemViews(items []contract.LineItem, totals []contract.Total, format func(int64) string) ([]lineView, []totalView) {
	lines := make([]lineView, 0, len(items))
	for _, li := range items {
		lv := lineView{Name: li.Name, Quantity: li.Item.Quantity, Unit: format(li.UnitAmount), Total: format(li.BaseAmount)}
		if li.Discount != 0 {
			lv.Discount = format(li.Discount)
		}
		lines = append(lines, lv)
	}
	out := make([]totalView, 0, len(totals))
	for _, t := range totals {
		label := t.DisplayText
		if label == "" {
			label = string(t.Type)
		}
		out = append(out, totalView{Label: label, Amount: format(t.Amount), Grand: t.Type == contract.TotalTotal})
	}
	return lines, out
}

// window is a delivery window as people read it: a day, or between two
// days ("" when either end is unknown).
func window(earliest, latest time.Time) string {
	if earliest.IsZero() || latest.IsZero() {
		return ""
	}
	const day = "2 January 2006"
	first, last := earliest.UTC().Format(day), latest.UTC().Format(day)
	if first == last {
		return first
	}
	return "between " + first + " and " + last
}

// formatter formats amounts of a currency for people; an unknown currency
// shows minor units and its code rather than failing the page.
func formatter(code string) func(int64) string {
	cur, err := money.Lookup(code)
	if err != nil {
		return func(a int64) string { return fmt.Sprintf("%d %s (minor units)", a, strings.ToUpper(code)) }
	}
	return cur.Format
}

func linkLabel(typ string) string {
	switch typ {
	case "terms_of_use":
		return "Terms of use"
	case "privacy_policy":
		return "Privacy policy"
	case "return_policy":
		return "Return policy"
	case "support":
		return "Support"
	}
	s := strings.ReplaceAll(typ, "_", " ")
	if s == "" {
		return "Link"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
