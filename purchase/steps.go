package purchase

import (
	"shop/contract"

	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/money"
)

// The steps of a purchase run, in the order run calls them.

// summaryRef is what the run keeps of a search result.
type summaryRef struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	InStock bool   `json:"in_stock"`
}

func (p *purchaser) search(ctx context.Context) ([]summaryRef, string, error) {
	var page struct {
		Products []summaryRef `json:"products"`
		Total    int64        `json:"total"`
	}
	args := map[string]any{"in_stock_only": true, "limit": min(50, p.o.Items+10)}
	if _, err := p.call(ctx, "search_products", args, &page); err != nil {
		return nil, "", err
	}
	if len(page.Products) == 0 {
		return nil, "", fmt.Errorf("no product in stock (total %d)", page.Total)
	}
	for i, s := range page.Products {
		if s.ID == "" || !s.InStock {
			return nil, "", fmt.Errorf("products[%d] %q: in_stock_only answered a product without an id or not in stock", i, s.ID)
		}
	}
	return page.Products, fmt.Sprintf("%d in-stock products of %d, first %q", len(page.Products), page.Total, page.Products[0].Title), nil
}

// pickVariant reads a product and adds its first buyable variant to items:
// two units on the first line when there are two, so that unit × quantity
// is checked, one on the others.
func (p *purchaser) pickVariant(ctx context.Context, sr summaryRef, items []contract.Item) ([]contract.Item, string, error) {
	var out struct {
		Product struct {
			ID       string `json:"id"`
			Title    string `json:"title"`
			Variants []struct {
				ID        string      `json:"id"`
				Title     string      `json:"title"`
				Price     money.Price `json:"price"`
				Available int64       `json:"available"`
			} `json:"variants"`
		} `json:"product"`
	}
	if _, err := p.call(ctx, "get_product", map[string]any{"product_id": sr.ID}, &out); err != nil {
		return items, "", err
	}
	if out.Product.ID != sr.ID || len(out.Product.Variants) == 0 {
		return items, "", fmt.Errorf("asked for %q, got %q with %d variants", sr.ID, out.Product.ID, len(out.Product.Variants))
	}
	for _, v := range out.Product.Variants {
		if v.Available < 1 {
			continue
		}
		if v.Price.Amount < 0 || v.Price.Display == "" {
			return items, "", fmt.Errorf("variant %s: price %+v", v.ID, v.Price)
		}
		q := int64(1)
		if len(items) == 0 && v.Available >= 2 {
			q = 2
		}
		items = append(items, contract.Item{ID: v.ID, Quantity: q})
		return items, fmt.Sprintf("%s: %d × %s at %s (%d available)", sr.ID, q, v.ID, v.Price.Display, v.Available), nil
	}
	return items, fmt.Sprintf("%s: no variant available now; next product", sr.ID), nil
}

func (p *purchaser) create(ctx context.Context, items []contract.Item) (string, error) {
	args := map[string]any{"items": items, "buyer": purchaseBuyer}
	if p.link != nil {
		// A linked buyer's session starts with the account's email.
		args["buyer"] = map[string]any{"name": purchaseBuyer.Name}
	}
	if _, err := p.call(ctx, "create_checkout_session", args, &p.session); err != nil {
		return "", err
	}
	s := p.session
	if p.link != nil && (s.Buyer == nil || s.Buyer.Email != purchaseBuyer.Email) {
		return "", fmt.Errorf("%s: buyer %+v, want the account's email %s filled in", s.ID, s.Buyer, purchaseBuyer.Email)
	}
	if err := checkNewSession(s, items); err != nil {
		return "", fmt.Errorf("%s: %w", s.ID, err)
	}
	cur, err := money.Lookup(s.Currency)
	if err != nil {
		return "", fmt.Errorf("currency %q: %w", s.Currency, err)
	}
	p.cur = cur
	return fmt.Sprintf("%s: %s, %s, items %s, payment_mode %s", s.ID, s.Status, plural(len(s.LineItems), "line"), cur.Format(totalOf(s.Totals, contract.TotalItemsBase)), s.PaymentMode), nil
}

// checkMode refuses a live-mode shop unless --live was given (before any
// payment; the session is then canceled).
func (p *purchaser) checkMode() (string, error) {
	switch p.session.PaymentMode {
	case contract.PaymentTest:
		return "test: no money moves", nil
	case contract.PaymentLive:
		if !p.o.Live {
			return "", fmt.Errorf("the shop takes live payments (payment_mode live): refusing to run; pass --live to check it up to payment (no money moves)")
		}
		return "live, --live given: the run stops at payment and checks that a test card is refused", nil
	}
	return "", fmt.Errorf("payment_mode %q: want test or live", p.session.PaymentMode)
}

func (p *purchaser) update(ctx context.Context, args map[string]any) error {
	args["checkout_session_id"] = p.session.ID
	var s contract.Session
	if _, err := p.call(ctx, "update_checkout_session", args, &s); err != nil {
		return err
	}
	if s.ID != p.session.ID {
		return fmt.Errorf("answered session %q, want %q", s.ID, p.session.ID)
	}
	p.session = s
	return sessionIdentities(s)
}

func (p *purchaser) address(ctx context.Context) (string, error) {
	if err := p.update(ctx, map[string]any{"fulfillment_address": p.o.Address}); err != nil {
		return "", err
	}
	s := p.session
	if len(s.FulfillmentOptions) == 0 {
		return "", fmt.Errorf("no shipping option for %s, %s %s; messages %s", p.o.Address.City, p.o.Address.State, p.o.Address.Country, messagesText(s.Messages))
	}
	var titles []string
	for _, o := range s.FulfillmentOptions {
		if o.ID == "" || o.Total != o.Subtotal+o.Tax || o.Total < 0 {
			return "", fmt.Errorf("option %+v: want an id and total = subtotal + tax", o)
		}
		titles = append(titles, fmt.Sprintf("%s %s", o.ID, p.cur.Format(o.Total)))
	}
	return fmt.Sprintf("%s, %s: %s; options %s", p.o.Address.City, p.o.Address.State, s.Status, strings.Join(titles, ", ")), nil
}

// shipping chooses the first option, as a buyer who takes the first offer.
func (p *purchaser) shipping(ctx context.Context) (string, error) {
	opt := p.session.FulfillmentOptions[0]
	if err := p.update(ctx, map[string]any{"fulfillment_option_id": opt.ID}); err != nil {
		return "", err
	}
	s := p.session
	if s.FulfillmentOptionID != opt.ID {
		return "", fmt.Errorf("fulfillment_option_id %q, want %q", s.FulfillmentOptionID, opt.ID)
	}
	if s.Status != contract.SessionReady {
		return "", fmt.Errorf("status %s, want ready_for_payment; messages %s", s.Status, messagesText(s.Messages))
	}
	if err := checkLinks(s.Links); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (%s): ready_for_payment, total %s", opt.ID, opt.Title, p.cur.Format(totalOf(s.Totals, contract.TotalTotal))), nil
}

// promotion applies --promo and checks that it took something off.
func (p *purchaser) promotion(ctx context.Context) (string, error) {
	before := p.session
	if err := p.update(ctx, map[string]any{"promo_code": p.o.Promo}); err != nil {
		return "", err
	}
	s := p.session
	for _, m := range s.Messages {
		if m.Param == "$.promo_code" {
			return "", fmt.Errorf("%s not applied: %s", p.o.Promo, m.Content)
		}
	}
	if s.Status != contract.SessionReady {
		return "", fmt.Errorf("status %s after the promotion; messages %s", s.Status, messagesText(s.Messages))
	}
	was, now := totalOf(before.Totals, contract.TotalTotal), totalOf(s.Totals, contract.TotalTotal)
	if now >= was {
		return "", fmt.Errorf("%s took nothing off: total %s before, %s after", p.o.Promo, p.cur.Format(was), p.cur.Format(now))
	}
	return fmt.Sprintf("%s: total %s → %s (%s)", p.o.Promo, p.cur.Format(was), p.cur.Format(now), messagesText(s.Messages)), nil
}

// render calls render_checkout, as the model does to show the checkout.
func (p *purchaser) render(ctx context.Context) (string, error) {
	var s contract.Session
	if _, err := p.call(ctx, "render_checkout", map[string]any{"checkout_session_id": p.session.ID}, &s); err != nil {
		return "", err
	}
	if s.ID != p.session.ID || s.Status != p.session.Status || !sameTotals(s.Totals, p.session.Totals) {
		return "", fmt.Errorf("answered %s %s %v, the session is %s %s %v", s.ID, s.Status, s.Totals, p.session.ID, p.session.Status, p.session.Totals)
	}
	return fmt.Sprintf("%s, template %s", s.Status, renderURI(p.tools["render_checkout"])), nil
}

// template reads render_checkout's template as a host does before showing
// it: the resources/list entry and the resources/read content.
func (p *purchaser) template(ctx context.Context) (string, error) {
	uri := renderURI(p.tools["render_checkout"])
	if uri == "" {
		return "", fmt.Errorf("render_checkout names no template (_meta.ui.resourceUri)")
	}
	var listed *mcp.Resource
	for r, err := range p.cs.Resources(ctx, nil) {
		if err != nil {
			return "", fmt.Errorf("resources/list: %w", err)
		}
		if r.URI == uri {
			listed = r
		}
	}
	if listed == nil {
		return "", fmt.Errorf("resources/list has no %s", uri)
	}
	if err := checkUIResource("resources/list entry", listed.MIMEType, listed.Meta, nil); err != nil {
		return "", err
	}
	got, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", fmt.Errorf("resources/read %s: %w", uri, err)
	}
	if len(got.Contents) != 1 || got.Contents[0].URI != uri {
		return "", fmt.Errorf("resources/read %s: %d contents, want the one for the URI", uri, len(got.Contents))
	}
	c := got.Contents[0]
	if err := checkUIResource("resources/read content", c.MIMEType, c.Meta, &c.Text); err != nil {
		return "", err
	}
	csp := uiCSP(c.Meta)
	// The widget shows the lines' images: the CSP must allow their origins.
	for _, li := range p.session.LineItems {
		for _, img := range li.Images {
			if o := origin(img); o != "" && !contains(csp.ResourceDomains, o) {
				return "", fmt.Errorf("the image %s of line %s is from %s, which the CSP's resourceDomains %v do not allow", img, li.ID, o, csp.ResourceDomains)
			}
		}
	}
	return fmt.Sprintf("%s: %s, %d kB HTML, CSP resourceDomains %v, connectDomains %v", uri, c.MIMEType, len(c.Text)/1000, csp.ResourceDomains, csp.ConnectDomains), nil
}

// complete calls complete_checkout as a host does after its payment sheet:
// leniently shaped, with a null buyer (the session has one).
func (p *purchaser) complete(ctx context.Context, token string) (*mcp.CallToolResult, error) {
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "complete_checkout", Arguments: map[string]any{
		"checkout_session_id": p.session.ID,
		"buyer":               nil,
		"payment_data":        map[string]any{"token": token, "provider": "stripe"},
	}})
	if err != nil {
		return nil, fmt.Errorf("complete_checkout: %w", err)
	}
	return res, nil
}

// payWith calls complete_checkout with a token for card (a Stripe test
// shared payment token, or the card itself in the sandbox) and answers the
// session; an isError answer is an error. via says how it paid.
func (p *purchaser) payWith(ctx context.Context, card string) (s contract.Session, via string, err error) {
	token, via, err := p.token(ctx, card)
	if err != nil {
		return s, "", err
	}
	res, err := p.complete(ctx, token)
	if err != nil {
		return s, "", err
	}
	if res.IsError {
		return s, "", fmt.Errorf("%s answered isError: %s", card, ResultText(res))
	}
	if err := decodeResult(res, &s); err != nil {
		return s, "", err
	}
	return s, via, nil
}

// payDeclined pays with a declining card: the session must stay payable,
// with a payment_declined message and isError false (docs/buying.md).
func (p *purchaser) payDeclined(ctx context.Context) (string, error) {
	s, via, err := p.payWith(ctx, "pm_card_visa_chargeDeclined")
	if err != nil {
		return "", err
	}
	if s.Status != contract.SessionReady {
		return "", fmt.Errorf("status %s after a decline, want ready_for_payment", s.Status)
	}
	if !sameTotals(s.Totals, p.ready.Totals) {
		return "", fmt.Errorf("totals changed on a decline: %v, were %v", s.Totals, p.ready.Totals)
	}
	for _, m := range s.Messages {
		if m.Type == contract.MessageError && m.Code == "payment_declined" {
			p.session = s
			return fmt.Sprintf("%s: ready_for_payment, isError false, %q", via, m.Content), nil
		}
	}
	return "", fmt.Errorf("no payment_declined error message after a decline: %s", messagesText(s.Messages))
}

// pay pays with a card that pays and checks the order it answers.
func (p *purchaser) pay(ctx context.Context) (string, error) {
	s, via, err := p.payWith(ctx, "pm_card_visa")
	if err != nil {
		return "", err
	}
	return p.placed(s, via)
}

// placed checks the completed session a payment answered and keeps it as
// the run's order.
func (p *purchaser) placed(s contract.Session, via string) (string, error) {
	p.done = s
	if s.Status != contract.SessionCompleted || s.Order == nil {
		return "", fmt.Errorf("status %s, order %v; messages %s", s.Status, s.Order != nil, messagesText(s.Messages))
	}
	o := s.Order
	if !strings.HasPrefix(o.ID, "ord_") || o.Number <= 0 || o.CheckoutSessionID != s.ID || o.PermalinkURL == "" || o.Receipt.OrderID != o.ID {
		return "", fmt.Errorf("order %s #%d for session %s, permalink %q, receipt of %s", o.ID, o.Number, o.CheckoutSessionID, o.PermalinkURL, o.Receipt.OrderID)
	}
	total := totalOf(o.Receipt.Totals, contract.TotalTotal)
	p.rep.Order = &Order{ID: o.ID, Number: o.Number, Total: total, Currency: s.Currency, PaymentMode: string(s.PaymentMode), PermalinkURL: o.PermalinkURL}
	return fmt.Sprintf("%s: order #%d %s, %s, payment %s %s", via, o.Number, o.ID, p.cur.Format(total), o.Receipt.Payment.Status, o.Receipt.Payment.Reference), nil
}

// payAgain pays the completed session again, as a host retrying after a
// lost answer would: the same order, nothing charged (docs/buying.md).
func (p *purchaser) payAgain(ctx context.Context) (string, error) {
	res, err := p.complete(ctx, "pm_card_visa")
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", fmt.Errorf("isError: %s", ResultText(res))
	}
	var s contract.Session
	if err := decodeResult(res, &s); err != nil {
		return "", err
	}
	if s.Order == nil || s.Order.ID != p.done.Order.ID || s.Order.Receipt.Payment.Reference != p.done.Order.Receipt.Payment.Reference {
		return "", fmt.Errorf("paying a completed session again answered order %+v, want %s", s.Order, p.done.Order.ID)
	}
	return fmt.Sprintf("the same order %s, the same payment %s", s.Order.ID, s.Order.Receipt.Payment.Reference), nil
}

// refusedInLive pays a live-mode shop with a test card, which it must
// refuse (docs/buying.md): the --live run checks everything but moves no money.
func (p *purchaser) refusedInLive(ctx context.Context) (string, error) {
	res, err := p.complete(ctx, "pm_card_visa")
	if err != nil {
		return "", err
	}
	if !res.IsError {
		return "", fmt.Errorf("a live-mode shop took the test card pm_card_visa: %s", ResultText(res))
	}
	return fmt.Sprintf("refused the test card, as a live shop must: %s", ResultText(res)), nil
}

func (p *purchaser) getOrder(ctx context.Context) (string, error) {
	o := p.done.Order
	var out struct {
		Order contract.Receipt `json:"order"`
	}
	// The email as the buyer types it: get_order compares it case-insensitively.
	if _, err := p.call(ctx, "get_order", map[string]any{"order_id": o.ID, "email": strings.ToUpper(purchaseBuyer.Email)}, &out); err != nil {
		return "", err
	}
	if err := sameReceipt(out.Order, o.Receipt); err != nil {
		return "", fmt.Errorf("get_order's receipt differs from complete_checkout's: %w", err)
	}
	return fmt.Sprintf("order #%d %s, %s, %s", out.Order.Number, out.Order.Status, plural(len(out.Order.LineItems), "line"), p.cur.Format(totalOf(out.Order.Totals, contract.TotalTotal))), nil
}

// permalink opens the receipt page as the buyer does.
func (p *purchaser) permalink(ctx context.Context) (string, error) {
	o := p.done.Order
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.PermalinkURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	page := string(body)
	total := p.cur.Format(totalOf(o.Receipt.Totals, contract.TotalTotal))
	switch {
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("GET %s: %s", o.PermalinkURL, resp.Status)
	case mt != "text/html":
		return "", fmt.Errorf("Content-Type %q, want text/html", resp.Header.Get("Content-Type"))
	case !strings.Contains(strings.ToLower(page), "<html"):
		return "", fmt.Errorf("not an HTML document: %.60q", page)
	case !strings.Contains(page, strconv.FormatInt(o.Number, 10)):
		return "", fmt.Errorf("the page does not show the order number %d", o.Number)
	case !strings.Contains(page, total):
		return "", fmt.Errorf("the page does not show the total %s", total)
	}
	return fmt.Sprintf("200 text/html, %d bytes, shows order %d and %s", len(body), o.Number, total), nil
}

// figures checks that every figure agrees: the session's and the receipt's
// identities (docs/buying.md), the receipt against the session as paid, and
// the total against the amount charged.
func (p *purchaser) figures(ctx context.Context) (string, error) {
	s, r := p.done, p.done.Order.Receipt
	if err := sessionIdentities(s); err != nil {
		return "", fmt.Errorf("completed session: %w", err)
	}
	if err := receiptIdentities(r); err != nil {
		return "", fmt.Errorf("receipt: %w", err)
	}
	if err := receiptMatches(r, p.ready); err != nil {
		return "", fmt.Errorf("receipt against the session as paid: %w", err)
	}
	if !sameTotals(s.Totals, p.ready.Totals) {
		return "", fmt.Errorf("the completed session's totals %v differ from the ready session's %v", s.Totals, p.ready.Totals)
	}
	total := totalOf(r.Totals, contract.TotalTotal)
	charged, err := p.charged(ctx, r.Payment.Reference)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s, %s, identities hold; total %s = %s", plural(len(r.LineItems), "line"), plural(len(r.Totals), "total"), p.cur.Format(total), charged), nil
}

// plural is "1 line", "2 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
