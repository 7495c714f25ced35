package orders

import "shop/contract"

// The value types an order shares with the session it completed and with
// the shop's clients are declared once, in package contract; these aliases
// let orders name them as its own.
type (
	Buyer             = contract.Buyer
	Address           = contract.Address
	Item              = contract.Item
	LineItem          = contract.LineItem
	FulfillmentOption = contract.FulfillmentOption
	TotalType         = contract.TotalType
	Total             = contract.Total
	Link              = contract.Link
	Payment           = contract.Payment
	Order             = contract.Order
	Receipt           = contract.Receipt
)

// The totals of a session, in the order they are listed.
const (
	TotalItemsBase     = contract.TotalItemsBase
	TotalItemsDiscount = contract.TotalItemsDiscount
	TotalSubtotal      = contract.TotalSubtotal
	TotalDiscount      = contract.TotalDiscount
	TotalFulfillment   = contract.TotalFulfillment
	TotalTax           = contract.TotalTax
	TotalTotal         = contract.TotalTotal
)
