package server

import (
	"bytes"
	_ "embed"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"shop"
	"shop/contract"
	"shop/i18n"
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
// unknown order, a 404 page that tells nothing about which. The page is in
// the buyer's language (Accept-Language), English by default.
func ReceiptHandler(o *orders.Orders, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := i18n.FromRequest(r)
		ord, err := o.ByPermalink(r.Context(), r.PathValue("order_id"), r.URL.Query().Get("t"))
		switch {
		case shop.ErrorCode(err) == shop.NotFound:
			writePage(w, logger, http.StatusNotFound, "notfound", &pageView{L: l, Title: l.T("receipt_notfound_title")})
		case err != nil:
			logger.ErrorContext(r.Context(), "receipt page", "err", err)
			writePage(w, logger, http.StatusInternalServerError, "error", errorView(l))
		default:
			v := newReceiptView(ord, l)
			v.Paid = r.URL.Query().Get("paid") == "1"
			writePage(w, logger, http.StatusOK, "receipt", v)
		}
	})
}

// pageView is what every page's head needs: its language and title.
type pageView struct {
	L     *i18n.Lang
	Title string
}

// lang is the page's language, for writeHTML's error page.
func (v *pageView) lang() *i18n.Lang { return v.L }

// errorView is the page shown when another cannot be.
func errorView(l *i18n.Lang) *pageView {
	return &pageView{L: l, Title: l.T("receipt_error_title")}
}

// writePage renders a page completely before sending any of it, so that a
// template error becomes a clean 500.
func writePage(w http.ResponseWriter, logger *slog.Logger, status int, name string, data interface{ lang() *i18n.Lang }) {
	writeHTML(w, logger, receiptCSP, status, name, data)
}

// writeHTML renders a page of the receipt templates under a content
// security policy.
func writeHTML(w http.ResponseWriter, logger *slog.Logger, csp string, status int, name string, data interface{ lang() *i18n.Lang }) {
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
		_ = receiptTemplates.ExecuteTemplate(&buf, "error", errorView(data.lang()))
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// receiptView is what the receipt template shows, with amounts formatted.
type receiptView struct {
	pageView
	Caption string
	Number  int64
	Placed  string
	// Status is the order's status, and PaymentMode and PaymentStatus the
	// payment's, in the page's language.
	Status, PaymentMode, PaymentStatus string
	Email                              string
	Lines                              []lineView
	Totals                             []totalView
	Address                            []string
	Option                             *optionView
	// Refunds are the money given back, each in a sentence, and
	// Refunded their sum ("" when none).
	Refunds  []string
	Refunded string
	Links    []linkView
	// Tracking is the order's parcels, oldest first.
	Tracking []contract.Tracking
	// Returns are the buyer's returns, oldest first, each in a sentence.
	Returns []string
	// Paid: the buyer just paid on the shop's payment page, which sent
	// them here; the page says they can go back to the conversation.
	Paid bool
}

type lineView struct {
	Name                  string
	Quantity              int64
	Unit, Total, Discount string
}

// totalView is a row of the totals, or with Note, a line of information
// under them ("incl. VAT 3,42 €").
type totalView struct {
	Label, Amount, Note string
	Grand               bool
}

// optionView is a shipping option in a sentence: "Standard by USPS (3–5
// days): $5.00. Expected 9 December 2026."
type optionView struct{ Text string }

// newOptionView is the sentence of a shipping option; its title, subtitle
// and carrier are the merchant's words.
func newOptionView(l *i18n.Lang, title, subtitle, carrier, price string, earliest, latest time.Time) *optionView {
	name := title
	if carrier != "" {
		name = l.T("option_by", "option", title, "carrier", carrier)
	}
	if subtitle != "" {
		name += " (" + deliveryText(l, subtitle) + ")"
	}
	text := l.T("option_price", "option", name, "price", price)
	if w := window(l, earliest, latest); w != "" {
		text += l.T("sentence_space") + l.T("option_expected", "window", w)
	}
	return &optionView{Text: text}
}

type linkView struct{ Label, URL string }

func newReceiptView(ord *contract.Order, l *i18n.Lang) *receiptView {
	rec := &ord.Receipt
	format := formatter(rec.Currency, l)
	v := &receiptView{
		pageView:      pageView{L: l, Title: l.T("receipt_title", "n", rec.Number)},
		Number:        rec.Number,
		Placed:        l.DateTime(rec.CreatedAt),
		Status:        word(l, "order_status_", rec.Status),
		PaymentMode:   word(l, "payment_mode_", rec.Payment.Mode),
		PaymentStatus: word(l, "payment_status_", rec.Payment.Status),
		Email:         rec.Email,
		Address:       addressLines(l, rec.FulfillmentAddress),
		Tracking:      rec.Tracking,
	}
	v.Caption = l.T("receipt_items", "n", rec.Number)
	v.Lines, v.Totals = itemViews(l, rec.Display, rec.LineItems, rec.Totals, format)
	if opt := rec.FulfillmentOption; opt != nil {
		v.Option = newOptionView(l, opt.Title, opt.Subtitle, opt.Carrier, format(rec.Display.Option(*opt)), opt.EarliestDeliveryTime, opt.LatestDeliveryTime)
	}
	for _, r := range rec.Refunds {
		v.Refunds = append(v.Refunds, l.T("receipt_refund", "amount", format(r.Amount), "date", l.Date(r.CreatedAt)))
	}
	if rec.RefundedAmount > 0 {
		v.Refunded = l.T("receipt_refunded_total", "amount", format(rec.RefundedAmount))
	}
	v.Links = linkViews(l, rec.Links)
	for _, r := range rec.Returns {
		v.Returns = append(v.Returns, l.T("receipt_return", "id", r.ID, "date", l.Date(r.CreatedAt),
			"status", word(l, "return_status_", r.Status), "amount", format(r.RefundAmount)))
	}
	return v
}

// linkViews are the legal and support links of a session or an order, each
// page once.
func linkViews(l *i18n.Lang, links []contract.Link) []linkView {
	var out []linkView
	for _, k := range links {
		if k.Type == "support_url" && slices.ContainsFunc(links, func(s contract.Link) bool { return s.Type == "support" && s.URL == k.URL }) {
			continue // the support page again, under ChatGPT's name for it
		}
		out = append(out, linkView{Label: linkLabel(l, k.Type), URL: k.URL})
	}
	return out
}

// word is a status code in the page's language: the catalog's message under
// prefix+code, else the code as it is.
func word(l *i18n.Lang, prefix, code string) string {
	if l.Has(prefix + code) {
		return l.T(prefix + code)
	}
	return code
}

// window is a delivery window as people read it: a day, or between two
// days ("" when either end is unknown).
func window(l *i18n.Lang, earliest, latest time.Time) string {
	if earliest.IsZero() || latest.IsZero() {
		return ""
	}
	first, last := l.Date(earliest), l.Date(latest)
	if first == last {
		return first
	}
	return l.T("window_between", "first", first, "last", last)
}

// linkLabel names a legal or support link by its type, in the widgets'
// words for it; a type the catalogs do not know is shown as written.
func linkLabel(l *i18n.Lang, typ string) string {
	if l.Has("link_" + typ) {
		return l.T("link_" + typ)
	}
	s := strings.ReplaceAll(typ, "_", " ")
	if s == "" {
		return l.T("link")
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
