package acp

import (
	"fmt"
	"strings"
	"time"

	"shop"
	"shop/checkout"
	"shop/contract"
	"shop/money"
)

// session translates checkout's session into the ACP CheckoutSession
// (with its order when it has one).
func (a *ACP) session(s *checkout.Session, offered *Interventions) *Session {
	out := &Session{
		ID: s.ID, Protocol: Protocol{Version: Version}, Capabilities: a.capabilities(s, offered),
		Status: string(s.Status), Currency: s.Currency,
		LineItems: make([]LineItem, 0, len(s.LineItems)), FulfillmentOptions: make([]FulfillmentOption, 0, len(s.FulfillmentOptions)),
		Totals: totals(s.Totals), Messages: make([]Message, 0, len(s.Messages)), Links: links(s.Links),
		Metadata: s.Metadata,
	}
	if !s.ExpiresAt.IsZero() {
		at := s.ExpiresAt.UTC()
		out.ExpiresAt = &at
	}
	if b := s.Buyer; b != nil && b.Email != "" {
		out.Buyer = &Buyer{FirstName: b.FirstName, LastName: b.LastName, FullName: b.Name, Email: b.Email, PhoneNumber: b.PhoneNumber}
	}
	out.FulfillmentDetails = details(s.Buyer, s.FulfillmentAddress)
	itemIDs := make([]string, 0, len(s.LineItems))
	for _, l := range s.LineItems {
		out.LineItems = append(out.LineItems, lineItem(l))
		itemIDs = append(itemIDs, l.Item.ID)
	}
	for _, o := range s.FulfillmentOptions {
		out.FulfillmentOptions = append(out.FulfillmentOptions, option(o))
	}
	if s.FulfillmentOptionID != "" {
		out.SelectedFulfillmentOptions = []SelectedOption{{Type: "shipping", OptionID: s.FulfillmentOptionID, ItemIDs: itemIDs}}
	}
	for _, m := range s.Messages {
		out.Messages = append(out.Messages, sessionMessage(m))
	}
	if s.Order != nil {
		out.Order = order(s.Order)
	}
	out.Discounts = discounts(s.Discounts)
	return out
}

// discounts are the discount extension's answer of a session with codes.
func discounts(d *checkout.Discounts) *Discounts {
	if d == nil || len(d.Codes) == 0 {
		return nil
	}
	out := &Discounts{Codes: d.Codes, Applied: []AppliedDiscount{}, Rejected: []RejectedDiscount{}}
	for _, a := range d.Applied {
		ad := AppliedDiscount{ID: "disc_" + strings.ToLower(a.Code), Code: a.Code, Coupon: Coupon{ID: a.Code, Name: a.Title},
			Amount: a.Amount, Method: "across"}
		if a.Kind == string(checkout.PercentOff) {
			ad.Method = "each"
		}
		for _, al := range a.Allocations {
			ad.Allocations = append(ad.Allocations, DiscountAllocation{Path: al.Path, Amount: al.Amount})
		}
		out.Applied = append(out.Applied, ad)
	}
	for _, r := range d.Rejected {
		out.Rejected = append(out.Rejected, RejectedDiscount{Code: r.Code, Reason: string(r.Reason), Message: r.Content})
	}
	return out
}

func details(b *checkout.Buyer, addr *checkout.Address) *FulfillmentDetails {
	if addr == nil {
		return nil
	}
	d := &FulfillmentDetails{Name: addr.Name, PhoneNumber: addr.PhoneNumber, Address: &Address{
		Name: addr.Name, LineOne: addr.LineOne, LineTwo: addr.LineTwo, City: addr.City, State: addr.State,
		Country: addr.Country, PostalCode: addr.PostalCode,
	}}
	if b != nil {
		d.Email = b.Email
		if d.PhoneNumber == "" {
			d.PhoneNumber = b.PhoneNumber
		}
	}
	return d
}

func lineItem(l checkout.LineItem) LineItem {
	return LineItem{
		ID: l.ID, Item: ItemRef{ID: l.Item.ID}, Quantity: l.Item.Quantity, Name: l.Name, Images: l.Images,
		UnitAmount: l.UnitAmount, VariantID: l.Item.ID,
		Totals: []Total{
			{Type: "items_base_amount", DisplayText: "Base amount", Amount: l.BaseAmount},
			{Type: "items_discount", DisplayText: "Discount", Amount: l.Discount},
			{Type: "subtotal", DisplayText: "Subtotal", Amount: l.Subtotal},
			{Type: "tax", DisplayText: "Tax", Amount: l.Tax},
			{Type: "total", DisplayText: "Total", Amount: l.Total},
		},
	}
}

func option(o checkout.FulfillmentOption) FulfillmentOption {
	out := FulfillmentOption{Type: "shipping", ID: o.ID, Title: o.Title, Description: o.Subtitle, Carrier: o.Carrier,
		Totals: []Total{
			{Type: "subtotal", DisplayText: "Shipping", Amount: o.Subtotal},
			{Type: "tax", DisplayText: "Tax", Amount: o.Tax},
			{Type: "total", DisplayText: "Total", Amount: o.Total},
		}}
	if !o.EarliestDeliveryTime.IsZero() {
		t := o.EarliestDeliveryTime.UTC()
		out.EarliestDeliveryTime = &t
	}
	if !o.LatestDeliveryTime.IsZero() {
		t := o.LatestDeliveryTime.UTC()
		out.LatestDeliveryTime = &t
	}
	return out
}

func totals(ts []checkout.Total) []Total {
	out := make([]Total, 0, len(ts))
	for _, t := range ts {
		out = append(out, Total{Type: string(t.Type), DisplayText: t.DisplayText, Amount: t.Amount})
	}
	return out
}

// linkTypes are the Link types of the 2026-04-17 schema; the shop's
// support_url (the same page as support) has none.
var linkTypes = map[string]bool{
	"terms_of_use": true, "privacy_policy": true, "return_policy": true, "shipping_policy": true,
	"contact_us": true, "about_us": true, "faq": true, "support": true,
}

func links(ls []checkout.Link) []Link {
	out := make([]Link, 0, len(ls))
	for _, l := range ls {
		if linkTypes[l.Type] {
			out = append(out, Link{Type: l.Type, URL: l.URL})
		}
	}
	return out
}

// errorCodes are the MessageError codes of 2026-04-17 the shop's codes
// are; any other error is "invalid", and price_changed is a warning
// (price_change).
var errorCodes = map[string]bool{
	string(shop.Missing): true, string(shop.Invalid): true, string(shop.OutOfStock): true,
	string(shop.PaymentDeclined): true, string(shop.Requires3DS): true, string(shop.Expired): true,
	string(shop.NotFound): true, string(shop.Conflict): true,
}

func sessionMessage(m checkout.Message) Message {
	out := Message{Type: "info", Param: sessionParam(m.Param), ContentType: "plain", Content: say(m.Content)}
	if m.Type != checkout.MessageError {
		return out
	}
	out.Type, out.Code = "error", m.Code
	switch {
	case m.Code == string(shop.PriceChanged):
		out.Type, out.Code = "warning", "price_change"
	case !errorCodes[m.Code]:
		out.Code = string(shop.Invalid)
	}
	return out
}

// orderStatuses are the ACP order statuses (the amended 2026-04-17 list)
// of the shop's: a partly shipped order is processing, a delivered one
// completed, one refunded in full canceled.
var orderStatuses = map[string]string{
	"confirmed": "confirmed", "partially_shipped": "processing", "shipped": "shipped",
	"delivered": "completed", "canceled": "canceled", "refunded": "canceled",
}

// order is the ACP Order of a completed session: its status from the
// amended list, each line's quantities ordered, current (none left on a
// canceled order) and fulfilled (every unit once the order has shipped) and
// the line status they derive.
func order(o *contract.Order) *Order {
	status, ok := orderStatuses[o.Status]
	if !ok {
		status = "processing" // a status of the shop's that ACP does not name
	}
	out := &Order{
		Type: "order", ID: o.ID, CheckoutSessionID: o.CheckoutSessionID, OrderNumber: fmt.Sprint(o.Number),
		PermalinkURL: o.PermalinkURL, Status: status, LineItems: []OrderLine{}, Totals: totals(o.Receipt.Totals),
	}
	for _, l := range o.Receipt.LineItems {
		li := lineItem(l)
		q := OrderQuantity{Ordered: l.Item.Quantity, Current: l.Item.Quantity}
		switch o.Status {
		case "canceled":
			q.Current = 0
		case "shipped", "delivered":
			q.Fulfilled = q.Current
		}
		out.LineItems = append(out.LineItems, OrderLine{
			ID: l.ID, Title: l.Name, Quantity: q, Status: lineStatus(q),
			UnitPrice: l.UnitAmount, Subtotal: l.Subtotal, Totals: li.Totals,
		})
	}
	out.Adjustments = adjustments(o.Receipt)
	return out
}

// lineStatus is an order line's status, derived from its quantities as the
// amended OrderLineItem has it.
func lineStatus(q OrderQuantity) string {
	switch {
	case q.Current == 0:
		return "removed"
	case q.Fulfilled == q.Current:
		return "fulfilled"
	case q.Fulfilled > 0:
		return "partial"
	}
	return "processing"
}

// summary is the one text block of an answer, for agents that read text.
func summary(s *Session) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Checkout session %s: %s.", s.ID, strings.ReplaceAll(s.Status, "_", " "))
	for _, l := range s.LineItems {
		fmt.Fprintf(&sb, "\n- %d × %s (%s): %s", l.Quantity, l.Name, l.Item.ID, amount(l.Totals, "total", s.Currency))
	}
	if len(s.Totals) > 0 {
		fmt.Fprintf(&sb, "\nTotal: %s", amount(s.Totals, "total", s.Currency))
	}
	for _, m := range s.Messages {
		if m.Type != "info" {
			fmt.Fprintf(&sb, "\n%s %s (%s): %s", m.Type, m.Code, m.Param, m.Content)
		}
	}
	if s.Order != nil {
		fmt.Fprintf(&sb, "\nOrder %s placed (%s); receipt: %s", s.Order.OrderNumber, s.Order.ID, s.Order.PermalinkURL)
	}
	if s.ExpiresAt != nil && s.Order == nil {
		fmt.Fprintf(&sb, "\nExpires at %s.", s.ExpiresAt.Format(time.RFC3339))
	}
	return sb.String()
}

func amount(ts []Total, typ, currency string) string {
	for _, t := range ts {
		if t.Type != typ {
			continue
		}
		if cur, err := money.Lookup(currency); err == nil {
			return cur.Format(t.Amount)
		}
		return fmt.Sprintf("%d %s minor units", t.Amount, currency)
	}
	return "none"
}
