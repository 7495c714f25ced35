package orders

import (
	"context"
	"embed"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"log/slog"
	"strings"
	texttemplate "text/template"

	"gorm.io/gorm"

	"shop/contract"
	"shop/i18n"
	"shop/notify"
)

// Emails configure the emails an order sends its buyer: the confirmation
// when it is placed, a notice when a parcel ships, when money goes back and
// when it is canceled. Each is written to the outbox (package notify) in the
// transaction of the change, and delivered by notify's worker.
type Emails struct {
	// Shop is the shop's name as buyers see it.
	Shop string
	// Support is the address replies go to (Reply-To); empty for none.
	Support string
	// StaffCopy, when set, gets a copy of each new order's confirmation.
	StaffCopy string
	// Logger takes the emails that could not be written (an address no
	// mail system takes); default slog.Default().
	Logger *slog.Logger
}

// The kinds of email an order sends.
const (
	emailConfirmation = "confirmation"
	emailStaffCopy    = "staff_copy"
	emailShipped      = "shipped"
	emailRefunded     = "refunded"
	emailCanceled     = "canceled"
)

//go:embed emails/*
var emailFiles embed.FS

var (
	textEmails = texttemplate.Must(texttemplate.ParseFS(emailFiles, "emails/*.txt"))
	htmlEmails = htmltemplate.Must(htmltemplate.ParseFS(emailFiles, "emails/*.html"))
)

// emailView is what the templates show.
type emailView struct {
	Kind string
	lang *i18n.Lang
	// Format writes an amount in the buyer's language.
	Format    func(int64) string
	Shop      string
	Name      string // the buyer's, for the greeting; may be empty
	Email     string
	Number    int64
	Lines     []emailLine
	Totals    []emailFigure
	Address   []string
	Shipping  string
	Links     []emailLink
	Permalink string
	// Shipped: the parcel.
	Carrier, TrackingNumber, TrackingURL string
	// Refunded: how much, and what is left; Canceled: the refund on its way.
	Refunded, Left string
	Support        string
	// Return: the return a return_* email is about.
	Return *returnView
}

type emailLine struct {
	Name            string
	Quantity        int64
	Unit, Total     string
	ShippedQuantity int64
}

type emailFigure struct {
	Label, Amount string
	Total         bool // the amount charged: shown in bold
}

type emailLink struct{ Label, URL string }

// linkTypes are the links an email lists, in the order it lists them;
// each is named by the catalogs' "link_"+type.
var linkTypes = []string{"terms_of_use", "privacy_policy", "return_policy", "support"}

// T is the catalogs' message under key in the buyer's language, for the
// templates: {{.T "email_each" "amount" .Unit}}.
func (v *emailView) T(key string, args ...any) string { return v.lang.T(key, args...) }

// Lang is the BCP 47 tag of the email's language, for <html lang>.
func (v *emailView) Lang() string { return v.lang.Tag() }

// view is what every email of order r shows, in the buyer's language (the
// order's locale; English when unknown or for staff): who, which order,
// the lines, totals, address, shipping and links as the buyer saw them.
func (o *Orders) view(kind string, r *orderRow, lines []lineRow) (*emailView, error) {
	ord, err := o.order(r, lines)
	if err != nil {
		return nil, err
	}
	rec := &ord.Receipt
	l, locale := i18n.Match(r.Locale), r.Locale
	if kind == emailStaffCopy {
		l, locale = i18n.English, ""
	}
	format := amountFormatter(r.Currency, locale)
	v := &emailView{Kind: kind, lang: l, Format: format, Shop: o.emails.Shop, Email: r.Email, Number: r.Number, Permalink: ord.PermalinkURL, Support: o.emails.Support}
	var buyer contract.Buyer
	if err := unmarshalIf(r.Buyer, &buyer); err != nil {
		return nil, fmt.Errorf("order %s buyer: %w", r.ID, err)
	}
	v.Name = strings.TrimSpace(buyer.Name)
	if v.Name == "" {
		v.Name = strings.TrimSpace(buyer.FirstName + " " + buyer.LastName)
	}
	v.Lines, v.Totals = emailFigures(l, rec, format)
	if a := rec.FulfillmentAddress; a != nil {
		if v.Name == "" {
			v.Name = a.Name
		}
		v.Address = a.Lines(l.Country(a.Country)) // in the country's own order, named in the buyer's language
	}
	if opt := rec.FulfillmentOption; opt != nil {
		v.Shipping = opt.Title
		if opt.Carrier != "" {
			v.Shipping = l.T("email_by_carrier", "option", opt.Title, "carrier", opt.Carrier)
		}
		if !opt.EarliestDeliveryTime.IsZero() && !opt.LatestDeliveryTime.IsZero() {
			v.Shipping = l.T("email_arriving", "shipping", v.Shipping, "from", l.Date(opt.EarliestDeliveryTime), "to", l.Date(opt.LatestDeliveryTime))
		}
	}
	for _, typ := range linkTypes {
		for _, have := range rec.Links {
			if have.Type == typ && have.URL != "" {
				v.Links = append(v.Links, emailLink{Label: l.T("link_" + typ), URL: have.URL})
				break
			}
		}
	}
	return v, nil
}

// emailFigures are the lines and totals of a receipt as its session showed
// them (with tax included or not, docs/messages.md), in language l.
func emailFigures(l *i18n.Lang, rec *contract.Receipt, format func(int64) string) ([]emailLine, []emailFigure) {
	d := rec.Display
	var lines []emailLine
	for _, li := range rec.LineItems {
		unit := l.T("email_each", "amount", format(li.UnitAmount))
		if q := li.Item.Quantity; d.PricesIncludeTax && q > 0 && (li.BaseAmount+li.Tax)%q == 0 {
			unit = l.T("email_each", "amount", format((li.BaseAmount+li.Tax)/q))
		} else if d.PricesIncludeTax {
			unit = l.T("email_each_before_tax", "amount", format(li.UnitAmount))
		}
		lines = append(lines, emailLine{Name: li.Name, Quantity: li.Item.Quantity, Unit: unit, Total: format(d.Line(li))})
	}
	var totals []emailFigure
	for _, row := range d.Rows(rec.LineItems, rec.Totals) {
		label := l.T("total_" + string(row.Type))
		switch row.Type {
		case contract.TotalTax:
			label = l.T("tax_" + string(d.TaxName))
		case contract.TotalTaxIncluded:
			// information below the total, not a figure to add: "incl. VAT 3,42 €"
			totals = append(totals, emailFigure{Label: l.T("tax_included_"+string(d.TaxName), "amount", format(row.Amount))})
			continue
		}
		totals = append(totals, emailFigure{Label: label, Amount: format(row.Amount), Total: row.Type == contract.TotalTotal})
	}
	return lines, totals
}

// subject is the email's subject line in its language, with the shop's
// name, the order number and (refunds) the amount.
func (v *emailView) subject() string {
	switch v.Kind {
	case emailStaffCopy:
		return fmt.Sprintf("%s: new order %d from %s", v.Shop, v.Number, v.Email)
	case emailRefunded:
		return v.T("email_refunded_subject", "shop", v.Shop, "amount", v.Refunded, "number", v.Number)
	case emailReturnRefunded:
		return v.T("email_return_refunded_subject", "shop", v.Shop, "amount", v.Return.Refund, "number", v.Number)
	}
	return v.T("email_"+v.Kind+"_subject", "shop", v.Shop, "number", v.Number)
}

// send renders v and writes it to the outbox in tx, under key. An email
// that cannot be written as it is (an address no mail system takes) is
// logged and left out: it never stops the order's change. Without Emails
// configured, nothing is written.
func (o *Orders) send(ctx context.Context, tx *gorm.DB, key, ref, to string, v *emailView) error {
	var text, html strings.Builder
	if err := textEmails.ExecuteTemplate(&text, v.Kind+".txt", v); err != nil {
		return fmt.Errorf("email %s: %w", key, err)
	}
	if err := htmlEmails.ExecuteTemplate(&html, v.Kind+".html", v); err != nil {
		return fmt.Errorf("email %s: %w", key, err)
	}
	subject := strings.Join(strings.Fields(v.subject()), " ")
	replyTo := o.emails.Support
	if v.Kind == emailStaffCopy {
		replyTo = v.Email
	}
	err := notify.Enqueue(ctx, tx, notify.Email{Key: key, Ref: ref, Kind: v.Kind, To: to, ReplyTo: replyTo,
		Subject: subject, Text: text.String(), HTML: html.String()})
	if errors.Is(err, notify.ErrInvalid) {
		o.emails.Logger.ErrorContext(ctx, "an order's email cannot be sent; the order goes on without it", "order", ref, "kind", v.Kind, "err", err)
		return nil
	}
	return err
}

// emailConfirmation writes, in tx, the confirmation of the order just
// placed, and the staff's copy when one is configured.
func (o *Orders) emailConfirmation(ctx context.Context, tx *gorm.DB, r *orderRow, lines []lineRow) error {
	if o.emails == nil {
		return nil
	}
	v, err := o.view(emailConfirmation, r, lines)
	if err != nil {
		return err
	}
	if err := o.send(ctx, tx, "order/"+r.ID+"/confirmation", r.ID, r.Email, v); err != nil || o.emails.StaffCopy == "" {
		return err
	}
	if v, err = o.view(emailStaffCopy, r, lines); err != nil {
		return err
	}
	return o.send(ctx, tx, "order/"+r.ID+"/staff_copy", r.ID, o.emails.StaffCopy, v)
}

// emailShipped writes, in tx, the notice of a parcel: carrier, tracking and
// the lines in it (shipped holds the units of lines by index).
func (o *Orders) emailShipped(ctx context.Context, tx *gorm.DB, r *orderRow, lines []lineRow, shipped map[int]int64, f *fulfilmentRow) error {
	if o.emails == nil {
		return nil
	}
	v, err := o.view(emailShipped, r, lines)
	if err != nil {
		return err
	}
	for i, q := range shipped {
		v.Lines[i].ShippedQuantity = q
	}
	v.Carrier, v.TrackingNumber, v.TrackingURL = f.Carrier, f.TrackingNumber, f.TrackingURL
	return o.send(ctx, tx, "order/"+r.ID+"/shipped/"+f.ID, r.ID, r.Email, v)
}

// emailRefunded writes, in tx, the notice of a refund that went through:
// how much, and what is left of the order's total.
func (o *Orders) emailRefunded(ctx context.Context, tx *gorm.DB, r *orderRow, lines []lineRow, ref *refundRow) error {
	if o.emails == nil {
		return nil
	}
	v, err := o.view(emailRefunded, r, lines)
	if err != nil {
		return err
	}
	v.Refunded, v.Left = v.Format(ref.Amount), v.Format(max(0, r.Total-r.Refunded))
	return o.send(ctx, tx, "order/"+r.ID+"/refund/"+ref.ID, r.ID, r.Email, v)
}

// emailCanceled writes, in tx, the notice of a cancellation, saying the
// refund on its way (refund > 0).
func (o *Orders) emailCanceled(ctx context.Context, tx *gorm.DB, r *orderRow, lines []lineRow, refund int64) error {
	if o.emails == nil {
		return nil
	}
	v, err := o.view(emailCanceled, r, lines)
	if err != nil {
		return err
	}
	if refund > 0 {
		v.Refunded = v.Format(refund)
	}
	return o.send(ctx, tx, "order/"+r.ID+"/canceled", r.ID, r.Email, v)
}

// orderEmails lists an order's emails for staff.
func orderEmails(ctx context.Context, db *gorm.DB, orderID string) ([]EmailRecord, error) {
	recs, err := notify.List(ctx, db, orderID)
	if err != nil {
		return nil, err
	}
	out := make([]EmailRecord, len(recs))
	for i, r := range recs {
		out[i] = EmailRecord{ID: r.ID, Kind: r.Kind, To: r.To, Subject: r.Subject, Status: string(r.Status),
			Attempts: r.Attempts, LastError: r.LastError, CreatedAt: r.CreatedAt, SentAt: r.SentAt}
	}
	return out, nil
}
