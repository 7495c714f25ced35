package checkout

import (
	"fmt"
	"strconv"

	"shop"
)

// The keys of the messages a session carries and of the refusals a checkout
// widget meets: each names one situation, which the widgets' and the
// pages' catalogs put in the buyer's language with the message's params
// (docs/messages.md lists them with their params).
const (
	KeyItemsMissing          = "items.missing"
	KeyAddressMissing        = "address.missing"
	KeyAddressCountryInvalid = "address.country.invalid"
	KeyAddressNotShipped     = "address.country.not_shipped"
	KeyAddressPostalInvalid  = "address.postal_code.invalid"
	KeyAddressStateInvalid   = "address.state.invalid"

	KeyOptionMissing  = "option.missing"
	KeyOptionUnknown  = "option.unknown"
	KeyOptionReplaced = "option.replaced"
	KeyOptionSelected = "option.selected"
	KeyFreeOver       = "shipping.free_over"

	KeyPromoApplied      = "promo.applied"
	KeyPromoPercentOff   = "promo.applied.percent_off"
	KeyPromoAmountOff    = "promo.applied.amount_off"
	KeyPromoAmountCapped = "promo.applied.amount_off_capped"
	KeyPromoFreeShipping = "promo.applied.free_shipping"
	KeyPromoNotStarted   = "promo.not_started"
	KeyPromoEnded        = "promo.ended"
	KeyPromoUsedUp       = "promo.used_up"
	KeyPromoMinSubtotal  = "promo.min_subtotal"
	KeyPromoUsedUpPaying = "promo.used_up_paying"
	KeyPromoUnknown      = "promo.unknown"
	KeyPromoMalformed    = "promo.malformed"
	KeyPromoRepeated     = "promo.repeated"
	KeyPromoCombination  = "promo.combination"

	KeyStockOut                = "stock.out"
	KeyStockShort              = "stock.short"
	KeyStockReleased           = "stock.released"
	KeyStockMoved              = "stock.moved"
	KeyStockMovedLimits        = "stock.moved.limits"
	KeyUnreservedAddress       = "stock.unreserved.address"
	KeyUnreservedUnverified    = "stock.unreserved.unverified"
	KeyLimitUnitsPerLine       = "limit.units_per_line"
	KeyLimitUnitsPerVariant    = "limit.units_per_variant"
	KeyLimitVariantPaying      = "limit.units_per_variant.paying"
	KeyLimitVariantOthers      = "limit.units_per_variant.others"
	KeyLimitUnitsPerBuyer      = "limit.units_per_buyer"
	KeyLimitOpenSessions       = "limit.open_sessions"
	KeyLimitOpenSessionsPaying = "limit.open_sessions.paying"

	KeyPriceChanged      = "price.changed"
	KeyTotalChanged      = "price.total_changed"
	KeyPaymentDeclined   = "payment.declined"
	KeyPayment3DS        = "payment.requires_3ds"
	KeyPayment3DSSaved   = "payment.requires_3ds.saved_card"
	KeyPaymentCanceled   = "payment.canceled"
	KeyPaymentProcessing = "payment.processing"
	KeySessionExpired    = "session.expired"
	KeySessionCanceled   = "session.canceled"
	KeyUnpriceable       = "session.unpriceable"
)

// requiredFields are the address fields whose absence has its own key,
// "address.<field>.missing", in the contract's order.
var requiredFields = []string{"name", "line_one", "city", "state", "country", "postal_code"}

// MessageKeys are every key a session's message or a checkout refusal may
// carry; the catalogs have an entry for each (TestMessageKeysInCatalogs).
var MessageKeys = func() []string {
	keys := []string{KeyItemsMissing, KeyAddressMissing}
	for _, f := range requiredFields {
		keys = append(keys, "address."+f+".missing")
	}
	return append(keys,
		KeyAddressCountryInvalid, KeyAddressNotShipped, KeyAddressPostalInvalid, KeyAddressStateInvalid,
		KeyOptionMissing, KeyOptionUnknown, KeyOptionReplaced, KeyOptionSelected, KeyFreeOver,
		KeyPromoApplied, KeyPromoPercentOff, KeyPromoAmountOff, KeyPromoAmountCapped, KeyPromoFreeShipping,
		KeyPromoNotStarted, KeyPromoEnded, KeyPromoUsedUp, KeyPromoMinSubtotal, KeyPromoUsedUpPaying,
		KeyPromoUnknown, KeyPromoMalformed, KeyPromoRepeated, KeyPromoCombination,
		KeyStockOut, KeyStockShort, KeyStockReleased, KeyStockMoved, KeyStockMovedLimits,
		KeyUnreservedAddress, KeyUnreservedUnverified,
		KeyLimitUnitsPerLine, KeyLimitUnitsPerVariant, KeyLimitVariantPaying, KeyLimitVariantOthers,
		KeyLimitUnitsPerBuyer, KeyLimitOpenSessions, KeyLimitOpenSessionsPaying,
		KeyPriceChanged, KeyTotalChanged, KeyPaymentDeclined, KeyPayment3DS, KeyPayment3DSSaved,
		KeyPaymentCanceled, KeyPaymentProcessing, KeySessionExpired, KeySessionCanceled, KeyUnpriceable,
	)
}()

// keyed returns m with its catalog key and params, pairs of a name and a
// value ("name", "Mug").
func keyed(m Message, key string, params ...string) Message {
	m.Key, m.Params = key, shop.Params(params...)
	return m
}

// itoa writes n in decimal, as params carry numbers.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// outOfStock is the error of a line whose stock does not cover it: none
// left, or fewer than asked.
func outOfStock(line int, name string, available int64) Message {
	param := fmt.Sprintf("$.line_items[%d].item.quantity", line)
	if available == 0 {
		return keyed(errorMessage(string(shop.OutOfStock), param, fmt.Sprintf("%s is out of stock; remove it or choose another variant.", name)),
			KeyStockOut, "name", name)
	}
	return keyed(errorMessage(string(shop.OutOfStock), param, fmt.Sprintf("Only %d of %s can be bought now; lower the quantity to %d or less.", available, name, available)),
		KeyStockShort, "name", name, "available", itoa(available))
}
