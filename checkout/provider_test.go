package checkout_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop/catalog"
	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
)

// TestPaymentProvider: a session's payment_provider lists its methods as
// ChatGPT's Checkout API reference shows them, a card with the brands of the
// policy (or the default ones), and its links name the support page as both
// support and support_url.
func TestPaymentProvider(t *testing.T) {
	ctx := context.Background()
	demo, err := os.ReadFile("../testdata/demo/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		brands string // the policy's card_brands line, "" for none
		want   []string
	}{
		{"Default", "", []string{"visa", "mastercard", "amex", "discover"}},
		{"Policy", "card_brands: [visa, jcb]", []string{"visa", "jcb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yaml := strings.Replace(string(demo), "card_brands: [visa, mastercard, amex, discover]", tc.brands, 1)
			policy, err := checkout.LoadPolicy(strings.NewReader(yaml), "policy.yaml")
			if err != nil {
				t.Fatal(err)
			}
			db := dbtest.Open(t, database.SQLite)
			cat := catalog.New(db, policy.Currency(), nil)
			if _, err := cat.SeedIfEmpty(ctx, os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
				t.Fatal(err)
			}
			co := checkout.New(db, policy, cat, &checkout.Options{PublicURL: "https://shop.example.com"})
			s, err := co.Create(ctx, checkout.Request{Items: items("enamel-camp-mug-forest-green", 1)})
			if err != nil {
				t.Fatal(err)
			}
			want := checkout.PaymentProvider{Provider: "stripe", MerchantID: policy.MerchantID,
				SupportedPaymentMethods: []checkout.PaymentMethod{{Type: "card", AllowedCardBrands: tc.want}}}
			if diff := cmp.Diff(want, s.PaymentProvider); diff != "" {
				t.Errorf("payment_provider (-want +got):\n%s", diff)
			}
			support := "https://shop.example.com/static/legal/support.html"
			wantLinks := []checkout.Link{
				{Type: "terms_of_use", URL: "https://shop.example.com/static/legal/terms.html"},
				{Type: "privacy_policy", URL: "https://shop.example.com/static/legal/privacy.html"},
				{Type: "return_policy", URL: "https://shop.example.com/static/legal/returns.html"},
				{Type: "support", URL: support}, {Type: "support_url", URL: support},
			}
			if diff := cmp.Diff(wantLinks, s.Links); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
		})
	}
}
