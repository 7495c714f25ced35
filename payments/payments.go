// Package payments is the shop's seam to its payment provider: it charges an
// amount with a payment token and an idempotency key, refunds, and looks a
// charge up by its key.
//
// Two providers satisfy the small interfaces the rest of the shop declares
// where it uses them (checkout's Charger):
//   - [Stripe] charges through Stripe's API with stripe-go: a PaymentIntent
//     confirmed at once, with a Stripe test payment method (pm_card_visa, …)
//     or a ChatGPT shared payment token (spt_…).
//   - [Sandbox] is the offline provider for running without a Stripe key: it
//     answers as Stripe does for its test payment methods and keeps its
//     charges in the database, so that it survives restarts and is shared by
//     replicas. Its results are marked Simulated.
//
// Both charge at most once per idempotency key: the same key with the same
// request answers the first result again; the same key with a different
// request is refused with [ErrKeyReused]. An error wrapping
// [ErrUnknownOutcome] means the charge may or may not have happened: keep
// the attempt open and ask again later with the same key and request.
//
// Errors a buyer or the model may see are *shop.Error values with the
// contract's JSONPath ($.payment_data.token, $.amount); any other error is
// for the logs. No error or log line carries the secret key.
package payments

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"shop"
)

// Mode is test or live.
type Mode string

// The modes a provider runs in.
const (
	ModeTest Mode = "test"
	ModeLive Mode = "live"
)

// Request is one charge.
type Request struct {
	// Amount is in the currency's minor units, more than 0.
	Amount int64
	// Currency is the lower-case ISO 4217 code.
	Currency string
	// Token is a Stripe payment method (pm_card_visa, …) or a shared
	// payment token (spt_…).
	Token string
	// IdempotencyKey is the same for every try of one attempt (at most 255
	// characters).
	IdempotencyKey string
	// Description is shown in Stripe's dashboard.
	Description string
	// Customer, when set, is the customer whose saved card Token is
	// (SavedCard.Customer): the charge is made off-session, the buyer not
	// at hand to authenticate it.
	Customer string
	// Metadata is kept with the charge (session id, attempt id). Stripe
	// also receives the idempotency key as metadata "idempotency_key", by
	// which [Stripe.Lookup] finds the charge.
	Metadata map[string]string
}

// Status is the known outcome of a charge.
type Status string

// Outcomes of a charge.
const (
	// Succeeded: the money was taken.
	Succeeded Status = "succeeded"
	// Declined: the card or token was refused; nothing was taken, and the
	// buyer may pay with another card.
	Declined Status = "declined"
	// RequiresAction: the buyer's bank wants the buyer to confirm the
	// payment (3D Secure); nothing was taken.
	RequiresAction Status = "requires_action"
)

// Result is the provider's answer to a charge whose outcome is known.
type Result struct {
	Status Status
	// Reference is the PaymentIntent id, pi_… (pi_sandbox_… from the
	// sandbox). A decline may have one too.
	Reference string
	// DeclineCode says why a charge was declined or needs action:
	// card_declined, insufficient_funds, authentication_required, …
	DeclineCode string
	// Message is written for the buyer: "Your card was declined."
	Message string
	// Simulated is true when the sandbox answered: no money moved.
	Simulated bool
	// CardBrand is the card's brand as Stripe names it, in lower case
	// (visa, mastercard, amex, …), and CardLast4 the last four digits of
	// its number: what staff need to find a payment the buyer asks about.
	// Both are empty when the provider did not say (a shared payment
	// token the sandbox charged, a card error without a payment method).
	CardBrand string
	CardLast4 string
	// Amount and Currency are what the charge was made for, and Refunded
	// how much of it was refunded, where the provider said (a charge's or
	// a lookup's answer; 0 and "" when not known).
	Amount   int64
	Currency string
	Refunded int64
	// Metadata is what the charge keeps (checkout_session_id,
	// idempotency_key, …; see [ChargedBy]), where the provider said.
	Metadata map[string]string
}

// ChargedBy is the metadata key and value every charge made by Charge
// carries (with checkout_session_id and idempotency_key): the marks by which
// Payments finds the shop's own charges among an account's payments,
// leaving out hosted pages' payments and other software's.
const (
	ChargedBy     = "charged_by"
	ChargedByShop = "shop"
)

// maxPayments bounds how many payments one call of Payments returns (a
// Stripe search page holds at most 100).
const maxPayments = 10000

// ErrUnknownOutcome wraps every error after which the charge may or may not
// have happened (network failures, 5xx, 409 idempotency_key_in_use after
// waiting): the caller keeps the attempt open and asks again later with the
// same key and request.
var ErrUnknownOutcome = errors.New("payment outcome unknown")

// ErrKeyReused wraps the error for an idempotency key sent again with a
// different request (Stripe's idempotency_error). Nothing was charged for
// the second request; the key still belongs to the first, whose charge
// (Lookup finds it) may be one the caller has lost its record of: the
// outcome of the caller's payment is unknown until it looks.
var ErrKeyReused = errors.New("idempotency key reused with a different request")

// RefundRequest is one refund of a charge.
type RefundRequest struct {
	// Reference is the charge's Result.Reference.
	Reference string
	// Amount is in minor units, more than 0 and at most what is left to
	// refund of the charge.
	Amount int64
	// IdempotencyKey is the same for every try of one refund.
	IdempotencyKey string
	// Reason is Stripe's (duplicate, fraudulent, requested_by_customer) or
	// free text, which Stripe receives as requested_by_customer with the
	// text in metadata "reason".
	Reason string
}

// Refund is the provider's answer to a refund.
type Refund struct {
	// Reference is the refund's id, re_…
	Reference string
	Amount    int64
	// Status is Stripe's refund status: succeeded, pending, requires_action,
	// failed or canceled.
	Status    string
	Simulated bool
}

// Event is a Stripe webhook event about a PaymentIntent.
type Event struct {
	ID   string
	Type string
	// PaymentIntent is the id of the PaymentIntent the event is about; it
	// is empty for events about anything else, which callers may ignore.
	PaymentIntent string
	// Status is the outcome the event reports, or "" when it reports none
	// (payment_intent.created, payment_intent.processing, …).
	Status Status
	// Metadata is the PaymentIntent's metadata (checkout_session_id, …).
	Metadata map[string]string
	Created  time.Time
	// HostedCheckout is the id of the Checkout Session (cs_…) a checkout.session.* event is about.
	HostedCheckout string
	// ClientReference is that Checkout Session's client_reference_id.
	ClientReference string
}

// Token kinds.
const (
	kindMethod = "payment_method"
	kindSPT    = "shared_payment_token"
)

// tokenKind says how a token is sent to Stripe, or returns the error a
// buyer or model sees for a token no provider accepts.
func tokenKind(token string) (string, error) {
	switch {
	case strings.HasPrefix(token, "pm_") && len(token) > len("pm_"):
		return kindMethod, nil
	case strings.HasPrefix(token, "spt_") && len(token) > len("spt_"):
		return kindSPT, nil
	}
	return "", shop.Errorf(shop.Invalid, "$.payment_data.token",
		"not a payment token this shop accepts: send the shared payment token (spt_…) the payment sheet returned, "+
			"or in test mode a Stripe test payment method such as pm_card_visa, pm_card_visa_chargeDeclined, "+
			"pm_card_chargeDeclinedInsufficientFunds or pm_card_authenticationRequired")
}

// check refuses a request the shop should never make: these are bugs of the
// caller, not the buyer's doing.
func (r *Request) check() error {
	if r.Amount <= 0 {
		return fmt.Errorf("payments: charge amount %d: must be more than 0", r.Amount)
	}
	if !isCurrency(r.Currency) {
		return fmt.Errorf("payments: charge currency %q: must be a lower-case ISO 4217 code", r.Currency)
	}
	if err := checkKey(r.IdempotencyKey); err != nil {
		return err
	}
	_, err := tokenKind(r.Token)
	return err
}

func (r *RefundRequest) check() error {
	if r.Amount <= 0 {
		return shop.Errorf(shop.Invalid, "$.amount", "a refund must be more than 0 (in minor units)")
	}
	if r.Reference == "" {
		return errors.New("payments: refund: no charge reference")
	}
	return checkKey(r.IdempotencyKey)
}

func checkKey(key string) error {
	if key == "" || len(key) > 255 || strings.TrimSpace(key) != key {
		return fmt.Errorf("payments: idempotency key %q: must be 1 to 255 characters without surrounding spaces", key)
	}
	return nil
}

func isCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for _, r := range c {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// buyerMessage is the text a buyer reads for a decline code; fallback (a
// card_error's message, which Stripe writes for buyers) serves for codes
// not listed here.
func buyerMessage(code, fallback string) string {
	switch code {
	case "insufficient_funds":
		return "Your card has insufficient funds."
	case "authentication_required":
		return "Your bank needs you to confirm this payment."
	case "expired_card":
		return "Your card has expired."
	case "incorrect_cvc", "invalid_cvc":
		return "Your card's security code is incorrect."
	case "processing_error":
		return "An error occurred while processing your card. Try again in a little bit."
	case "card_declined", "generic_decline", "do_not_honor", "":
		return "Your card was declined."
	}
	if fallback != "" {
		return fallback
	}
	return "Your card was declined."
}

// requestHash identifies a request's substance, to tell a replay from a
// different request sent with the same key.
func requestHash(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:])
}
