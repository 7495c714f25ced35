package payments

import (
	"fmt"

	"github.com/stripe/stripe-go/v82"
)

// intentResult maps a PaymentIntent to a Result, or to ErrUnknownOutcome
// while it is still processing.
func intentResult(pi *stripe.PaymentIntent) (*Result, error) {
	res, err := intentOutcome(pi)
	if res != nil {
		res.CardBrand, res.CardLast4 = intentCard(pi)
		res.Amount, res.Currency, res.Metadata = pi.Amount, string(pi.Currency), pi.Metadata
		if ch := pi.LatestCharge; ch != nil {
			res.Refunded = ch.AmountRefunded
		}
	}
	return res, err
}

// intentCard is the brand and last four digits of the card a PaymentIntent
// was last paid with: from its latest charge when that came expanded, else
// from its payment method when expanded, else from its last payment error's
// payment method; empty when none says.
func intentCard(pi *stripe.PaymentIntent) (brand, last4 string) {
	if ch := pi.LatestCharge; ch != nil && ch.PaymentMethodDetails != nil && ch.PaymentMethodDetails.Card != nil {
		if c := ch.PaymentMethodDetails.Card; c.Last4 != "" {
			return string(c.Brand), c.Last4
		}
	}
	if brand, last4 = methodCard(pi.PaymentMethod); last4 != "" {
		return brand, last4
	}
	if e := pi.LastPaymentError; e != nil {
		return methodCard(e.PaymentMethod)
	}
	return "", ""
}

// methodCard is the brand and last four digits of a card payment method.
func methodCard(pm *stripe.PaymentMethod) (brand, last4 string) {
	if pm == nil || pm.Card == nil || pm.Card.Last4 == "" {
		return "", ""
	}
	return string(pm.Card.Brand), pm.Card.Last4
}

func intentOutcome(pi *stripe.PaymentIntent) (*Result, error) {
	switch pi.Status {
	case stripe.PaymentIntentStatusSucceeded:
		return &Result{Status: Succeeded, Reference: pi.ID}, nil
	case stripe.PaymentIntentStatusRequiresAction:
		return &Result{Status: RequiresAction, Reference: pi.ID, DeclineCode: "authentication_required",
			Message: buyerMessage("authentication_required", "")}, nil
	case stripe.PaymentIntentStatusRequiresPaymentMethod, stripe.PaymentIntentStatusCanceled:
		code, msg := "card_declined", ""
		if e := pi.LastPaymentError; e != nil {
			switch {
			case e.DeclineCode != "":
				code = string(e.DeclineCode)
			case e.Code != "":
				code = string(e.Code)
			}
			if e.Type == stripe.ErrorTypeCard {
				msg = e.Msg
			}
		}
		return &Result{Status: declinedStatus(code), Reference: pi.ID, DeclineCode: code, Message: buyerMessage(code, msg)}, nil
	}
	return nil, fmt.Errorf("%w: payment intent %s is %s", ErrUnknownOutcome, pi.ID, pi.Status)
}

// declinedStatus is the status of a payment Stripe refused with code:
// RequiresAction when the card needs the buyer's authentication (3DS), which
// Stripe reports as a card error or a last payment error with the code
// authentication_required when it cannot ask for it itself; Declined
// otherwise.
func declinedStatus(code string) Status {
	if code == "authentication_required" {
		return RequiresAction
	}
	return Declined
}
