package stripetest

import (
	"net/http"
	"net/url"
	"strings"

	"shop/payments"
)

// card is a PaymentMethod's card and a charge's payment_method_details.card,
// with the fields of Stripe's shape the shop may read.
type card struct {
	Brand    string `json:"brand"`
	Country  string `json:"country"`
	ExpMonth int64  `json:"exp_month"`
	ExpYear  int64  `json:"exp_year"`
	Funding  string `json:"funding"`
	Last4    string `json:"last4"`
}

// testCard is the test card behind a Stripe test payment method
// ([payments.TestCards]). A pm_card_… name the table does not hold, and a
// shared payment token, pay with pm_card_visa's card.
func testCard(method string) payments.TestCard {
	c, ok := payments.FindTestCard(method)
	if !ok {
		c, _ = payments.FindTestCard("pm_card_visa")
	}
	return c
}

// cardOf is a test card as a PaymentMethod or charge shows it.
func cardOf(c payments.TestCard) *card {
	return &card{Brand: c.Brand, Country: "US", ExpMonth: 12, ExpYear: 2034, Funding: c.Funding, Last4: c.Last4}
}

// paymentMethod is a card PaymentMethod as Stripe answers it.
type paymentMethod struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	// AllowRedisplay is "always" for a card saved with the buyer's
	// consent on a Checkout page, "unspecified" otherwise.
	AllowRedisplay string            `json:"allow_redisplay"`
	BillingDetails billingDetails    `json:"billing_details"`
	Card           *card             `json:"card"`
	Created        int64             `json:"created"`
	Customer       *string           `json:"customer"`
	Livemode       bool              `json:"livemode"`
	Metadata       map[string]string `json:"metadata"`
	Type           string            `json:"type"`
}

type billingDetails struct {
	Email *string `json:"email"`
	Name  *string `json:"name"`
	Phone *string `json:"phone"`
}

// charge is a PaymentIntent's charge as Stripe answers it, expanded.
type charge struct {
	ID                   string            `json:"id"`
	Object               string            `json:"object"`
	Amount               int64             `json:"amount"`
	AmountCaptured       int64             `json:"amount_captured"`
	AmountRefunded       int64             `json:"amount_refunded"`
	Captured             bool              `json:"captured"`
	Created              int64             `json:"created"`
	Currency             string            `json:"currency"`
	FailureCode          *string           `json:"failure_code"`
	FailureMessage       *string           `json:"failure_message"`
	Livemode             bool              `json:"livemode"`
	Metadata             map[string]string `json:"metadata"`
	Paid                 bool              `json:"paid"`
	PaymentIntent        string            `json:"payment_intent"`
	PaymentMethod        string            `json:"payment_method"`
	PaymentMethodDetails methodDetails     `json:"payment_method_details"`
	Refunded             bool              `json:"refunded"`
	Status               string            `json:"status"`
}

type methodDetails struct {
	Card *card  `json:"card"`
	Type string `json:"type"`
}

// newMethod is the PaymentMethod Stripe makes of a test payment method or
// shared payment token when a PaymentIntent is confirmed with it.
func (s *Server) newMethod(token string) *paymentMethod {
	return &paymentMethod{
		ID: s.randID("pm_1", 24), Object: "payment_method", AllowRedisplay: "unspecified", Card: cardOf(testCard(token)), Created: s.now().Unix(),
		Metadata: map[string]string{}, Type: "card",
	}
}

// charge makes pi's latest charge with its payment method: succeeded, or
// failed with the decline's code and message.
func (s *Server) charge(pi *intent, failureCode, failureMessage string) {
	pm := pi.method
	ch := &charge{
		ID: s.randID("ch_3", 24), Object: "charge", Amount: pi.Amount, Created: s.now().Unix(), Currency: pi.Currency,
		Metadata: cloneMap(pi.Metadata), PaymentIntent: pi.ID, PaymentMethod: pm.ID,
		PaymentMethodDetails: methodDetails{Card: pm.Card, Type: "card"}, Status: "succeeded",
	}
	if failureCode != "" {
		ch.Status, ch.FailureCode, ch.FailureMessage = "failed", &failureCode, &failureMessage
	} else {
		ch.AmountCaptured, ch.Captured, ch.Paid = pi.Amount, true, true
	}
	pi.charge, pi.LatestCharge = ch, &ch.ID
}

// expansions are the fields a request asks to expand (expand[]=… or
// expand[0]=…), or a 400 answer naming one that the emulator cannot expand
// where it is asked (allowed lists those it can), as Stripe refuses them.
func expansions(form url.Values, allowed ...string) (map[string]bool, *answer) {
	out := map[string]bool{}
	for k, vs := range form {
		if k != "expand" && !strings.HasPrefix(k, "expand[") {
			continue
		}
		for _, v := range vs {
			ok := false
			for _, a := range allowed {
				ok = ok || v == a
			}
			if !ok {
				a := errAnswer(http.StatusBadRequest, apiError{Type: "invalid_request_error", Param: k,
					Message: "This property cannot be expanded (" + v + "). (stripetest expands only " + strings.Join(allowed, ", ") + " here.)"})
				return nil, &a
			}
			out[v] = true
		}
	}
	return out, nil
}

// intentView is a PaymentIntent as an answer shows it: with its latest
// charge and payment method as ids, or as objects where expanded under
// prefix ("" for the PaymentIntent itself, "data." in a list).
type intentView struct {
	*intent
	LatestCharge  any `json:"latest_charge"`
	PaymentMethod any `json:"payment_method"`
}

func (pi *intent) view(expand map[string]bool, prefix string) intentView {
	v := intentView{intent: pi}
	if pi.charge != nil {
		v.LatestCharge = pi.charge.ID
		if expand[prefix+"latest_charge"] {
			ch := *pi.charge
			ch.AmountRefunded, ch.Refunded = pi.refunded, pi.refunded > 0 && pi.refunded >= pi.Amount
			v.LatestCharge = &ch
		}
	}
	if pi.method != nil {
		v.PaymentMethod = pi.method.ID
		if expand[prefix+"payment_method"] {
			v.PaymentMethod = pi.method
		}
	}
	return v
}

// views are a page of PaymentIntents as a list or search answer shows them.
func views(page []*intent, expand map[string]bool) []intentView {
	out := make([]intentView, len(page))
	for i, pi := range page {
		out[i] = pi.view(expand, "data.")
	}
	return out
}

// sessionView is a Checkout Session as an answer shows it: its
// PaymentIntent as an id, or as an object where expanded (with that one's
// latest charge and payment method where expanded under payment_intent.).
type sessionView struct {
	*session
	PaymentIntent any `json:"payment_intent"`
}

func (s *Server) sessionView(cs *session, expand map[string]bool) sessionView {
	v := sessionView{session: cs}
	if cs.PaymentIntent != nil {
		v.PaymentIntent = *cs.PaymentIntent
		if pi := s.intents[*cs.PaymentIntent]; pi != nil && (expand["payment_intent"] || expand["payment_intent.latest_charge"] || expand["payment_intent.payment_method"]) {
			v.PaymentIntent = pi.view(expand, "payment_intent.")
		}
	}
	return v
}
