package purchase

import (
	"shop/contract"

	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// payOnPage pays as a buyer in a host without a payment sheet: it makes the
// session's payment link and, on the sandbox's page, pays with the test
// cards as the page's form does (a decline first under --decline), then
// posts again, which must answer the same receipt. A Stripe Checkout page
// needs a browser: the run checks the link and stops there. It reports
// whether the run may go on to the order's checks.
func (p *purchaser) payOnPage(ctx context.Context) bool {
	var link contract.PaymentLink
	if !p.step("create_payment_link", func() (string, error) {
		if _, err := p.call(ctx, "create_payment_link", map[string]any{"checkout_session_id": p.session.ID}, &link); err != nil {
			return "", err
		}
		u, err := url.Parse(link.URL)
		switch {
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			return "", fmt.Errorf("url %q is not an absolute http(s) address", link.URL)
		case !link.ExpiresAt.After(time.Now().Add(10 * time.Minute)):
			return "", fmt.Errorf("the page closes at %s, in less than 10 minutes", link.ExpiresAt.Format(time.RFC3339))
		case link.Provider != "sandbox" && link.Provider != "stripe":
			return "", fmt.Errorf("provider %q, want sandbox or stripe", link.Provider)
		}
		return fmt.Sprintf("%s page, open until %s: %s", link.Provider, link.ExpiresAt.Format(time.RFC3339), link.URL), nil
	}) {
		return false
	}
	if link.Provider != "sandbox" {
		p.stopped = "stopped at the Stripe Checkout page, which a buyer pays in a browser"
		return false
	}
	if p.o.Decline && !p.step("payment page: decline", func() (string, error) {
		code, _, body, err := p.postPage(ctx, link.URL, "pm_card_visa_chargeDeclined")
		switch {
		case err != nil:
			return "", err
		case code != http.StatusPaymentRequired || !strings.Contains(body, `id="pay-error"`) || !strings.Contains(body, `id="pay-form"`):
			return "", fmt.Errorf("a declined card answered %d, want 402 with the reason and the form again", code)
		}
		return "402: the page shows the decline and the form again", nil
	}) {
		return false
	}
	var receipt string
	if !p.step("payment page: pay", func() (string, error) {
		code, loc, _, err := p.postPage(ctx, link.URL, "pm_card_visa")
		if err != nil {
			return "", err
		}
		if code != http.StatusSeeOther || !strings.Contains(loc, "/orders/") {
			return "", fmt.Errorf("paying answered %d to %q, want 303 to the receipt", code, loc)
		}
		receipt = loc
		var s contract.Session
		if _, err := p.call(ctx, "get_checkout_session", map[string]any{"checkout_session_id": p.session.ID}, &s); err != nil {
			return "", err
		}
		if s.Order != nil && !strings.HasPrefix(loc, s.Order.PermalinkURL) {
			return "", fmt.Errorf("the page sent the buyer to %q, not the order's receipt %q", loc, s.Order.PermalinkURL)
		}
		return p.placed(s, "pm_card_visa on the page")
	}) {
		return false
	}
	p.step("payment page: again", func() (string, error) {
		code, loc, _, err := p.postPage(ctx, link.URL, "pm_card_visa")
		if err != nil {
			return "", err
		}
		if code != http.StatusSeeOther || loc != receipt {
			return "", fmt.Errorf("paying again answered %d to %q, want 303 to the same receipt", code, loc)
		}
		return "the same receipt; nothing charged again", nil
	})
	return true
}

// postPage shows the sandbox page and posts its form with card, as a
// browser does (with the figures the page showed, its "seen" field), and
// answers the status, the redirect's target and the body, without following
// the redirect.
func (p *purchaser) postPage(ctx context.Context, page, card string) (int, string, string, error) {
	u, err := url.Parse(page)
	if err != nil {
		return 0, "", "", err
	}
	client := &http.Client{Transport: p.http.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	_, _, shown, err := p.send(ctx, client, http.MethodGet, page, nil)
	if err != nil {
		return 0, "", "", err
	}
	form := url.Values{"t": {u.Query().Get("t")}, "card": {card}, "email": {purchaseBuyer.Email}}
	if m := seenField.FindStringSubmatch(shown); m != nil {
		form.Set("seen", m[1])
	}
	u.RawQuery = ""
	return p.send(ctx, client, http.MethodPost, u.String(), form)
}

// seenField is the sandbox page form's signed "what you saw".
var seenField = regexp.MustCompile(`name="seen" value="([^"]*)"`)

// send makes a request of the payment page, a form when form is set, and
// answers the status, the redirect's target and the body.
func (p *purchaser) send(ctx context.Context, client *http.Client, method, u string, form url.Values) (int, string, string, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return 0, "", "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", "", fmt.Errorf("%s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, "", "", err
	}
	return resp.StatusCode, resp.Header.Get("Location"), string(page), nil
}
