package stripetest

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
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
	SetupFutureUsage        *string           `json:"setup_future_usage"`
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

// searchClause is one clause of a search query the emulator understands:
// metadata['key']:'value', status:'value', amount:N, currency:'value', or
// created with >, >=, < or <= and a Unix time.
var searchClause = regexp.MustCompile(`^(?:metadata\['((?:[^'\\]|\\.)*)'\]|(status|currency|amount|created))(:|>=|<=|>|<)(?:'((?:[^'\\]|\\.)*)'|(-?[0-9]+))$`)

// matcher is a search query: its clauses, all of which must hold (Stripe's
// AND; the emulator knows no OR, negation or substring match).
type matcher []func(pi *intent) bool

func parseQuery(q string) (matcher, *answer) {
	unquote := strings.NewReplacer(`\'`, `'`, `\\`, `\`)
	var m matcher
	for _, clause := range strings.Split(strings.TrimSpace(q), " AND ") {
		c := searchClause.FindStringSubmatch(strings.TrimSpace(clause))
		if c == nil {
			a := invalid("", "query", "stripetest supports only search queries of clauses joined by AND, each metadata['key']:'value', status:'value', currency:'value', amount:N or created>N (>=, <, <=), not %q.", q)
			return nil, &a
		}
		key, field, op, text, number := unquote.Replace(c[1]), c[2], c[3], unquote.Replace(c[4]), c[5]
		n, _ := strconv.ParseInt(number, 10, 64)
		switch {
		case field == "" && op == ":" && number == "":
			m = append(m, func(pi *intent) bool { v, ok := pi.Metadata[key]; return ok && v == text })
		case (field == "status" || field == "currency") && op == ":" && number == "":
			m = append(m, func(pi *intent) bool {
				return map[string]string{"status": pi.Status, "currency": pi.Currency}[field] == text
			})
		case field == "amount" && op == ":" && number != "":
			m = append(m, func(pi *intent) bool { return pi.Amount == n })
		case field == "created" && op != ":" && number != "":
			m = append(m, func(pi *intent) bool {
				return map[string]bool{">": pi.Created > n, ">=": pi.Created >= n, "<": pi.Created < n, "<=": pi.Created <= n}[op]
			})
		default:
			a := invalid("", "query", "Invalid search clause %q in query %q.", clause, q)
			return nil, &a
		}
	}
	return m, nil
}

func (m matcher) match(pi *intent) bool {
	for _, f := range m {
		if !f(pi) {
			return false
		}
	}
	return true
}

// searchIntents answers a search, newest first, a page of limit at a time:
// next_page is the token of the following page (the emulator's is the
// offset), which the request sends back as page.
func (s *Server) searchIntents(form url.Values) answer {
	expand, limit, bad := pageParams(form)
	if bad != nil {
		return *bad
	}
	q := form.Get("query")
	if q == "" {
		return missing("query")
	}
	m, bad := parseQuery(q)
	if bad != nil {
		return *bad
	}
	offset := 0
	if page := form.Get("page"); page != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(page, "page_"))
		if err != nil || n < 0 || !strings.HasPrefix(page, "page_") {
			return invalid("", "page", "Invalid page token: %q.", page)
		}
		offset = n
	}
	var found []*intent
	for _, pi := range s.newest() {
		if m.match(pi) {
			found = append(found, pi)
		}
	}
	found = found[min(offset, len(found)):]
	a := listPage("search_result", "/v1/payment_intents/search", found, limit, expand)
	a["next_page"] = nil
	if len(found) > limit {
		a["next_page"] = "page_" + strconv.Itoa(offset+limit)
	}
	return jsonAnswer(http.StatusOK, a)
}
