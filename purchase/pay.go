package purchase

import (
	"shop/contract"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// How a purchase run pays, and what it asks Stripe.
//
// Over MCP the shop does not say which provider it runs, so the run decides
// from its own environment: without STRIPE_SECRET_KEY it pays with Stripe's
// test payment methods (pm_card_visa, pm_card_visa_chargeDeclined), which the
// sandbox and Stripe test mode both take. With a sk_test_ key (the shop's
// own, so that the token is granted to the shop's account) it pays as
// ChatGPT does, with a shared payment token, made by Stripe's test helper
// POST /v1/test_helpers/shared_payment/granted_tokens for that payment
// method, limited to the session's total and currency for ten minutes; and it
// reads the PaymentIntent back to compare the amount charged with the total.

// stripeTestKey reports whether key is a Stripe test-mode secret key.
func stripeTestKey(key string) bool {
	return strings.HasPrefix(key, "sk_test_") || strings.HasPrefix(key, "rk_test_")
}

// token is the payment token for the test payment method pm, and how it was made.
func (p *purchaser) token(ctx context.Context, pm string) (token, via string, err error) {
	if !stripeTestKey(p.o.StripeKey) {
		return pm, pm, nil
	}
	total := totalOf(p.session.Totals, contract.TotalTotal)
	form := url.Values{
		"payment_method":            {pm},
		"usage_limits[currency]":    {p.session.Currency},
		"usage_limits[max_amount]":  {strconv.FormatInt(total, 10)},
		"usage_limits[expires_at]":  {strconv.FormatInt(time.Now().Add(10*time.Minute).Unix(), 10)},
		"shared_metadata[purchase]": {p.session.ID},
	}
	var spt struct {
		ID string `json:"id"`
	}
	if err := p.stripe(ctx, http.MethodPost, "/v1/test_helpers/shared_payment/granted_tokens", p.o.SPTVersion, form, &spt); err != nil {
		return "", "", fmt.Errorf("shared payment token for %s: %w", pm, err)
	}
	if !strings.HasPrefix(spt.ID, "spt_") {
		return "", "", fmt.Errorf("shared payment token for %s: Stripe answered id %q", pm, spt.ID)
	}
	return spt.ID, fmt.Sprintf("%s (Stripe test shared payment token for %s)", spt.ID, pm), nil
}

// charged describes the amount charged for the receipt's payment and checks
// it against the session's total: read from Stripe when the run has a test
// key and the payment is Stripe's; the sandbox's charges are not visible
// over MCP, so there the receipt's total, which the shop charged, is what
// the run can compare.
func (p *purchaser) charged(ctx context.Context, reference string) (string, error) {
	total := totalOf(p.ready.Totals, contract.TotalTotal)
	if got := totalOf(p.done.Order.Receipt.Totals, contract.TotalTotal); got != total {
		return "", fmt.Errorf("the receipt's total %d is not the session's %d", got, total)
	}
	if !stripeTestKey(p.o.StripeKey) || !strings.HasPrefix(reference, "pi_") || strings.HasPrefix(reference, "pi_sandbox_") {
		return "the receipt's total (the charge itself is not visible over MCP)", nil
	}
	var pi struct {
		Amount   int64  `json:"amount"`
		Received int64  `json:"amount_received"`
		Currency string `json:"currency"`
		Status   string `json:"status"`
	}
	if err := p.stripe(ctx, http.MethodGet, "/v1/payment_intents/"+url.PathEscape(reference), "", nil, &pi); err != nil {
		return "", fmt.Errorf("PaymentIntent %s: %w", reference, err)
	}
	if pi.Status != "succeeded" || pi.Amount != total || pi.Received != total || pi.Currency != p.ready.Currency {
		return "", fmt.Errorf("PaymentIntent %s: %s, amount %d, received %d %s; the total is %d %s", reference, pi.Status, pi.Amount, pi.Received, pi.Currency, total, p.ready.Currency)
	}
	return fmt.Sprintf("Stripe's PaymentIntent %s (%s received)", reference, p.cur.Format(pi.Received)), nil
}

// stripe makes one request to Stripe's API with the run's key, and the
// Stripe-Version version when it is not "", and decodes the answer. The key
// goes in no error.
func (p *purchaser) stripe(ctx context.Context, method, path, version string, form url.Values, out any) error {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(p.o.StripeAPI, "/")+path, body)
	if err != nil {
		return err
	}
	req.SetBasicAuth(p.o.StripeKey, "")
	if version != "" {
		req.Header.Set("Stripe-Version", version)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, e.Error.Message)
	}
	return json.Unmarshal(b, out)
}

// retry429 retries a request the server rate-limited, after its
// Retry-After (at most 5s, three times), as a well-behaved host does.
type retry429 struct{ next http.RoundTripper }

func (t retry429) RoundTrip(req *http.Request) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, err := t.next.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests || try == 3 || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		wait := time.Second
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			wait = min(time.Duration(s)*time.Second, 5*time.Second)
		}
		resp.Body.Close()
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(wait):
		}
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}
