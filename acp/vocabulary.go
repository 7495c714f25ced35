package acp

import "strings"

// vocabulary rewrites what the shop's one checkout core says in /mcp's
// words (its tools and fields, docs/buying.md) into this binding's: its
// five tools and the payload's fields. Every message and error this dialect
// answers passes through it. strings.Replacer tries the old strings in the
// order given at each position, so a name comes before any name it starts
// with (complete_checkout_session stays as it is).
var vocabulary = strings.NewReplacer(
	"complete_checkout_session", "complete_checkout_session",
	"complete_checkout", "complete_checkout_session",
	`promo_code ""`, "discounts.codes []",
	"promo_code", "discounts.codes",
	"create_payment_link for this session", "the shop's payment page",
	"create_payment_link", "the shop's payment page",
	"fulfillment_option_id", "selected_fulfillment_options",
	"fulfillment_address", "fulfillment_details.address",
)

// say is text of the shop's in this binding's words.
func say(text string) string { return vocabulary.Replace(text) }
