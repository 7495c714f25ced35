package payments

// TestCard is one of Stripe's test payment methods (pm_card_…), the test
// card behind it and what Stripe answers a payment made with it, as
// Stripe's testing docs list them. The sandbox, the sandbox's payment page
// and the Stripe emulator (payments/stripetest) all read [TestCards].
type TestCard struct {
	// Method is the test payment method's id, such as "pm_card_visa".
	Method string
	// Brand, Last4 and Funding are the card's: "visa", "4242", "credit".
	Brand, Last4, Funding string
	// Outcome is Succeeded, Declined or RequiresAction (the card needs
	// the buyer's authentication, 3D Secure).
	Outcome Status
	// ErrorCode, DeclineCode, Param and Message are the card error Stripe
	// answers for a Declined card: its code ("card_declined",
	// "expired_card", …), its decline_code for a card_declined
	// ("generic_decline", "insufficient_funds", …), the parameter it
	// names ("exp_month", "cvc") and its message.
	ErrorCode, DeclineCode, Param, Message string
}

// Code is the decline code a Result carries for a payment with c: the
// decline_code of a card_declined, or its error code where that says more
// ("card_declined" for a generic decline, "expired_card", …);
// "authentication_required" when the card needs 3D Secure; "" when the
// payment succeeds.
func (c TestCard) Code() string {
	switch {
	case c.Outcome == RequiresAction:
		return "authentication_required"
	case c.DeclineCode != "" && c.DeclineCode != "generic_decline":
		return c.DeclineCode
	}
	return c.ErrorCode
}

// declinedMsg is the message of most of Stripe's card errors.
const declinedMsg = "Your card was declined."

// TestCards are Stripe's test payment methods, paying cards first.
var TestCards = []TestCard{
	{Method: "pm_card_visa", Brand: "visa", Last4: "4242", Funding: "credit", Outcome: Succeeded},
	{Method: "pm_card_visa_debit", Brand: "visa", Last4: "5556", Funding: "debit", Outcome: Succeeded},
	{Method: "pm_card_mastercard", Brand: "mastercard", Last4: "4444", Funding: "credit", Outcome: Succeeded},
	{Method: "pm_card_mastercard_debit", Brand: "mastercard", Last4: "8210", Funding: "debit", Outcome: Succeeded},
	{Method: "pm_card_amex", Brand: "amex", Last4: "8431", Funding: "credit", Outcome: Succeeded},
	{Method: "pm_card_discover", Brand: "discover", Last4: "1117", Funding: "credit", Outcome: Succeeded},
	declined("pm_card_visa_chargeDeclined", "0002", "card_declined", "generic_decline", "", declinedMsg),
	declined("pm_card_chargeDeclined", "0002", "card_declined", "generic_decline", "", declinedMsg),
	declined("pm_card_visa_chargeDeclinedInsufficientFunds", "9995", "card_declined", "insufficient_funds", "", "Your card has insufficient funds."),
	declined("pm_card_chargeDeclinedInsufficientFunds", "9995", "card_declined", "insufficient_funds", "", "Your card has insufficient funds."),
	declined("pm_card_visa_chargeDeclinedLostCard", "9987", "card_declined", "lost_card", "", declinedMsg),
	declined("pm_card_chargeDeclinedLostCard", "9987", "card_declined", "lost_card", "", declinedMsg),
	declined("pm_card_visa_chargeDeclinedStolenCard", "9979", "card_declined", "stolen_card", "", declinedMsg),
	declined("pm_card_chargeDeclinedStolenCard", "9979", "card_declined", "stolen_card", "", declinedMsg),
	declined("pm_card_chargeDeclinedFraudulent", "0019", "card_declined", "fraudulent", "", declinedMsg),
	declined("pm_card_chargeDeclinedExpiredCard", "0069", "expired_card", "", "exp_month", "Your card has expired."),
	declined("pm_card_chargeDeclinedIncorrectCvc", "0127", "incorrect_cvc", "", "cvc", "Your card's security code is incorrect."),
	declined("pm_card_chargeDeclinedProcessingError", "0119", "processing_error", "", "", "An error occurred while processing your card. Try again in a little bit."),
	{Method: "pm_card_authenticationRequired", Brand: "visa", Last4: "3184", Funding: "credit", Outcome: RequiresAction},
	{Method: "pm_card_threeDSecure2Required", Brand: "visa", Last4: "3220", Funding: "credit", Outcome: RequiresAction},
}

// declined is a Visa credit test card that Stripe declines with a card
// error.
func declined(method, last4, code, decline, param, message string) TestCard {
	return TestCard{Method: method, Brand: "visa", Last4: last4, Funding: "credit", Outcome: Declined,
		ErrorCode: code, DeclineCode: decline, Param: param, Message: message}
}

// FindTestCard returns the test card of a Stripe test payment method;
// false for a method [TestCards] does not hold.
func FindTestCard(method string) (TestCard, bool) {
	for _, c := range TestCards {
		if c.Method == method {
			return c, true
		}
	}
	return TestCard{}, false
}

// TestMethods are the Method and the Brand of each of TestCards, in its
// order (a brand once per card that has it).
func TestMethods() (methods, brands []string) {
	for _, c := range TestCards {
		methods = append(methods, c.Method)
		brands = append(brands, c.Brand)
	}
	return methods, brands
}
