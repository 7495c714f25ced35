package ucp

import "strings"

// vocabulary rewrites what the shop's one checkout core says to buyers and
// models in /mcp's words (its tools and fields, docs/buying.md) into UCP's:
// its operations and fields. Every message and error this dialect answers
// passes through it, so no UCP agent is told to call a tool it does not
// have. strings.Replacer tries the old strings in the order given at each
// position, so a longer name comes before any name it starts with.
var vocabulary = strings.NewReplacer(
	"create_checkout_session", "create_checkout",
	"update_checkout_session", "update_checkout",
	"get_checkout_session", "get_checkout",
	"cancel_checkout_session", "cancel_checkout",
	"create_payment_link for this session", "the checkout's continue_url",
	"create_payment_link", "continue_url",
	"search_products", "search_catalog",
	`promo_code ""`, "discounts.codes []",
	"promo_code", "discounts.codes",
	"one of fulfillment_options", "one of fulfillment.methods[0].groups[0].options",
	"fulfillment_option_id", "fulfillment.methods[0].groups[0].selected_option_id",
	"fulfillment_address", "fulfillment.methods[0].destinations[0]",
)

// say is text of the shop's in UCP's words.
func say(text string) string { return vocabulary.Replace(text) }
