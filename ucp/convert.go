package ucp

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"shop"
	"shop/checkout"
	"shop/contract"
	"shop/orders"
)

// The ids of the one fulfillment method, destination and group a checkout
// has: the shop ships everything together to one address.
const (
	methodID      = "shipping_1"
	destinationID = "dest_1"
	groupID       = "package_1"
)

// checkoutStatus is the UCP status of a session: ready_for_payment is
// ready_for_complete; a session the buyer must finish themselves (3-D
// Secure, or a merchant whose buyers always pay on the shop's page) is
// requires_escalation, handed off at continue_url.
func checkoutStatus(s *checkout.Session) string {
	switch s.Status {
	case checkout.Completed:
		return "completed"
	case checkout.Canceled, checkout.Expired:
		return "canceled"
	case checkout.InProgress:
		return "complete_in_progress"
	}
	for _, m := range s.Messages {
		if m.Type == checkout.MessageError && m.Code == string(shop.Requires3DS) {
			return "requires_escalation"
		}
	}
	if s.Status == checkout.Ready {
		if s.ExternalCheckout {
			return "requires_escalation"
		}
		return "ready_for_complete"
	}
	return "incomplete"
}

// toCheckout is a session as UCP shows it.
func (u *UCP) toCheckout(c *call, s *checkout.Session) *Checkout {
	out := &Checkout{
		UCP: u.envelope(c, CapCheckout), ID: s.ID, Status: checkoutStatus(s), Currency: strings.ToUpper(s.Currency),
		LineItems: lineItems(s.LineItems), Buyer: toBuyer(s.Buyer), Totals: totals(s.Totals, s.FulfillmentOptionID != ""),
		Links: links(s.Links),
	}
	if current(c.version) {
		out.Policies = u.withReturns(policies(s.Links))
	}
	out.Messages = append(out.Messages, messages(s.Messages, s.Discounts)...)
	if out.Status == "requires_escalation" && s.ExternalCheckout {
		out.Messages = append(out.Messages, Message{Type: "error", Code: "requires_buyer_review", Content: "This shop takes payment on its own page: hand the buyer continue_url to pay.", Severity: "requires_buyer_review"})
	}
	if !s.Status.Final() {
		exp := s.ExpiresAt.UTC()
		out.ExpiresAt = &exp
		out.ContinueURL = u.checkout.PayURL(s.ID)
	}
	if c.active[CapFulfillment] && len(s.LineItems) > 0 {
		out.Fulfillment = fulfillment(c.version, s)
	}
	if c.active[CapDiscount] {
		out.Discounts = discounts(s.Discounts)
	}
	if s.Order != nil {
		out.Order = &OrderConfirmation{ID: s.Order.ID, Label: fmt.Sprintf("#%d", s.Order.Number), PermalinkURL: s.Order.PermalinkURL}
	}
	return out
}

// toCart is a cart as UCP shows it.
func (u *UCP) toCart(c *call, ct *checkout.Cart) *Cart {
	out := &Cart{UCP: u.envelope(c, CapCart), ID: ct.ID, LineItems: lineItems(ct.LineItems), Buyer: toBuyer(ct.Buyer),
		Currency: strings.ToUpper(ct.Currency), Totals: totals(ct.Totals, false)}
	out.Messages = messages(ct.Messages, ct.Discounts)
	if ct.Status == checkout.CartOpen {
		exp := ct.ExpiresAt.UTC()
		out.ExpiresAt = &exp
	}
	if c.active[CapDiscount] {
		out.Discounts = discounts(ct.Discounts)
	}
	return out
}

func lineItems(in []checkout.LineItem) []LineItem {
	out := make([]LineItem, 0, len(in))
	for _, l := range in {
		li := LineItem{ID: l.ID, Item: item(l), Quantity: l.Item.Quantity, Totals: []Total{{Type: "subtotal", Amount: l.BaseAmount}}}
		if l.Discount > 0 {
			li.Totals = append(li.Totals, Total{Type: "items_discount", Amount: -l.Discount})
		}
		if l.Tax > 0 {
			li.Totals = append(li.Totals, Total{Type: "tax", Amount: l.Tax})
		}
		li.Totals = append(li.Totals, Total{Type: "total", Amount: l.Total})
		out = append(out, li)
	}
	return out
}

func item(l checkout.LineItem) Item {
	it := Item{ID: l.Item.ID, Title: l.Name, Price: l.UnitAmount}
	if len(l.Images) > 0 {
		it.ImageURL = l.Images[0]
	}
	return it
}

// totals are the shop's totals as UCP lists them, adding up to the total:
// subtotal (the items before discounts), items_discount and discount
// (negative), fulfillment (when an option is chosen), tax and total.
func totals(in []checkout.Total, shipping bool) []Total {
	by := map[contract.TotalType]checkout.Total{}
	for _, t := range in {
		by[t.Type] = t
	}
	text := func(t contract.TotalType, def string) string {
		if s := by[t].DisplayText; s != "" {
			return s
		}
		return def
	}
	out := []Total{{Type: "subtotal", DisplayText: text(contract.TotalItemsBase, "Subtotal"), Amount: by[contract.TotalItemsBase].Amount}}
	if d := by[contract.TotalItemsDiscount].Amount; d > 0 {
		out = append(out, Total{Type: "items_discount", DisplayText: text(contract.TotalItemsDiscount, "Item discounts"), Amount: -d})
	}
	if d := by[contract.TotalDiscount].Amount; d > 0 {
		out = append(out, Total{Type: "discount", DisplayText: text(contract.TotalDiscount, "Discount"), Amount: -d})
	}
	if f := by[contract.TotalFulfillment].Amount; shipping || f > 0 {
		out = append(out, Total{Type: "fulfillment", DisplayText: text(contract.TotalFulfillment, "Shipping"), Amount: f})
	}
	out = append(out,
		Total{Type: "tax", DisplayText: text(contract.TotalTax, "Tax"), Amount: by[contract.TotalTax].Amount},
		Total{Type: "total", DisplayText: text(contract.TotalTotal, "Total"), Amount: by[contract.TotalTotal].Amount})
	return out
}

// discounts are the discount extension's object: the codes as entered and
// each that applies, with its code, title (the promotion's name), amount
// and allocations.
func discounts(in *checkout.Discounts) *Discounts {
	d := &Discounts{}
	if in == nil {
		return d
	}
	d.Codes = in.Codes
	for _, a := range in.Applied {
		ad := AppliedDiscount{Code: a.Code, Title: a.Title, Amount: a.Amount, Method: "across"}
		if a.Kind == string(checkout.PercentOff) {
			ad.Method = "each"
		}
		for _, al := range a.Allocations {
			ad.Allocations = append(ad.Allocations, Allocation{Path: al.Path, Amount: al.Amount})
		}
		d.Applied = append(d.Applied, ad)
	}
	return d
}

// messages are a session's or cart's messages as UCP writes them: each
// rejected code a warning with the discount extension's code at
// $.discounts.codes[i], in place of the shop's info messages about codes.
func messages(in []checkout.Message, d *checkout.Discounts) []Message {
	var out []Message
	for _, m := range in {
		if m.Type == checkout.MessageInfo && (m.Param == "$.promo_code" || strings.HasPrefix(m.Param, "$.promo_codes[")) {
			continue
		}
		out = append(out, toMessage(m, checkoutPath))
	}
	if d == nil {
		return out
	}
	for _, r := range d.Rejected {
		out = append(out, Message{Type: "warning", Code: ucpRejection(r.Reason), Path: fmt.Sprintf("$.discounts.codes[%d]", r.Index), Content: r.Content})
	}
	return out
}

// ucpRejection is the discount extension's code of why a code does not
// apply: UCP's table has no code for a minimum not met nor a usage limit
// reached, so those are ineligible and expired.
func ucpRejection(r contract.DiscountRejection) string {
	switch r {
	case contract.DiscountMinimumNotMet:
		return "discount_code_user_ineligible"
	case contract.DiscountUsageLimit:
		return string(contract.DiscountExpired)
	}
	return string(r)
}

// policyReturn is UCP's well-known type of a return policy.
const policyReturn = "dev.ucp.shopping.policy.return"

// policies are the policies a 2026-08-25 checkout names: the merchant's
// return policy, for the whole checkout, when its legal links have one
// (the same page as links[]'s return_policy).
func policies(in []checkout.Link) []Policy {
	for _, l := range in {
		if l.Type == "return_policy" && l.URL != "" {
			return []Policy{{Type: policyReturn, URL: l.URL,
				Description: Description{Plain: "Returns and refunds follow the merchant's return policy: " + l.URL}}}
		}
	}
	return nil
}

func links(in []checkout.Link) []Link {
	out := make([]Link, 0, len(in))
	for _, l := range in {
		t := l.Type
		if t == "terms_of_use" {
			t = "terms_of_service" // UCP's name for it
		}
		out = append(out, Link{Type: t, URL: l.URL})
	}
	return out
}

func toBuyer(b *checkout.Buyer) *Buyer {
	if b == nil {
		return nil
	}
	first, last := b.FirstName, b.LastName
	if first == "" && last == "" {
		first, last = splitName(b.Name)
	}
	return &Buyer{FirstName: first, LastName: last, Email: b.Email, PhoneNumber: b.PhoneNumber}
}

func splitName(name string) (first, last string) {
	first, last, _ = strings.Cut(strings.TrimSpace(name), " ")
	return first, strings.TrimSpace(last)
}

func joinName(first, last string) string { return strings.TrimSpace(first + " " + last) }

// fulfillment is the session's one shipping method: every line, to its
// address, with the options the address is offered, as release version
// writes them.
func fulfillment(version string, s *checkout.Session) *Fulfillment {
	ids := make([]string, len(s.LineItems))
	for i, l := range s.LineItems {
		ids[i] = l.ID
	}
	m := Method{ID: methodID, Type: "shipping", LineItemIDs: ids}
	if a := s.FulfillmentAddress; a != nil {
		d := destination(a)
		if current(version) {
			d.Type = "shipping_address" // the destination's discriminator, required since 2026-08-25
		}
		m.Destinations = []PostalAddress{d}
		m.SelectedDestinationID = destinationID
	}
	if len(s.FulfillmentOptions) > 0 {
		g := Group{ID: groupID, LineItemIDs: ids, SelectedOptionID: s.FulfillmentOptionID, Options: []Option{}}
		for _, o := range s.FulfillmentOptions {
			g.Options = append(g.Options, option(version, o))
		}
		m.Groups = []Group{g}
	}
	return &Fulfillment{Methods: []Method{m}}
}

func destination(a *checkout.Address) PostalAddress {
	first, last := splitName(a.Name)
	return PostalAddress{ID: destinationID, FirstName: first, LastName: last, StreetAddress: a.LineOne, ExtendedAddress: a.LineTwo,
		AddressLocality: a.City, AddressRegion: a.State, AddressCountry: a.Country, PostalCode: a.PostalCode, PhoneNumber: a.PhoneNumber}
}

// option is a shipping option as release version writes it: its
// description a string in 2026-04-08, a Description since.
func option(version string, o checkout.FulfillmentOption) Option {
	opt := Option{ID: o.ID, Title: o.Title, Carrier: o.Carrier,
		Totals: []Total{{Type: "subtotal", Amount: o.Subtotal}}}
	switch {
	case o.Subtitle == "":
	case current(version):
		opt.Description = Description{Plain: o.Subtitle}
	default:
		opt.Description = o.Subtitle
	}
	if o.Tax > 0 {
		opt.Totals = append(opt.Totals, Total{Type: "tax", Amount: o.Tax})
	}
	opt.Totals = append(opt.Totals, Total{Type: "total", Amount: o.Total})
	if !o.EarliestDeliveryTime.IsZero() {
		e, l := o.EarliestDeliveryTime.UTC(), o.LatestDeliveryTime.UTC()
		opt.EarliestFulfillmentTime, opt.LatestFulfillmentTime = &e, &l
	}
	return opt
}

// toMessage is a message of the shop as UCP writes it, its field's path
// translated.
func toMessage(m checkout.Message, paths func(string) string) Message {
	out := Message{Type: string(m.Type), Code: m.Code, Content: say(m.Content)}
	if m.Param != "" {
		out.Path = paths(m.Param)
	}
	if m.Type == checkout.MessageError {
		out.Severity = "recoverable"
		if m.Code == string(shop.Requires3DS) {
			out.Severity = "requires_buyer_input"
		}
		if out.Code == "" {
			out.Code = string(shop.Invalid)
		}
	}
	return out
}

var (
	itemsPath   = regexp.MustCompile(`^\$\.items(\[\d+\])?(\.id|\.quantity)?$`)
	quantPath   = regexp.MustCompile(`^\$\.line_items(\[\d+\])\.item\.quantity$`)
	addressKeys = map[string]string{
		"name": "first_name", "line_one": "street_address", "line_two": "extended_address", "city": "address_locality",
		"state": "address_region", "country": "address_country", "postal_code": "postal_code", "phone_number": "phone_number",
	}
)

// checkoutPath translates the JSONPath of a field of the shop's checkout
// (CONTRACT.md §4) into UCP's: $.items[1].quantity is
// $.line_items[1].quantity, $.fulfillment_address.city is
// $.fulfillment.methods[0].destinations[0].address_locality.
func checkoutPath(p string) string {
	const dest = "$.fulfillment.methods[0].destinations[0]"
	switch {
	case itemsPath.MatchString(p):
		m := itemsPath.FindStringSubmatch(p)
		switch m[2] {
		case ".id":
			return "$.line_items" + m[1] + ".item.id"
		case ".quantity":
			return "$.line_items" + m[1] + ".quantity"
		}
		return "$.line_items" + m[1]
	case quantPath.MatchString(p):
		return "$.line_items" + quantPath.FindStringSubmatch(p)[1] + ".quantity"
	case p == "$.fulfillment_address":
		return dest
	case strings.HasPrefix(p, "$.fulfillment_address."):
		k := strings.TrimPrefix(p, "$.fulfillment_address.")
		if v, ok := addressKeys[k]; ok {
			k = v
		}
		return dest + "." + k
	case p == "$.fulfillment_option_id":
		return "$.fulfillment.methods[0].groups[0].selected_option_id"
	case p == "$.promo_code":
		return "$.discounts.codes"
	case strings.HasPrefix(p, "$.promo_codes"):
		return "$.discounts.codes" + strings.TrimPrefix(p, "$.promo_codes")
	case p == "$.checkout_session_id":
		return "$.id"
	case p == "$.buyer.name":
		return "$.buyer.first_name"
	case strings.HasPrefix(p, "$.payment_data"):
		return "$.payment.instruments[0].credential.token"
	}
	return p
}

// toOrder is an order as UCP shows it.
func (u *UCP) toOrder(c *call, o *contract.Order) *Order {
	r := o.Receipt
	out := &Order{UCP: u.envelope(c, CapOrder), ID: o.ID, Label: fmt.Sprintf("#%d", o.Number), CheckoutID: o.CheckoutSessionID,
		PermalinkURL: o.PermalinkURL, Currency: strings.ToUpper(r.Currency), LineItems: []OrderLineItem{},
		Totals: totals(r.Totals, r.FulfillmentOption != nil), Fulfillment: OrderFulfilment{Expectations: []Expectation{}}}
	shipped := o.Status == string(orders.StatusShipped) || o.Status == string(orders.StatusDelivered)
	status := "processing"
	switch {
	case shipped:
		status = "fulfilled"
	case o.Status == string(orders.StatusCanceled):
		status = "removed"
	}
	exp := Expectation{ID: "exp_1", MethodType: "shipping", LineItems: []ExpectedLine{}}
	for _, l := range lineItems(r.LineItems) {
		q := OrderQuantity{Total: l.Quantity}
		if shipped {
			q.Fulfilled = l.Quantity
		}
		out.LineItems = append(out.LineItems, OrderLineItem{ID: l.ID, Item: l.Item, Quantity: q, Totals: l.Totals, Status: status})
		exp.LineItems = append(exp.LineItems, ExpectedLine{ID: l.ID, Quantity: l.Quantity})
	}
	if r.FulfillmentAddress != nil {
		exp.Destination = destination(r.FulfillmentAddress)
		exp.Destination.ID = ""
		if fo := r.FulfillmentOption; fo != nil && !fo.LatestDeliveryTime.IsZero() {
			exp.FulfillableOn = "by " + fo.LatestDeliveryTime.UTC().Format(time.DateOnly)
		}
		out.Fulfillment.Expectations = append(out.Fulfillment.Expectations, exp)
	}
	out.Adjustments = adjustments(r)
	if current(c.version) {
		out.Policies = u.withReturns(policies(r.Links))
	}
	return out
}
