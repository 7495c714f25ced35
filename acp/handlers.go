package acp

import (
	"shop/checkout"
)

// handler is a payment handler the shop offers: the ACP declaration and
// the credential type it takes ("" for any).
type handler struct {
	id, credential string
	testOnly       bool
}

// The shop's payment handlers. Both charge through checkout's Complete,
// with the credential's token, as complete_checkout does.
var handlers = []handler{
	// Stripe shared payment tokens (spt_…), which an agent gets from
	// delegate_payment.
	{id: "card_spt", credential: "spt"},
	// In test mode (the sandbox, or a Stripe test key): Stripe's test
	// payment methods (pm_card_visa, pm_card_visa_chargeDeclined, …) or
	// shared payment tokens, as credentials of any type.
	{id: "card_test", testOnly: true},
}

// testTokens are the Stripe test payment methods the test handler names
// (docs/payments.md); the sandbox and Stripe's test mode take the others of
// Stripe's list too.
var testTokens = []string{"pm_card_visa", "pm_card_visa_chargeDeclined", "pm_card_chargeDeclinedInsufficientFunds", "pm_card_authenticationRequired"}

func (a *ACP) offered(mode checkout.PaymentMode) []handler {
	var out []handler
	for _, h := range handlers {
		if !h.testOnly || mode != checkout.PaymentLive {
			out = append(out, h)
		}
	}
	return out
}

func (a *ACP) handler(id string, mode checkout.PaymentMode) (handler, bool) {
	for _, h := range a.offered(mode) {
		if h.id == id {
			return h, true
		}
	}
	return handler{}, false
}

func (a *ACP) handlerIDs(mode checkout.PaymentMode) []string {
	var ids []string
	for _, h := range a.offered(mode) {
		ids = append(ids, h.id)
	}
	return ids
}

// declare is h's PaymentHandler (dev.acp.tokenized.card, PSP Stripe).
func declare(h handler, s *checkout.Session) Handler {
	env := "production"
	if s.PaymentMode != checkout.PaymentLive {
		env = "test"
	}
	brands := []string{}
	for _, m := range s.PaymentProvider.SupportedPaymentMethods {
		if m.Type == "card" {
			brands = append(brands, m.AllowedCardBrands...)
		}
	}
	cfg := map[string]any{
		"merchant_id": s.PaymentProvider.MerchantID, "psp": "stripe",
		"accepted_brands": brands, "accepted_funding_types": []string{"credit", "debit"},
		"supports_3ds": false, "environment": env,
	}
	out := Handler{
		ID: h.id, Name: "dev.acp.tokenized.card", Version: "2026-01-22",
		Spec: "https://acp.dev/handlers/tokenized.card", PSP: "stripe",
		ConfigSchema:      "https://acp.dev/schemas/handlers/tokenized.card/config.json",
		InstrumentSchemas: []string{"https://acp.dev/schemas/handlers/tokenized.card/instrument.json"},
		Config:            cfg,
	}
	if h.testOnly {
		out.DisplayName = "Test card (Stripe test payment methods; test mode only)"
		cfg["test_tokens"] = testTokens
	} else {
		out.DisplayName = "Card (Stripe shared payment token)"
		out.RequiresDelegatePayment = true
		cfg["credential_types"] = []string{h.credential}
	}
	return out
}

// capabilities are the seller's side of a session's negotiation: the
// handlers it offers and, when the agent offered interventions, the ones
// both support (none: the shop runs no 3D Secure or address verification
// over ACP, so a card that needs it is refused).
func (a *ACP) capabilities(s *checkout.Session, offered *Interventions) Capabilities {
	var hs []Handler
	for _, h := range a.offered(s.PaymentMode) {
		hs = append(hs, declare(h, s))
	}
	return Capabilities{Payment: &Payment{Handlers: hs}, Interventions: offered}
}
