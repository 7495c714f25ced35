package stripetest

import (
	"net/http"
	"net/url"
)

type refund struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Amount             int64             `json:"amount"`
	BalanceTransaction string            `json:"balance_transaction"`
	Charge             string            `json:"charge"`
	Created            int64             `json:"created"`
	Currency           string            `json:"currency"`
	Metadata           map[string]string `json:"metadata"`
	PaymentIntent      string            `json:"payment_intent"`
	Reason             *string           `json:"reason"`
	ReceiptNumber      *string           `json:"receipt_number"`
	Status             string            `json:"status"`
}

func (s *Server) createRefund(form url.Values) answer {
	var pi *intent
	switch id, charge := form.Get("payment_intent"), form.Get("charge"); {
	case id != "":
		if pi = s.intents[id]; pi == nil {
			return noSuch(http.StatusBadRequest, "payment_intent", id, "payment_intent")
		}
	case charge != "":
		for _, p := range s.intents {
			if p.LatestCharge != nil && *p.LatestCharge == charge {
				pi = p
			}
		}
		if pi == nil {
			return noSuch(http.StatusBadRequest, "charge", charge, "charge")
		}
	default:
		return invalid("parameter_missing", "", "One of the following params should be provided for this request: payment_intent or charge.")
	}
	if pi.Status != "succeeded" {
		return invalid("", "payment_intent", "This PaymentIntent (%s) does not have a successful charge to refund.", pi.ID)
	}
	left := pi.Amount - pi.refunded
	if left == 0 {
		return invalid("charge_already_refunded", "", "Charge %s has already been refunded.", *pi.LatestCharge)
	}
	amount := left
	if form.Has("amount") {
		n, bad := positive(form, "amount")
		if bad != nil {
			return *bad
		}
		if n > left {
			return invalid("amount_too_large", "amount", "Refund amount (%s) is greater than unrefunded amount on charge (%s)",
				money(n, pi.Currency), money(left, pi.Currency))
		}
		amount = n
	}
	re := &refund{
		ID: s.randID("re_3", 24), Object: "refund", Amount: amount,
		BalanceTransaction: s.randID("txn_3", 24), Charge: *pi.LatestCharge, Created: s.now().Unix(),
		Currency: pi.Currency, Metadata: params(form, "metadata"), PaymentIntent: pi.ID, Status: "succeeded",
	}
	if reason := form.Get("reason"); reason != "" {
		switch reason {
		case "duplicate", "fraudulent", "requested_by_customer":
			re.Reason = &reason
		default:
			return invalid("", "reason", "Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer")
		}
	}
	pi.refunded += amount
	s.refunds = append(s.refunds, re)
	return jsonAnswer(http.StatusOK, re)
}
