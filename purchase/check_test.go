package purchase

import (
	"strings"
	"testing"
	"time"
)

// A session whose figures agree: two lines, 10 % off the first, tax on both
// and on shipping (counted once, in tax).
func agreeingSession() session {
	return session{
		ID: "cs_1", Status: statusReady, Currency: "usd",
		LineItems: []lineItem{
			{ID: "l1", Item: item{ID: "a", Quantity: 2}, UnitAmount: 1000, BaseAmount: 2000, Discount: 200, Subtotal: 1800, Tax: 144, Total: 1944},
			{ID: "l2", Item: item{ID: "b", Quantity: 1}, UnitAmount: 500, BaseAmount: 500, Subtotal: 500, Tax: 40, Total: 540},
		},
		FulfillmentOptions:  []fulfillmentOption{{ID: "standard", Subtotal: 600, Tax: 48, Total: 648}},
		FulfillmentOptionID: "standard",
		Totals: []total{
			{Type: totalItemsBase, Amount: 2500}, {Type: totalItemsDiscount, Amount: 200}, {Type: totalSubtotal, Amount: 2300},
			{Type: totalFulfillment, Amount: 600}, {Type: totalTax, Amount: 232}, {Type: totalTotal, Amount: 3132},
		},
	}
}

// TestSessionIdentities: the identities of CONTRACT.md §4 hold on agreeing
// figures, and each broken one is named.
func TestSessionIdentities(t *testing.T) {
	if err := sessionIdentities(agreeingSession()); err != nil {
		t.Fatalf("agreeing figures: %v", err)
	}
	setTotal := func(tt totalType, amount int64) func(*session) {
		return func(s *session) {
			for i := range s.Totals {
				if s.Totals[i].Type == tt {
					s.Totals[i].Amount = amount
				}
			}
		}
	}
	for _, c := range []struct {
		name   string
		mutate func(*session)
		want   string
	}{
		{"unit × quantity", func(s *session) { s.LineItems[0].BaseAmount = 1999 }, "base_amount 1999 ≠ unit_amount 1000 × quantity 2"},
		{"line subtotal", func(s *session) { s.LineItems[1].Subtotal = 499 }, "subtotal 499 ≠ base_amount 500 − discount 0"},
		{"line total", func(s *session) { s.LineItems[1].Total = 541 }, "total 541 ≠ subtotal 500 + tax 40"},
		{"negative", func(s *session) { s.LineItems[0].Discount = -1 }, "a negative amount"},
		{"items base", setTotal(totalItemsBase, 2501), "items_base_amount 2501 ≠ Σ base_amount = 2500"},
		{"subtotal", setTotal(totalSubtotal, 2500), "subtotal 2500 ≠ items_base_amount − items_discount = 2300"},
		{"shipping's tax counted in fulfillment", setTotal(totalFulfillment, 648), "fulfillment 648 ≠ the chosen option's subtotal = 600"},
		{"tax without shipping's", setTotal(totalTax, 184), "tax 184 ≠ Σ line tax + option tax = 232"},
		{"total", setTotal(totalTotal, 3133), "total 3133 ≠ subtotal − discount + fulfillment + tax = 3132"},
		{"option total", func(s *session) { s.FulfillmentOptions[0].Total = 600 }, "total 600 ≠ subtotal 600 + tax 48"},
		{"unknown option", func(s *session) { s.FulfillmentOptionID = "express" }, `"express" is not one of the fulfillment_options`},
		{"listed twice", func(s *session) { s.Totals = append(s.Totals, total{Type: totalTax, Amount: 232}) }, "tax listed twice"},
		{"no total", func(s *session) { s.Totals = s.Totals[:5] }, "totals: no total"},
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
	s.FulfillmentAddress, s.Buyer, s.PaymentMode = &addr, &buyer{Email: "Ada@Example.com"}, modeTest
	s.Links = []link{{Type: "terms_of_use", URL: "https://shop.test/terms"}}
	good := func() receipt {
		opt := s.FulfillmentOptions[0]
		a := addr
		return receipt{
			OrderID: "ord_1", Number: 1001, CreatedAt: time.Now(), Email: "ada@example.com", Currency: "usd",
			LineItems: append([]lineItem(nil), s.LineItems...), FulfillmentAddress: &a, FulfillmentOption: &opt,
			Totals: append([]total(nil), s.Totals...), Links: append([]link(nil), s.Links...),
			Payment: payment{Provider: "stripe", Mode: modeTest, Reference: "pi_1", Status: paymentSucceeded},
		}
	}
	if err := receiptMatches(good(), s); err != nil {
		t.Fatalf("the session's own figures: %v", err)
	}
	for _, c := range []struct {
		name   string
		mutate func(*receipt)
	}{
		{"line", func(r *receipt) { r.LineItems[0].Name = "other" }},
		{"totals", func(r *receipt) { r.Totals[5].Amount++ }},
		{"option", func(r *receipt) { r.FulfillmentOption.Total++ }},
		{"address", func(r *receipt) { r.FulfillmentAddress.City = "Albany" }},
		{"email", func(r *receipt) { r.Email = "eve@example.com" }},
		{"currency", func(r *receipt) { r.Currency = "eur" }},
		{"mode", func(r *receipt) { r.Payment.Mode = modeLive }},
		{"payment status", func(r *receipt) { r.Payment.Status = "pending" }},
		{"no reference", func(r *receipt) { r.Payment.Reference = "" }},
		{"links", func(r *receipt) { r.Links = nil }},
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
		methods []paymentMethod
		want    string // "" for none
	}{
		{"OK", []paymentMethod{{Type: "card", AllowedCardBrands: []string{"visa", "amex"}}}, ""},
		{"ErrNone", nil, `no {"type": "card"}`},
		{"ErrNoCard", []paymentMethod{{Type: "applepay"}}, `no {"type": "card"}`},
		{"ErrNoBrands", []paymentMethod{{Type: "card"}}, "a card without allowed_card_brands"},
		{"ErrBrandCase", []paymentMethod{{Type: "card", AllowedCardBrands: []string{"Visa"}}}, `"Visa", want a lower-case brand`},
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
	all := func() []link {
		return []link{{"terms_of_use", "https://s.test/t"}, {"privacy_policy", "https://s.test/p"}, {"return_policy", "https://s.test/r"},
			{"support", "https://s.test/s"}, {"support_url", "https://s.test/s"}}
	}
	for _, c := range []struct {
		name   string
		mutate func([]link) []link
		want   string
	}{
		{"OK", func(l []link) []link { return l }, ""},
		{"ErrNoSupportURL", func(l []link) []link { return l[:4] }, "links: no support_url"},
		{"ErrNoTerms", func(l []link) []link { return l[1:] }, "links: no terms_of_use"},
		{"ErrSupportURLDiffers", func(l []link) []link { l[4].URL = "https://s.test/other"; return l }, "is not support's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkLinks(c.mutate(all()))
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}
