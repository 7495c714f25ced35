package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"shop"
	"shop/checkout"
	"shop/contract"
	"shop/i18n"
	"shop/payments"
)

// payCSP lets the payment pages use their inline stylesheet, the shop's
// images and a form posted back to the shop, and nothing else.
const payCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'"

// maxPayForm bounds the payment form's body: a token, a card and an email.
const maxPayForm = 4 << 10

// testCards are the test payment methods the sandbox page offers, of
// payments.TestCards, the first chosen by default.
var testCards = offered("pm_card_visa", "pm_card_visa_chargeDeclined", "pm_card_chargeDeclinedInsufficientFunds", "pm_card_authenticationRequired")

// offeredCard is a test payment method as the page offers it: its card and
// the catalog's key for what paying with it does.
type offeredCard struct {
	Value, Brand, Last4, Outcome string
}

// offered are test payment methods as the page offers them.
func offered(methods ...string) []offeredCard {
	out := make([]offeredCard, len(methods))
	for i, m := range methods {
		c, ok := payments.FindTestCard(m)
		if !ok {
			panic("server: " + m + " is not in payments.TestCards")
		}
		outcome := "card_succeeds"
		switch c.Outcome {
		case payments.Declined:
			outcome = "card_declined"
			if code := c.Code(); code != "card_declined" {
				outcome += "_" + code
			}
		case payments.RequiresAction:
			outcome = "card_3ds"
		}
		if !i18n.English.Has(outcome) {
			panic("server: no message " + outcome + " for test card " + m)
		}
		out[i] = offeredCard{Value: m, Brand: strings.ToUpper(c.Brand[:1]) + c.Brand[1:], Last4: c.Last4, Outcome: outcome}
	}
	return out
}

// label is what the page says of the card: "Visa ending 0002: declined".
func (c offeredCard) label(l *i18n.Lang) string {
	return l.T("card_label", "brand", c.Brand, "last4", c.Last4, "outcome", l.T(c.Outcome))
}

// PayOptions configure the payment pages.
type PayOptions struct {
	// Shop is the merchant's name, shown on the pages.
	Shop   string
	Logger *slog.Logger
}

// PayPages serves external checkout's pages on the shop, each under a
// session's signed token (?t=…; a wrong one is a 404 telling nothing):
//   - GET /pay/{session_id}: the sandbox payment page (order summary, legal
//     links, the sandbox's test cards), when no provider hosts pages;
//   - POST /pay/{session_id}: pays with the chosen card through
//     complete_checkout's own path, then sends the buyer to the receipt; a
//     decline shows the page again with the reason; a session whose figures
//     changed since the page was shown (the form's signed "seen") is not
//     charged: a 409 shows it again, with its new total, to review and pay;
//   - GET /pay/{session_id}/return: where a hosted page (Stripe Checkout)
//     sends the buyer after paying: the payment is settled at once, the
//     receipt shown (or a page that waits for it);
//   - GET /pay/{session_id}/cancel: the buyer left without paying; the
//     session keeps its cart and says so to the widget.
//
// Every page is in the buyer's language (Accept-Language), English by
// default; the merchant's own words (products, shipping options) stay as
// the merchant wrote them.
func PayPages(c *checkout.Checkout, opts PayOptions) http.Handler {
	p := &payPages{c: c, shop: opts.Shop, logger: opts.Logger}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	cop := http.NewCrossOriginProtection()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pay/{session_id}", p.signed(p.page))
	mux.Handle("POST /pay/{session_id}", cop.Handler(p.signed(p.pay)))
	mux.HandleFunc("GET /pay/{session_id}/return", p.signed(p.returned))
	mux.HandleFunc("GET /pay/{session_id}/cancel", p.signed(p.canceled))
	return mux
}

type payPages struct {
	c      *checkout.Checkout
	shop   string
	logger *slog.Logger
}

// signed serves h only for a session id with its pay token.
func (p *payPages) signed(h func(w http.ResponseWriter, r *http.Request, id, token string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("session_id")
		token := r.URL.Query().Get("t")
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxPayForm)
			if err := r.ParseForm(); err != nil {
				p.message(w, r, http.StatusBadRequest, "msg_not_sent_title", "msg_not_sent")
				return
			}
			token = r.PostForm.Get("t")
		}
		if len(id) > 64 || !p.c.ValidPayToken(id, token) {
			p.message(w, r, http.StatusNotFound, "msg_not_found_title", "msg_not_found")
			return
		}
		// The signed link acts for the session's buyer: their saved cards.
		h(w, r.WithContext(checkout.OnPaymentPage(r.Context())), id, token)
	}
}

// page shows the sandbox payment page, or where the session stands.
func (p *payPages) page(w http.ResponseWriter, r *http.Request, id, token string) {
	s, err := p.c.Get(r.Context(), id)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	p.show(w, r, s, token, "", "")
}

// show answers the page for a session as it stands: the form while it can
// be paid, the receipt once paid, a message otherwise.
func (p *payPages) show(w http.ResponseWriter, r *http.Request, s *checkout.Session, token, problem, email string) {
	switch s.Status {
	case checkout.Completed:
		if s.Order != nil {
			http.Redirect(w, r, s.Order.PermalinkURL+"&paid=1", http.StatusSeeOther)
			return
		}
	case checkout.InProgress:
		p.processing(w, r)
		return
	case checkout.Ready:
		if !p.c.Sandboxed() {
			p.message(w, r, http.StatusNotFound, "msg_hosted_title", "msg_hosted")
			return
		}
		status := http.StatusOK
		if problem != "" {
			status = http.StatusPaymentRequired
		}
		v := p.payView(i18n.FromRequest(r), s, token, problem, email)
		v.CanSave = p.canSave(r.Context(), s.ID)
		p.render(w, status, "pay", v)
		return
	case checkout.NotReady:
		l := i18n.FromRequest(r)
		why := l.T("msg_not_ready")
		for _, m := range s.Messages {
			if m.Type == checkout.MessageError {
				why += l.T("sentence_space") + messageText(l, m, formatter(s.Currency, l))
				break
			}
		}
		p.render(w, http.StatusConflict, "paymsg", &payMessage{pageView: pageView{L: l, Title: l.T("msg_not_ready_title")}, Lines: []string{why, l.T("msg_finish")}})
		return
	case checkout.Canceled:
		p.message(w, r, http.StatusGone, "msg_canceled_title", "msg_canceled")
		return
	case checkout.Expired:
		p.message(w, r, http.StatusGone, "msg_expired_title", "msg_expired")
		return
	}
	p.message(w, r, http.StatusInternalServerError, "msg_unavailable_title", "msg_unavailable")
}

// pay pays the session with the card chosen on the sandbox page.
func (p *payPages) pay(w http.ResponseWriter, r *http.Request, id, token string) {
	if !p.c.Sandboxed() {
		p.message(w, r, http.StatusNotFound, "msg_hosted_title", "msg_hosted")
		return
	}
	l := i18n.FromRequest(r)
	email := strings.TrimSpace(r.PostForm.Get("email"))
	card, ok := p.chosenCard(w, r, id, token, email)
	if !ok {
		return
	}
	seen := r.PostForm.Get("seen")
	if seen == "" {
		seen = "-" // a form without it (from an older page) never matches
	}
	req := checkout.CompleteRequest{SessionID: id, Payment: checkout.PaymentData{Token: card, Provider: "stripe"}, Seen: seen}
	if email != "" {
		req.Buyer = &checkout.Buyer{Email: email}
	}
	ctx := r.Context()
	if lang := r.Header.Get("Accept-Language"); lang != "" {
		ctx = shop.WithLocale(ctx, l.Tag()) // the buyer's language, for the order's emails
	}
	s, err := p.c.Complete(ctx, req)
	problem := ""
	if err != nil {
		var e *shop.Error
		if !errors.As(err, &e) {
			p.failed(w, r, err)
			return
		}
		if s, err = p.c.Get(r.Context(), id); err != nil {
			p.failed(w, r, err)
			return
		}
		if e.Code == shop.PriceChanged {
			p.changed(w, r, s, token, email)
			return
		}
		problem = refusalText(l, e, formatter(s.Currency, l))
	} else if s.Status == checkout.Ready {
		problem = declineOf(l, s)
	}
	p.show(w, r, s, token, problem, email)
}

// refusalText is why checkout refused the payment, in the page's language:
// the catalog's sentence for the refusal's key, else a general one
// (checkout's own message is written for the model).
func refusalText(l *i18n.Lang, e *shop.Error, format func(int64) string) string {
	switch {
	case e.Param == "$.buyer.email":
		return l.T("pay_bad_email")
	case e.Key != "" && l.Has(e.Key):
		return messageText(l, contract.Message{Key: e.Key, Params: e.Params, Content: e.Message}, format)
	}
	return l.T("pay_not_completed")
}

// changed answers a payment refused because the session changed after the
// page was shown: the page again, with the session as it is now and a new
// form, under 409 Conflict.
func (p *payPages) changed(w http.ResponseWriter, r *http.Request, s *checkout.Session, token, email string) {
	if s.Status != checkout.Ready {
		p.show(w, r, s, token, "", email)
		return
	}
	v := p.payView(i18n.FromRequest(r), s, token, "", email)
	v.CanSave = p.canSave(r.Context(), s.ID)
	v.Error = v.L.T("pay_changed", "total", v.Total)
	p.render(w, http.StatusConflict, "pay", v)
}

// returned is where a hosted page sends the buyer after paying: the page's
// payment is settled now rather than waiting for the webhook.
func (p *payPages) returned(w http.ResponseWriter, r *http.Request, id, _ string) {
	if hosted := r.URL.Query().Get("checkout"); hosted != "" && len(hosted) <= 255 {
		ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
		err := p.c.SettleHosted(ctx, hosted)
		cancel()
		if err != nil {
			p.logger.WarnContext(r.Context(), "settle hosted checkout on return; the webhook or the reconciler will", "session", id, "err", err)
		}
	}
	s, err := p.c.Get(r.Context(), id)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	switch s.Status {
	case checkout.Completed:
		if s.Order != nil {
			http.Redirect(w, r, s.Order.PermalinkURL+"&paid=1", http.StatusSeeOther)
			return
		}
	case checkout.Ready, checkout.InProgress:
		p.processing(w, r)
		return
	}
	p.message(w, r, http.StatusOK, "msg_received_title", "msg_received", "msg_return")
}

// canceled records that the buyer left the payment page without paying.
func (p *payPages) canceled(w http.ResponseWriter, r *http.Request, id, token string) {
	s, err := p.c.CancelPayment(r.Context(), id)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	if s.Status == checkout.Completed && s.Order != nil {
		http.Redirect(w, r, s.Order.PermalinkURL+"&paid=1", http.StatusSeeOther)
		return
	}
	l := i18n.FromRequest(r)
	v := &payMessage{pageView: pageView{L: l, Title: l.T("msg_cancel_title")}, Lines: []string{l.T("msg_cancel")}}
	if s.Status == checkout.Ready && p.c.Sandboxed() {
		v.Retry = "/pay/" + url.PathEscape(id) + "?t=" + url.QueryEscape(token)
	}
	p.render(w, http.StatusOK, "paymsg", v)
}

// failed answers an error: a caller's error as a message page, anything
// else logged and a 500.
func (p *payPages) failed(w http.ResponseWriter, r *http.Request, err error) {
	var e *shop.Error
	if errors.As(err, &e) {
		status, key := http.StatusBadRequest, "msg_unavailable"
		if e.Code == shop.NotFound {
			status, key = http.StatusNotFound, "msg_not_found"
		}
		l := i18n.FromRequest(r)
		why := l.T(key)
		if l == i18n.English {
			why = e.Message // checkout's words are English
		}
		p.render(w, status, "paymsg", &payMessage{pageView: pageView{L: l, Title: l.T("msg_unavailable_title")}, Lines: []string{why}})
		return
	}
	p.logger.ErrorContext(r.Context(), "payment page", "err", err)
	p.message(w, r, http.StatusInternalServerError, "msg_unavailable_title", "msg_failed")
}

// payView is what the sandbox payment page shows.
type payView struct {
	pageView
	Caption, Shop, Token, Action, Cancel, Email, Error, Total, Until string
	TestMode                                                         bool
	Lines                                                            []lineView
	Totals                                                           []totalView
	Address                                                          []string
	Option                                                           *optionView
	Links                                                            []linkView
	Cards                                                            []cardView
	// Saved are the buyer's saved cards (a linked buyer's session), and
	// CanSave offers to save the card entered: only to a linked buyer.
	Saved   []cardView
	CanSave bool
	// Seen is the signed figures the page shows (checkout.SeenToken),
	// posted back with the form.
	Seen string
}

type cardView struct {
	Value, Label string
	Checked      bool
}

type payMessage struct {
	pageView
	Lines []string
	Retry string
}

func (p *payPages) payView(l *i18n.Lang, s *checkout.Session, token, problem, email string) *payView {
	format := formatter(s.Currency, l)
	v := &payView{
		pageView: pageView{L: l, Title: l.T("pay_title", "shop", p.shop)},
		Caption:  l.T("pay_caption"), Shop: p.shop, Token: token, Seen: p.c.SeenToken(s), Error: problem,
		Action:   "/pay/" + url.PathEscape(s.ID),
		Cancel:   "/pay/" + url.PathEscape(s.ID) + "/cancel?t=" + url.QueryEscape(token),
		TestMode: s.PaymentMode == checkout.PaymentTest,
		Address:  addressLines(l, s.FulfillmentAddress),
		Until:    l.T("pay_until", "time", s.ExpiresAt.UTC().Format("15:04"), "date", l.Date(s.ExpiresAt)),
	}
	v.Email = email
	if v.Email == "" && s.Buyer != nil {
		v.Email = s.Buyer.Email
	}
	v.Lines, v.Totals = itemViews(l, s.Display, s.LineItems, s.Totals, format)
	for _, t := range s.Totals {
		if t.Type == checkout.TotalTotal {
			v.Total = format(t.Amount)
		}
	}
	for _, o := range s.FulfillmentOptions {
		if o.ID == s.FulfillmentOptionID {
			v.Option = newOptionView(l, o.Title, "", o.Carrier, format(s.Display.Option(o)), o.EarliestDeliveryTime, o.LatestDeliveryTime)
		}
	}
	v.Links = linkViews(l, s.Links)
	for _, m := range s.PaymentProvider.ManagedPaymentMethods {
		v.Saved = append(v.Saved, cardView{Value: m.ID, Label: m.DisplayName, Checked: len(v.Saved) == 0})
	}
	for i, c := range testCards {
		v.Cards = append(v.Cards, cardView{Value: c.Value, Label: c.label(l), Checked: i == 0 && len(v.Saved) == 0})
	}
	return v
}

func (p *payPages) processing(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "2")
	l := i18n.FromRequest(r)
	p.render(w, http.StatusAccepted, "payprocessing", &payMessage{pageView: pageView{L: l, Title: l.T("msg_processing_title")},
		Lines: []string{l.T("msg_processing"), l.T("msg_processing_also")}})
}

// message answers a page of a title and lines, each a catalog key, in the
// request's language.
func (p *payPages) message(w http.ResponseWriter, r *http.Request, status int, title string, lines ...string) {
	l := i18n.FromRequest(r)
	v := &payMessage{pageView: pageView{L: l, Title: l.T(title)}}
	for _, k := range lines {
		v.Lines = append(v.Lines, l.T(k))
	}
	p.render(w, status, "paymsg", v)
}

func (p *payPages) render(w http.ResponseWriter, status int, name string, data interface{ lang() *i18n.Lang }) {
	writeHTML(w, p.logger, payCSP, status, name, data)
}

// declineOf is the decline a session ready again after a payment carries,
// in the page's language: the payment provider's words for the buyer
// (payments' buyerMessage), which the catalogs hold under decline_*, are
// said in the language; a message they do not hold stays as written in
// English, and only on an English page.
func declineOf(l *i18n.Lang, s *checkout.Session) string {
	for _, m := range s.Messages {
		if m.Code == string(shop.PaymentDeclined) || m.Code == string(shop.Requires3DS) {
			return declineText(l, m.Content)
		}
	}
	return l.T("pay_not_completed")
}

// declineKeys are the catalogs' keys of the buyer messages a decline carries.
var declineKeys = []string{"decline_card_declined", "decline_insufficient_funds", "decline_authentication_required",
	"decline_expired_card", "decline_incorrect_cvc", "decline_processing_error"}

// declineText is a decline message of checkout ("Your card was declined.
// Try another card.") in the language.
func declineText(l *i18n.Lang, content string) string {
	if l == i18n.English {
		return content
	}
	said, another := strings.CutSuffix(content, " "+i18n.English.T("decline_try_another"))
	text := l.T("decline_card_declined")
	for _, k := range declineKeys {
		if said == i18n.English.T(k) {
			text = l.T(k)
		}
	}
	if another {
		text += l.T("sentence_space") + l.T("decline_try_another")
	}
	return text
}
