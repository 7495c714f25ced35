package purchase

import (
	"shop/contract"

	"strings"
	"testing"
	"time"
)

// A session whose figures agree: two lines, 10 % off the first, tax on both
// and on shipping (counted once, in tax).
func agreeingSession() contract.Session {
	return contract.Session{
		ID: "cs_1", Status: contract.SessionReady, Currency: "usd",
		LineItems: []contract.LineItem{
			{ID: "l1", Item: contract.Item{ID: "a", Quantity: 2}, UnitAmount: 1000, BaseAmount: 2000, Discount: 200, Subtotal: 1800, Tax: 144, Total: 1944},
			{ID: "l2", Item: contract.Item{ID: "b", Quantity: 1}, UnitAmount: 500, BaseAmount: 500, Subtotal: 500, Tax: 40, Total: 540},
		},
		FulfillmentOptions:  []contract.FulfillmentOption{{ID: "standard", Subtotal: 600, Tax: 48, Total: 648}},
		FulfillmentOptionID: "standard",
		Totals: []contract.Total{
			{Type: contract.TotalItemsBase, Amount: 2500}, {Type: contract.TotalItemsDiscount, Amount: 200}, {Type: contract.TotalSubtotal, Amount: 2300},
			{Type: contract.TotalFulfillment, Amount: 600}, {Type: contract.TotalTax, Amount: 232}, {Type: contract.TotalTotal, Amount: 3132},
		},
	}
}

// TestSessionIdentities: the identities of docs/buying.md hold on agreeing
// figures, and each broken one is named.
func TestSessionIdentities(t *testing.T) {
	if err := sessionIdentities(agreeingSession()); err != nil {
		t.Fatalf("agreeing figures: %v", err)
	}
	setTotal := func(tt contract.TotalType, amount int64) func(*contract.Session) {
		return func(s *contract.Session) {
			for i := range s.Totals {
				if s.Totals[i].Type == tt {
					s.Totals[i].Amount = amount
				}
			}
		}
	}
	for _, c := range []struct {
		name   string
		mutate func(*contract.Session)
		want   string
	}{
		{"unit × quantity", func(s *contract.Session) { s.LineItems[0].BaseAmount = 1999 }, "base_amount 1999 ≠ unit_amount 1000 × quantity 2"},
		{"line subtotal", func(s *contract.Session) { s.LineItems[1].Subtotal = 499 }, "subtotal 499 ≠ base_amount 500 − discount 0"},
		{"line total", func(s *contract.Session) { s.LineItems[1].Total = 541 }, "total 541 ≠ subtotal 500 + tax 40"},
		{"negative", func(s *contract.Session) { s.LineItems[0].Discount = -1 }, "a negative amount"},
		{"items base", setTotal(contract.TotalItemsBase, 2501), "items_base_amount 2501 ≠ Σ base_amount = 2500"},
		{"subtotal", setTotal(contract.TotalSubtotal, 2500), "subtotal 2500 ≠ items_base_amount − items_discount = 2300"},
		{"shipping's tax counted in fulfillment", setTotal(contract.TotalFulfillment, 648), "fulfillment 648 ≠ the chosen option's subtotal = 600"},
		{"tax without shipping's", setTotal(contract.TotalTax, 184), "tax 184 ≠ Σ line tax + option tax = 232"},
		{"total", setTotal(contract.TotalTotal, 3133), "total 3133 ≠ subtotal − discount + fulfillment + tax = 3132"},
		{"option total", func(s *contract.Session) { s.FulfillmentOptions[0].Total = 600 }, "total 600 ≠ subtotal 600 + tax 48"},
		{"unknown option", func(s *contract.Session) { s.FulfillmentOptionID = "express" }, `"express" is not one of the fulfillment_options`},
		{"listed twice", func(s *contract.Session) {
			s.Totals = append(s.Totals, contract.Total{Type: contract.TotalTax, Amount: 232})
		}, "tax listed twice"},
		{"no total", func(s *contract.Session) { s.Totals = s.Totals[:5] }, "totals: no total"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := agreeingSession()
			c.mutate(&s)
			err := sessionIdentities(s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
}

// TestReceiptMatches: a receipt with the session's figures matches it; one
// that differs in any checked field does not.
func TestReceiptMatches(t *testing.T) {
	s := agreeingSession()
	addr := DefaultAddress
	s.FulfillmentAddress, s.Buyer, s.PaymentMode = &addr, &contract.Buyer{Email: "Ada@Example.com"}, contract.PaymentTest
	s.Links = []contract.Link{{Type: "terms_of_use", URL: "https://shop.test/terms"}}
	good := func() contract.Receipt {
		opt := s.FulfillmentOptions[0]
		a := addr
		return contract.Receipt{
			OrderID: "ord_1", Number: 1001, CreatedAt: time.Now(), Email: "ada@example.com", Currency: "usd",
			LineItems: append([]contract.LineItem(nil), s.LineItems...), FulfillmentAddress: &a, FulfillmentOption: &opt,
			Totals: append([]contract.Total(nil), s.Totals...), Links: append([]contract.Link(nil), s.Links...),
			Payment: contract.Payment{Provider: "stripe", Mode: string(contract.PaymentTest), Reference: "pi_1", Status: contract.PaymentSucceeded},
		}
	}
	if err := receiptMatches(good(), s); err != nil {
		t.Fatalf("the session's own figures: %v", err)
	}
	for _, c := range []struct {
		name   string
		mutate func(*contract.Receipt)
	}{
		{"line", func(r *contract.Receipt) { r.LineItems[0].Name = "other" }},
		{"totals", func(r *contract.Receipt) { r.Totals[5].Amount++ }},
		{"option", func(r *contract.Receipt) { r.FulfillmentOption.Total++ }},
		{"address", func(r *contract.Receipt) { r.FulfillmentAddress.City = "Albany" }},
		{"email", func(r *contract.Receipt) { r.Email = "eve@example.com" }},
		{"currency", func(r *contract.Receipt) { r.Currency = "eur" }},
		{"mode", func(r *contract.Receipt) { r.Payment.Mode = string(contract.PaymentLive) }},
		{"payment status", func(r *contract.Receipt) { r.Payment.Status = "pending" }},
		{"no reference", func(r *contract.Receipt) { r.Payment.Reference = "" }},
		{"links", func(r *contract.Receipt) { r.Links = nil }},
	} {
		r := good()
		c.mutate(&r)
		if err := receiptMatches(r, s); err == nil {
			t.Errorf("%s: a receipt that differs matched", c.name)
		}
	}
}

// TestParseAddress: --address takes the contract's Address and refuses
// what is not one, saying what to send.
func TestParseAddress(t *testing.T) {
	a, err := ParseAddress(`{"name":"A B","line_one":"1 Main St","city":"Albany","state":"NY","country":"US","postal_code":"12207"}`)
	if err != nil || a.City != "Albany" || a.State != "NY" {
		t.Fatalf("%+v, %v", a, err)
	}
	for in, want := range map[string]string{
		`New York`:          "send an address as JSON",
		`{"city":"Albany"}`: "the address has no name",
		`{"name":"A","line_one":"1","city":"C","country":"US","postal_code":"1","planet":"Earth"}`: `unknown field "planet"`,
		`{"name":"A","line_one":"1","city":"C","country":"US","postal_code":" "}`:                  "no postal_code",
	} {
		if _, err := ParseAddress(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// TestPaymentMethods: supported_payment_methods must be objects with a card
// that names its brands, as ChatGPT's Checkout API reference shows them.
func TestPaymentMethods(t *testing.T) {
	for _, c := range []struct {
		name    string
		methods []contract.PaymentMethod
		want    string // "" for none
	}{
		{"OK", []contract.PaymentMethod{{Type: "card", AllowedCardBrands: []string{"visa", "amex"}}}, ""},
		{"ErrNone", nil, `no {"type": "card"}`},
		{"ErrNoCard", []contract.PaymentMethod{{Type: "applepay"}}, `no {"type": "card"}`},
		{"ErrNoBrands", []contract.PaymentMethod{{Type: "card"}}, "a card without allowed_card_brands"},
		{"ErrBrandCase", []contract.PaymentMethod{{Type: "card", AllowedCardBrands: []string{"Visa"}}}, `"Visa", want a lower-case brand`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkPaymentMethods(c.methods)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestCheckLinks: a ready session lists the four pages and support_url,
// the same URL as support.
func TestCheckLinks(t *testing.T) {
	all := func() []contract.Link {
		return []contract.Link{{Type: "terms_of_use", URL: "https://s.test/t"}, {Type: "privacy_policy", URL: "https://s.test/p"}, {Type: "return_policy", URL: "https://s.test/r"},
			{Type: "support", URL: "https://s.test/s"}, {Type: "support_url", URL: "https://s.test/s"}}
	}
	for _, c := range []struct {
		name   string
		mutate func([]contract.Link) []contract.Link
		want   string
	}{
		{"OK", func(l []contract.Link) []contract.Link { return l }, ""},
		{"ErrNoSupportURL", func(l []contract.Link) []contract.Link { return l[:4] }, "links: no support_url"},
		{"ErrNoTerms", func(l []contract.Link) []contract.Link { return l[1:] }, "links: no terms_of_use"},
		{"ErrSupportURLDiffers", func(l []contract.Link) []contract.Link { l[4].URL = "https://s.test/other"; return l }, "is not support's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkLinks(c.mutate(all()))
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}
