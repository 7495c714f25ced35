package stripetest

import (
	"net/http"
	"net/url"
	"slices"

	"shop/payments"
)

// Customers and saved payment methods: POST /v1/customers, DELETE
// /v1/customers/{id} (detaching its payment methods; later requests naming
// it answer resource_missing, as Stripe's do), POST
// /v1/payment_methods/{id}/attach (a test payment method such as
// pm_card_visa attaches as a new pm_1…, as at Stripe), POST
// /v1/payment_methods/{id}/detach, GET /v1/payment_methods/{id}, GET
// /v1/customers/{id}/payment_methods (newest first). A PaymentIntent
// confirmed with an attached payment method must name its customer; with
// off_session=true a card that needs authentication
// (pm_card_authenticationRequired) is refused with Stripe's card error
// authentication_required and the PaymentIntent left
// requires_payment_method.

// customerObject is a Customer as Stripe answers it.
type customerObject struct {
	ID       string            `json:"id"`
	Object   string            `json:"object"`
	Created  int64             `json:"created"`
	Email    *string           `json:"email"`
	Livemode bool              `json:"livemode"`
	Metadata map[string]string `json:"metadata"`
}

// savedMethod is an attached payment method and the test card behind it.
type savedMethod struct {
	paymentMethod
	token string
	seq   int64
}

// SavedMethod is a payment method attached to a customer, as a test reads it.
type SavedMethod struct {
	ID, Customer, Brand, Last4 string
}

// SavedMethods are the payment methods ever attached, newest first;
// Customer is "" for a detached one.
func (s *Server) SavedMethods() []SavedMethod {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SavedMethod
	for _, m := range s.sortedMethods() {
		c := ""
		if m.Customer != nil {
			c = *m.Customer
		}
		out = append(out, SavedMethod{ID: m.ID, Customer: c, Brand: m.Card.Brand, Last4: m.Card.Last4})
	}
	return out
}

func (s *Server) sortedMethods() []*savedMethod {
	var all []*savedMethod
	for _, m := range s.methods {
		all = append(all, m)
	}
	slices.SortFunc(all, func(a, b *savedMethod) int { return int(b.seq - a.seq) })
	return all
}

// routeSaved answers the requests about customers and saved methods.
func (s *Server) routeSaved(method string, parts []string, form url.Values) (answer, bool) {
	if s.customers == nil {
		s.customers, s.methods = map[string]*customerObject{}, map[string]*savedMethod{}
	}
	switch {
	case method == http.MethodPost && len(parts) == 1 && parts[0] == "customers":
		c := &customerObject{ID: s.randID("cus_", 14), Object: "customer", Created: s.now().Unix(),
			Email: optional(form, "email"), Metadata: params(form, "metadata")}
		s.customers[c.ID] = c
		return jsonAnswer(http.StatusOK, c), true
	case method == http.MethodDelete && len(parts) == 2 && parts[0] == "customers":
		return s.deleteCustomer(parts[1]), true
	case method == http.MethodGet && len(parts) == 3 && parts[0] == "customers" && parts[2] == "payment_methods":
		if s.customers[parts[1]] == nil {
			return noSuch(http.StatusNotFound, "customer", parts[1], "customer"), true
		}
		limit, bad := pageLimit(form)
		if bad != nil {
			return *bad, true
		}
		var data []paymentMethod
		for _, m := range s.sortedMethods() {
			if m.Customer != nil && *m.Customer == parts[1] && len(data) < limit {
				data = append(data, m.paymentMethod)
			}
		}
		return jsonAnswer(http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": false,
			"url": "/v1/customers/" + parts[1] + "/payment_methods"}), true
	case len(parts) == 2 && parts[0] == "payment_methods" && method == http.MethodGet:
		m := s.methods[parts[1]]
		if m == nil {
			return noSuch(http.StatusNotFound, "PaymentMethod", parts[1], "payment_method"), true
		}
		return jsonAnswer(http.StatusOK, m.paymentMethod), true
	case len(parts) == 3 && parts[0] == "payment_methods" && parts[2] == "attach" && method == http.MethodPost:
		return s.attach(parts[1], form), true
	case len(parts) == 3 && parts[0] == "payment_methods" && parts[2] == "detach" && method == http.MethodPost:
		m := s.methods[parts[1]]
		if m == nil {
			return noSuch(http.StatusNotFound, "PaymentMethod", parts[1], "payment_method"), true
		}
		if m.Customer == nil {
			return invalid("payment_method_unexpected_state", "", "The payment method you provided is not attached to a customer so detachment is impossible."), true
		}
		m.Customer = nil
		return jsonAnswer(http.StatusOK, m.paymentMethod), true
	}
	return answer{}, false
}

// deleteCustomer deletes a customer and detaches its payment methods, and
// answers as Stripe does: the id, "deleted": true.
func (s *Server) deleteCustomer(id string) answer {
	if s.customers[id] == nil {
		return noSuch(http.StatusNotFound, "customer", id, "id")
	}
	delete(s.customers, id)
	for _, m := range s.methods {
		if m.Customer != nil && *m.Customer == id {
			m.Customer = nil
		}
	}
	return jsonAnswer(http.StatusOK, map[string]any{"id": id, "object": "customer", "deleted": true})
}

func (s *Server) attach(token string, form url.Values) answer {
	cust := form.Get("customer")
	if cust == "" {
		return missing("customer")
	}
	if s.customers[cust] == nil {
		return noSuch(http.StatusBadRequest, "customer", cust, "customer")
	}
	c, ok := payments.FindTestCard(token)
	if !ok {
		return noSuch(http.StatusNotFound, "PaymentMethod", token, "payment_method")
	}
	if c.Outcome == payments.Declined {
		// Stripe checks a card when it is attached.
		return errAnswer(http.StatusPaymentRequired, apiError{Type: "card_error", Code: c.ErrorCode, DeclineCode: c.DeclineCode, Message: c.Message})
	}
	return jsonAnswer(http.StatusOK, s.attachNew(token, cust).paymentMethod)
}

// attachNew is a new payment method of the test card token, attached to
// customer cust.
func (s *Server) attachNew(token, cust string) *savedMethod {
	if s.methods == nil {
		s.methods = map[string]*savedMethod{}
	}
	s.seq++
	m := &savedMethod{paymentMethod: *s.newMethod(token), token: token, seq: s.seq}
	m.Customer = &cust
	s.methods[m.ID] = m
	return m
}

// savedMethod is the attached payment method a PaymentIntent's
// payment_method names, nil when it names none; a 400 when its customer is
// not the PaymentIntent's, or the PaymentIntent's customer does not exist
// (resource_missing, as for a deleted one).
func (s *Server) savedMethod(form url.Values) (*savedMethod, *answer) {
	if cust := form.Get("customer"); cust != "" && s.customers[cust] == nil {
		a := noSuch(http.StatusBadRequest, "customer", cust, "customer")
		return nil, &a
	}
	if s.methods == nil {
		return nil, nil
	}
	m := s.methods[form.Get("payment_method")]
	if m == nil {
		return nil, nil
	}
	cust := form.Get("customer")
	if m.Customer == nil || *m.Customer != cust {
		a := invalid("", "payment_method", "The provided PaymentMethod was previously used with a PaymentIntent without Customer attachment, shared with a connected account without Customer attachment, or was detached from a Customer. It may not be used again. To use a PaymentMethod multiple times, you must attach it to a Customer first.")
		if m.Customer != nil {
			a = invalid("", "payment_method", "The provided PaymentMethod belongs to a different Customer than the one provided.")
		}
		return nil, &a
	}
	return m, nil
}

// offSession is the outcome of a saved card's charge: one that needs
// authentication is declined with authentication_required when the buyer is
// away (off_session=true), as Stripe does.
func offSession(form url.Values, c payments.TestCard) payments.TestCard {
	if form.Get("off_session") == "true" && c.Outcome == payments.RequiresAction {
		c.Outcome = payments.Declined
		c.ErrorCode, c.DeclineCode = "authentication_required", "authentication_required"
		c.Message = "Your card was declined. This transaction requires authentication."
	}
	return c
}
