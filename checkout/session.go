package checkout

import "shop/contract"

// Status is where a checkout session stands (docs/buying.md).
type Status = contract.SessionStatus

// The statuses of a session. not_ready_for_payment ⇄ ready_for_payment →
// in_progress → completed; canceled and expired end it.
const (
	NotReady   = contract.SessionNotReady
	Ready      = contract.SessionReady
	InProgress = contract.SessionInProgress
	Completed  = contract.SessionCompleted
	Canceled   = contract.SessionCanceled
	Expired    = contract.SessionExpired
)

// The shapes a session shows (docs/buying.md) are declared once, in package
// contract, which the shop's clients decode its answers into; these aliases
// let checkout name them as its own.
type (
	Session         = contract.Session
	PaymentProvider = contract.PaymentProvider
	PaymentMethod   = contract.PaymentMethod
	// ManagedPaymentMethod is a saved card a session offers.
	ManagedPaymentMethod = contract.ManagedPaymentMethod
	PaymentMode          = contract.PaymentMode
	PaymentLink          = contract.PaymentLink
	MessageType          = contract.MessageType
	Message              = contract.Message
	Buyer                = contract.Buyer
	Address              = contract.Address
	Item                 = contract.Item
	LineItem             = contract.LineItem
	FulfillmentOption    = contract.FulfillmentOption
	TotalType            = contract.TotalType
	Total                = contract.Total
	Link                 = contract.Link
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

// Message types and payment modes.
const (
	MessageError = contract.MessageError
	MessageInfo  = contract.MessageInfo
	PaymentTest  = contract.PaymentTest
	PaymentLive  = contract.PaymentLive
)
