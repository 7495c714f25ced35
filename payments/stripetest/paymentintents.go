package stripetest

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"shop/payments"
)

type intent struct {
	ID                      string            `json:"id"`
	Object                  string            `json:"object"`
	Amount                  int64             `json:"amount"`
	AmountCapturable        int64             `json:"amount_capturable"`
	AmountReceived          int64             `json:"amount_received"`
	AutomaticPaymentMethods *autoMethods      `json:"automatic_payment_methods"`
	CanceledAt              *int64            `json:"canceled_at"`
	CaptureMethod           string            `json:"capture_method"`
	ClientSecret            string            `json:"client_secret"`
	ConfirmationMethod      string            `json:"confirmation_method"`
	Created                 int64             `json:"created"`
	Currency                string            `json:"currency"`
	Customer                *string           `json:"customer"`
	Description             *string           `json:"description"`
	LastPaymentError        *apiError         `json:"last_payment_error"`
	LatestCharge            *string           `json:"latest_charge"`
	Livemode                bool              `json:"livemode"`
	Metadata                map[string]string `json:"metadata"`
	NextAction              any               `json:"next_action"`
	PaymentMethod           *string           `json:"payment_method"`
	PaymentMethodTypes      []string          `json:"payment_method_types"`
	Status                  string            `json:"status"`

	seq      int64
	refunded int64
	session  string
	// method and charge are the PaymentMethod confirmed and the latest
	// charge, shown expanded where a request asks (see intent.view).
	method *paymentMethod
	charge *charge
}

type autoMethods struct {
	AllowRedirects string `json:"allow_redirects,omitempty"`
	Enabled        bool   `json:"enabled"`
}

// succeed is pi paid with its payment method (set before).
func (s *Server) succeed(pi *intent) {
	pi.Status, pi.AmountReceived = "succeeded", pi.Amount
	pi.PaymentMethod = &pi.method.ID
	s.charge(pi, "", "")
}

func (s *Server) createIntent(form url.Values) answer {
	expand, bad := expansions(form, "latest_charge", "payment_method")
	if bad != nil {
		return *bad
	}
	amount, bad := positive(form, "amount")
	if bad != nil {
		return *bad
	}
	currency := form.Get("currency")
	if currency == "" {
		return missing("currency")
	}
	method := form.Get("payment_method")
	var spt string
	for k, v := range form {
		if strings.HasPrefix(k, "payment_method_data[") && strings.HasPrefix(v[0], "spt_") {
			spt = v[0]
		}
	}
	saved, bad := s.savedMethod(form)
	if bad != nil {
		return *bad
	}
	if method != "" && saved == nil && !strings.HasPrefix(method, "pm_card_") {
		return noSuch(http.StatusBadRequest, "PaymentMethod", method, "payment_method")
	}
	pi := s.newIntent(amount, currency, params(form, "metadata"))
	pi.Description = optional(form, "description")
	if form.Has("automatic_payment_methods[enabled]") {
		pi.AutomaticPaymentMethods = &autoMethods{
			Enabled:        form.Get("automatic_payment_methods[enabled]") == "true",
			AllowRedirects: form.Get("automatic_payment_methods[allow_redirects]"),
		}
	}
	if method == "" && spt == "" {
		pi.Status = "requires_payment_method"
		return jsonAnswer(http.StatusOK, pi.view(expand, ""))
	}
	pi.method = s.newMethod(method)
	c := testCard(method)
	if saved != nil {
		pi.method, c = &saved.paymentMethod, offSession(form, testCard(saved.token))
		pi.Customer = saved.Customer
	}
	pi.PaymentMethod = &pi.method.ID
	if form.Get("confirm") != "true" {
		pi.Status = "requires_confirmation"
		return jsonAnswer(http.StatusOK, pi.view(expand, ""))
	}
	switch c.Outcome {
	case payments.Declined:
		// Stripe's card error carries the failed charge's id, the
		// PaymentIntent and the payment method, as does its
		// last_payment_error.
		s.charge(pi, c.ErrorCode, c.Message)
		pi.Status = "requires_payment_method"
		e := apiError{Type: "card_error", Code: c.ErrorCode, DeclineCode: c.DeclineCode, Param: c.Param, Message: c.Message,
			Charge: pi.charge.ID, PaymentMethod: pi.method}
		e.DocURL = "https://stripe.com/docs/error-codes/" + strings.ReplaceAll(c.ErrorCode, "_", "-")
		last := e
		pi.LastPaymentError = &last
		e.PaymentIntent = pi
		return errAnswer(http.StatusPaymentRequired, e)
	case payments.RequiresAction:
		pi.Status = "requires_action"
		pi.NextAction = map[string]any{"type": "use_stripe_sdk", "use_stripe_sdk": map[string]any{"type": "three_d_secure_redirect"}}
		return jsonAnswer(http.StatusOK, pi.view(expand, ""))
	}
	s.succeed(pi)
	return jsonAnswer(http.StatusOK, pi.view(expand, ""))
}

func (s *Server) newIntent(amount int64, currency string, metadata map[string]string) *intent {
	s.seq++
	pi := &intent{
		ID: s.randID("pi_3", 24), Object: "payment_intent", Amount: amount,
		CaptureMethod: "automatic_async", ConfirmationMethod: "automatic",
		Created: s.now().Unix(), Currency: currency, Metadata: metadata,
		PaymentMethodTypes: []string{"card"}, seq: s.seq,
	}
	pi.ClientSecret = pi.ID + "_secret_" + s.randID("", 25)
	s.intents[pi.ID] = pi
	return pi
}

// newest returns the PaymentIntents, newest first.
func (s *Server) newest() []*intent {
	var all []*intent
	for _, pi := range s.intents {
		all = append(all, pi)
	}
	slices.SortFunc(all, func(a, b *intent) int { return int(b.seq - a.seq) })
	return all
}

func (s *Server) listIntents(form url.Values) answer {
	expand, limit, bad := pageParams(form)
	if bad != nil {
		return *bad
	}
	all := s.newest()
	if after := form.Get("starting_after"); after != "" {
		i := slices.IndexFunc(all, func(pi *intent) bool { return pi.ID == after })
		if i < 0 {
			return noSuch(http.StatusBadRequest, "payment_intent", after, "starting_after")
		}
		all = all[i+1:]
	}
	return jsonAnswer(http.StatusOK, listPage("list", "/v1/payment_intents", all, limit, expand))
}

// pageParams are a list's or search's expansions and limit, or a 400
// answer.
func pageParams(form url.Values) (expand map[string]bool, limit int, bad *answer) {
	if expand, bad = expansions(form, "data.latest_charge", "data.payment_method"); bad != nil {
		return nil, 0, bad
	}
	if limit, bad = pageLimit(form); bad != nil {
		return nil, 0, bad
	}
	return expand, limit, nil
}

// listPage is a list or search answer (object "list" or "search_result") of
// the first limit of found.
func listPage(object, path string, found []*intent, limit int, expand map[string]bool) map[string]any {
	shown := found[:min(limit, len(found))]
	return map[string]any{"object": object, "data": views(shown, expand), "has_more": len(found) > len(shown), "url": path}
}

var metadataQuery = regexp.MustCompile(`^metadata\['((?:[^'\\]|\\.)*)'\]:'((?:[^'\\]|\\.)*)'$`)

func (s *Server) searchIntents(form url.Values) answer {
	expand, limit, bad := pageParams(form)
	if bad != nil {
		return *bad
	}
	q := form.Get("query")
	if q == "" {
		return missing("query")
	}
	m := metadataQuery.FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return invalid("", "query", "stripetest supports only search queries of the form metadata['key']:'value', not %q.", q)
	}
	unquote := strings.NewReplacer(`\'`, `'`, `\\`, `\`)
	key, value := unquote.Replace(m[1]), unquote.Replace(m[2])
	var found []*intent
	for _, pi := range s.newest() {
		if v, ok := pi.Metadata[key]; ok && v == value {
			found = append(found, pi)
		}
	}
	a := listPage("search_result", "/v1/payment_intents/search", found, limit, expand)
	a["next_page"] = nil
	return jsonAnswer(http.StatusOK, a)
}
