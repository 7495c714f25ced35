package checkout

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"shop/money"
)

// decimalEqual compares decimals by value, so "7.25" equals "7.250".
var decimalEqual = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

func ptr[T any](v T) *T { return &v }

// validYAML is testdata/valid.yaml, the policy the tests break.
func validYAML(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// edit applies old→new replacements, each of which must match exactly once.
func edit(t *testing.T, s string, edits ...string) string {
	t.Helper()
	for i := 0; i+1 < len(edits); i += 2 {
		if n := strings.Count(s, edits[i]); n != 1 {
			t.Fatalf("edit %q matches %d times, want 1", edits[i], n)
		}
		s = strings.Replace(s, edits[i], edits[i+1], 1)
	}
	return s
}

// errLines returns the lines of err's message, one per problem.
func errLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

func TestLoadPolicy(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		p, err := LoadPolicy(strings.NewReader(validYAML(t)), "policy.yaml")
		if err != nil {
			t.Fatal(err)
		}
		want := &Policy{
			Name:         "Test Shop",
			CurrencyCode: "usd",
			MerchantID:   "acct_test",
			PaymentMode:  PaymentTest,
			Links: Links{
				TermsOfUse:    "/static/legal/terms.html",
				PrivacyPolicy: "/static/legal/privacy.html",
				ReturnPolicy:  "https://example.com/returns",
				Support:       "/static/legal/support.html",
			},
			Shipping: Shipping{Zones: []Zone{
				{ID: "us", Name: "United States", Countries: []string{"US"}, Rates: []ShippingRate{
					{ID: "standard", Title: "Standard", Subtitle: "3–5 business days", Carrier: "USPS", Price: 500, FreeOver: ptr[int64](7500), MinDays: 3, MaxDays: 5},
					{ID: "express", Title: "Express", Price: 1500, MinDays: 1, MaxDays: 2},
				}},
				{ID: "europe", Name: "Europe", Countries: []string{"DE", "FR"}, Rates: []ShippingRate{
					{ID: "international", Title: "International", Price: 1800, MinDays: 7, MaxDays: 14},
				}},
			}},
			Tax: []TaxRule{
				{Country: "US", Rate: decimal.RequireFromString("5")},
				{Country: "US", Region: "CA", Rate: decimal.RequireFromString("7.25")},
				{Country: "DE", Rate: decimal.RequireFromString("19"), ShippingTaxable: true},
			},
			Promotions: []Promotion{
				{Code: "WELCOME10", Description: "10% off", Kind: PercentOff, Percent: decimal.RequireFromString("10"), MinSubtotal: 2500,
					StartsAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), EndsAt: time.Date(2030, 12, 31, 23, 59, 59, 0, time.UTC), UsageLimit: ptr(1000)},
				{Code: "SAVE5", Kind: AmountOff, Amount: 500},
				{Code: "FreeShip", Kind: FreeShipping},
			},
		}
		if diff := cmp.Diff(want, p, decimalEqual); diff != "" {
			t.Errorf("LoadPolicy mismatch (-want +got):\n%s", diff)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("Validate() = %v", err)
		}
	})

	moneyErr := func(code string) string {
		_, err := money.Lookup(code)
		return strings.TrimPrefix(err.Error(), "money: ")
	}
	tests := []struct {
		name  string
		edits []string // old, new, old, new, …
		want  []string
	}{
		{"ErrMissingName", []string{"name: Test Shop\n", ""},
			[]string{"policy.yaml: name: missing"}},
		{"ErrNameTooLong", []string{"name: Test Shop", "name: " + strings.Repeat("é", 81)},
			[]string{"policy.yaml: name: must be at most 80 characters (got 81) (line 2)"}},
		{"ErrMissingCurrency", []string{"currency: usd\n", ""},
			[]string{"policy.yaml: currency: missing"}},
		{"ErrUnknownCurrency", []string{"currency: usd", "currency: xyz"},
			[]string{"policy.yaml: currency: " + moneyErr("xyz") + " (line 3)"}},
		{"ErrMissingMerchantID", []string{"merchant_id: acct_test\n", ""},
			[]string{"policy.yaml: merchant_id: missing"}},
		{"ErrPaymentMode", []string{"merchant_id: acct_test\n", "merchant_id: acct_test\npayment_mode: prod\n"},
			[]string{`policy.yaml: payment_mode: must be test or live (got "prod") (line 5)`}},
		{"ErrCardBrandUnknown", []string{"merchant_id: acct_test\n", "merchant_id: acct_test\ncard_brands: [visa, Mastercard]\n"},
			[]string{"policy.yaml: card_brands: unknown brand \"Mastercard\" at [1]; send some of amex, diners, discover, eftpos_au, jcb, mastercard, unionpay, visa (line 5)"}},
		{"ErrCardBrandTwice", []string{"merchant_id: acct_test\n", "merchant_id: acct_test\ncard_brands: [visa, amex, visa]\n"},
			[]string{`policy.yaml: card_brands: "visa" is listed twice (line 5)`}},
		{"ErrUnknownKey", []string{"shipping:\n", "shiping:\n"},
			[]string{
				"policy.yaml: shiping: unknown key; the keys allowed here are name, currency, merchant_id, payment_mode, external_checkout, payment_sheet, product_checkout, card_brands, links, shipping, tax_display, limits, sessions, emails, returns, tax, promotions (line 10)",
				"policy.yaml: shipping.zones: missing; list at least one zone",
			}},
		{"ErrUnknownNestedKey", []string{"carrier: USPS", "carier: USPS"},
			[]string{"policy.yaml: shipping.zones[0].rates[0].carier: unknown key; the keys allowed here are id, title, subtitle, carrier, price, free_over, min_days, max_days (line 19)"}},
		{"ErrDuplicateKey", []string{"name: Test Shop\n", "name: Test Shop\nname: Other Shop\n"},
			[]string{"policy.yaml: name: duplicate key, first set at line 2 (line 3)"}},
		{"ErrDuplicateNestedKey", []string{"title: Express\n", "title: Express\n          title: Again\n"},
			[]string{"policy.yaml: shipping.zones[0].rates[1].title: duplicate key, first set at line 25 (line 26)"}},
		{"ErrPriceNotWhole", []string{"price: 1500", "price: 4.99"},
			[]string{`policy.yaml: shipping.zones[0].rates[1].price: must be a whole number of minor units ≥ 0 (got "4.99") (line 26)`}},
		{"ErrPriceQuoted", []string{"price: 1500", `price: "1500"`},
			[]string{`policy.yaml: shipping.zones[0].rates[1].price: must be a whole number of minor units ≥ 0 (got "1500") (line 26)`}},
		{"ErrNegativePrice", []string{"price: 500", "price: -500"},
			[]string{"policy.yaml: shipping.zones[0].rates[0].price: must be a whole number of minor units ≥ 0 (got -500) (line 20)"}},
		{"ErrHugePrice", []string{"price: 500", "price: 200000000000"},
			[]string{"policy.yaml: shipping.zones[0].rates[0].price: must be at most 100000000000 minor units (got 200000000000) (line 20)"}},
		{"ErrNegativeFreeOver", []string{"free_over: 7500", "free_over: -1"},
			[]string{"policy.yaml: shipping.zones[0].rates[0].free_over: must be a whole number of minor units ≥ 0 (got -1) (line 21)"}},
		{"ErrMinDaysAfterMaxDays", []string{"min_days: 3", "min_days: 9"},
			[]string{"policy.yaml: shipping.zones[0].rates[0].min_days: must be at most max_days (got 9 > 5) (line 22)"}},
		{"ErrMaxDaysOver60", []string{"max_days: 14", "max_days: 90"},
			[]string{"policy.yaml: shipping.zones[1].rates[0].max_days: must be a whole number of business days from 0 to 60 (got 90) (line 37)"}},
		{"ErrMissingRateTitle", []string{"          title: Express\n", ""},
			[]string{"policy.yaml: shipping.zones[0].rates[1].title: missing"}},
		{"ErrDuplicateRateID", []string{"id: express", "id: standard"},
			[]string{`policy.yaml: shipping.zones[0].rates[1].id: duplicate rate id "standard" (first at shipping.zones[0].rates[0].id); rate ids must be unique within a zone (line 24)`}},
		{"ErrDuplicateZoneID", []string{"id: europe", "id: us"},
			[]string{`policy.yaml: shipping.zones[1].id: duplicate zone id "us" (first at shipping.zones[0].id) (line 29)`}},
		{"ErrCountryInTwoZones", []string{"[DE, FR]", "[DE, US]"},
			[]string{`policy.yaml: shipping.zones[1].countries[1]: duplicate country "US" (first at shipping.zones[0].countries[0]); a country may be in at most one zone (line 31)`}},
		{"ErrLowerCaseCountry", []string{"[DE, FR]", "[DE, fr]"},
			[]string{`policy.yaml: shipping.zones[1].countries[1]: must be upper-case: write "FR" (got "fr") (line 31)`}},
		{"ErrUnknownCountry", []string{"[DE, FR]", "[DE, XX]"},
			[]string{`policy.yaml: shipping.zones[1].countries[1]: unknown country "XX"; send an ISO 3166-1 alpha-2 code such as US (line 31)`}},
		{"ErrCountryNotText", []string{"[DE, FR]", "[{DE: 1}, fr]"},
			[]string{"policy.yaml: shipping.zones[1].countries[0]: must be a single value (got a mapping) (line 31)"}},
		{"ErrCountriesNotList", []string{"countries: [US]", "countries: US"},
			[]string{`policy.yaml: shipping.zones[0].countries: must be a list (got "US") (line 14)`}},
		{"ErrBadLink", []string{"return_policy: https://example.com/returns", "return_policy: ftp://x"},
			[]string{`policy.yaml: links.return_policy: must be an https URL or a path under /static/ (got "ftp://x") (line 8)`}},
		{"ErrLinkOutsideStatic", []string{"/static/legal/support.html", "/static/../secret"},
			[]string{`policy.yaml: links.support: must be an https URL or a path under /static/ (got "/static/../secret") (line 9)`}},
		{"ErrMissingLink", []string{"  privacy_policy: /static/legal/privacy.html\n", ""},
			[]string{"policy.yaml: links.privacy_policy: missing; send an https URL or a path under /static/"}},
		{"ErrReturnWindow", []string{"currency: usd\n", "currency: usd\nreturns:\n  window_days: 400\n  shipping_fee: 4.5\n"},
			[]string{"policy.yaml: returns.shipping_fee: must be a whole number of minor units ≥ 0 (got \"4.5\") (line 6)",
				"policy.yaml: returns.window_days: must be a whole number of days from 0 (no returns) to 365 (got 400) (line 5)"}},
		{"ErrTaxRateNotNumber", []string{`rate: "7.25"`, `rate: "abc"`},
			[]string{`policy.yaml: tax[1].rate: must be a percentage such as "7.25", with at most 6 decimals (got "abc") (line 43)`}},
		{"ErrTaxRateTooHigh", []string{"rate: 19", "rate: 60"},
			[]string{"policy.yaml: tax[2].rate: must be a percentage from 0 to 50 (got 60) (line 45)"}},
		{"ErrTaxRateMissing", []string{`    rate: "5"` + "\n", ""},
			[]string{`policy.yaml: tax[0].rate: missing; send a percentage such as "7.25"`}},
		{"ErrTaxRegion", []string{"region: CA", "region: US-CA"},
			[]string{`policy.yaml: tax[1].region: must be an upper-case ISO 3166-2 subdivision code without the country, such as CA (got "US-CA") (line 42)`}},
		{"ErrDuplicateTax", []string{"    region: CA\n", ""},
			[]string{`policy.yaml: tax[1]: duplicate tax entry for "US" (first at tax[0]) (line 41)`}},
		{"ErrShippingTaxableNotBool", []string{"shipping_taxable: true", "shipping_taxable: maybe"},
			[]string{`policy.yaml: tax[2].shipping_taxable: must be true or false (got "maybe") (line 46)`}},
		{"ErrPercentOffWithoutPercent", []string{`    percent: "10"` + "\n", ""},
			[]string{`policy.yaml: promotions[0].percent: required for kind percent_off: a percentage above 0 and at most 100, such as "10"`}},
		{"ErrPercentOver100", []string{`percent: "10"`, `percent: "150"`},
			[]string{"policy.yaml: promotions[0].percent: must be above 0 and at most 100 (got 150) (line 51)"}},
		{"ErrAmountOffWithPercent", []string{"amount: 500", "amount: 500\n    percent: \"5\""},
			[]string{"policy.yaml: promotions[1].percent: not allowed for kind amount_off; only percent_off takes a percent (line 59)"}},
		{"ErrAmountOffWithoutAmount", []string{"    amount: 500\n", ""},
			[]string{"policy.yaml: promotions[1].amount: required for kind amount_off: a whole number of minor units > 0"}},
		{"ErrUnknownKind", []string{"kind: free_shipping", "kind: bogo"},
			[]string{`policy.yaml: promotions[2].kind: must be percent_off, amount_off or free_shipping (got "bogo") (line 60)`}},
		{"ErrBadStartsAt", []string{"starts_at: 2025-01-01T00:00:00Z", "starts_at: tomorrow"},
			[]string{`policy.yaml: promotions[0].starts_at: must be an RFC 3339 time such as 2025-01-01T00:00:00Z (got "tomorrow") (line 53)`}},
		{"ErrDateWithoutTime", []string{"ends_at: 2030-12-31T23:59:59Z", "ends_at: 2030-12-31"},
			[]string{`policy.yaml: promotions[0].ends_at: must be an RFC 3339 time such as 2025-01-01T00:00:00Z (got "2030-12-31") (line 54)`}},
		{"ErrEndsBeforeStarts", []string{"ends_at: 2030-12-31T23:59:59Z", "ends_at: 2024-12-31T00:00:00Z"},
			[]string{"policy.yaml: promotions[0].ends_at: must be after starts_at (2025-01-01T00:00:00Z) (line 54)"}},
		{"ErrDuplicatePromoCode", []string{"code: FreeShip", "code: welcome10"},
			[]string{`policy.yaml: promotions[2].code: duplicate code "WELCOME10" (first at promotions[0].code); codes are compared case-insensitively (line 59)`}},
		{"ErrPromoCodeFormat", []string{"code: SAVE5", "code: S5"},
			[]string{`policy.yaml: promotions[1].code: must be 3 to 32 letters, digits, _ or - (got "S5") (line 56)`}},
		{"ErrUsageLimitZero", []string{"usage_limit: 1000", "usage_limit: 0"},
			[]string{"policy.yaml: promotions[0].usage_limit: must be a whole number > 0 (got 0) (line 55)"}},
		{"ErrTwoProblems", []string{"name: Test Shop\n", "", "price: 1500", "price: 4.99"},
			[]string{
				`policy.yaml: shipping.zones[0].rates[1].price: must be a whole number of minor units ≥ 0 (got "4.99") (line 25)`,
				"policy.yaml: name: missing",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := edit(t, validYAML(t), tt.edits...)
			p, err := LoadPolicy(strings.NewReader(src), "policy.yaml")
			if err == nil {
				t.Fatalf("LoadPolicy succeeded with %+v, want an error", p)
			}
			if p != nil {
				t.Errorf("LoadPolicy returned a policy with an error")
			}
			if diff := cmp.Diff(tt.want, errLines(err)); diff != "" {
				t.Errorf("error lines mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadPolicyNotAPolicy(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"ErrEmpty", "# nothing\n", "policy.yaml: empty; expected keys such as name, currency, links and shipping"},
		{"ErrSyntax", "name: [Test\n", "policy.yaml: invalid YAML: line 1: did not find expected ',' or ']'"},
		{"ErrTwoDocuments", "name: a\n---\nname: b\n", "policy.yaml: only one YAML document is allowed (line 2)"},
		{"ErrNotMapping", "- name: a\n", "policy.yaml: must be a mapping of keys such as name: and currency: (line 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadPolicy(strings.NewReader(tt.src), "policy.yaml")
			if diff := cmp.Diff(tt.want, errString(err)); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestLoadPolicyFile(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		p, err := LoadPolicyFile(os.DirFS("testdata"), "valid.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != "Test Shop" {
			t.Errorf("Name = %q, want Test Shop", p.Name)
		}
	})
	t.Run("ErrMissingFile", func(t *testing.T) {
		_, err := LoadPolicyFile(os.DirFS("testdata"), "nope.yaml")
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want one wrapping fs.ErrNotExist", err)
		}
	})
}

// TestDemoPolicy loads the demo merchant's policy built into the binary.
func TestDemoPolicy(t *testing.T) {
	p, err := LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type rate struct {
		ID, Carrier        string
		Price              int64
		FreeOver           *int64
		MinDays, MaxDays   int
		Zone, FirstCountry string
	}
	var got []rate
	for _, z := range p.Shipping.Zones {
		for _, r := range z.Rates {
			got = append(got, rate{r.ID, r.Carrier, r.Price, r.FreeOver, r.MinDays, r.MaxDays, z.ID, z.Countries[0]})
		}
	}
	want := []rate{
		{"us-standard", "USPS", 500, ptr[int64](7500), 3, 5, "us", "US"},
		{"us-express", "UPS", 1500, nil, 1, 2, "us", "US"},
		{"ca-standard", "Canada Post", 1200, nil, 5, 10, "canada", "CA"},
		{"eu-international", "DHL", 1800, nil, 7, 14, "europe", "DE"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shipping rates mismatch (-want +got):\n%s", diff)
	}
	if p.Name != "Northwind Goods" || p.Currency().Code() != "usd" || p.MerchantID != "acct_demo_northwind" || p.PaymentMode != PaymentTest {
		t.Errorf("header = %q %q %q %q", p.Name, p.Currency().Code(), p.MerchantID, p.PaymentMode)
	}
	europe := []string{"DE", "FR", "GB", "IE", "NL", "ES", "IT", "BE", "AT", "SE", "DK", "FI", "PT"}
	if diff := cmp.Diff(europe, p.Shipping.Zones[2].Countries); diff != "" {
		t.Errorf("europe countries mismatch (-want +got):\n%s", diff)
	}
	for _, c := range europe {
		if rate, taxable := p.TaxRate(c, ""); !rate.IsPositive() || !taxable {
			t.Errorf("TaxRate(%s) = %s, %v; want a VAT rate with shipping taxable", c, rate, taxable)
		}
	}
	type tax struct {
		Rate    string
		Taxable bool
	}
	for _, tc := range []struct {
		country, region string
		want            tax
	}{
		{"US", "CA", tax{"7.25", false}}, {"US", "NY", tax{"8.875", true}}, {"US", "WA", tax{"6.5", true}},
		{"US", "TX", tax{"0", false}}, {"CA", "ON", tax{"5", true}}, {"GB", "", tax{"20", true}},
		{"DE", "", tax{"19", true}}, {"FR", "", tax{"20", true}},
	} {
		rate, taxable := p.TaxRate(tc.country, tc.region)
		if diff := cmp.Diff(tc.want, tax{rate.String(), taxable}); diff != "" {
			t.Errorf("TaxRate(%s, %s) mismatch (-want +got):\n%s", tc.country, tc.region, diff)
		}
	}
	want10 := Promotion{Code: "WELCOME10", Title: "Welcome 10% off", Description: "10% off your first order over $25", Kind: PercentOff,
		Percent: decimal.RequireFromString("10"), MinSubtotal: 2500, UsageLimit: ptr(10000)}
	wantPromos := []Promotion{
		want10,
		{Code: "SAVE5", Title: "$5 off", Description: "$5 off orders over $40", Kind: AmountOff, Amount: 500, MinSubtotal: 4000},
		{Code: "FREESHIP", Title: "Free shipping", Description: "Free shipping on orders over $30", Kind: FreeShipping, MinSubtotal: 3000},
	}
	if diff := cmp.Diff(wantPromos, p.Promotions, decimalEqual); diff != "" {
		t.Errorf("promotions mismatch (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		p, err := LoadPolicyFile(os.DirFS("testdata"), "valid.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("Validate() = %v", err)
		}
	})
	t.Run("ErrJoinsAllProblems", func(t *testing.T) {
		p, err := LoadPolicyFile(os.DirFS("testdata"), "valid.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p.Name = ""
		p.Links.Support = "ftp://x"
		p.Tax[0].Rate = decimal.NewFromInt(60)
		err = p.Validate()
		joined, ok := err.(interface{ Unwrap() []error })
		if !ok {
			t.Fatalf("Validate() = %v, want an errors.Join", err)
		}
		var got []string
		for _, e := range joined.Unwrap() {
			got = append(got, e.Error())
		}
		want := []string{
			"name: missing",
			`links.support: must be an https URL or a path under /static/ (got "ftp://x")`,
			"tax[0].rate: must be a percentage from 0 to 50 (got 60)",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Validate() problems mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrEmptyPolicy", func(t *testing.T) {
		want := []string{
			"name: missing", "currency: missing", "merchant_id: missing", `payment_mode: must be test or live (got "")`,
			"links.terms_of_use: missing; send an https URL or a path under /static/",
			"links.privacy_policy: missing; send an https URL or a path under /static/",
			"links.support: missing; send an https URL or a path under /static/",
			"shipping.zones: missing; list at least one zone",
		}
		if diff := cmp.Diff(want, errLines(new(Policy).Validate())); diff != "" {
			t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
		}
	})
}

func testPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := LoadPolicyFile(os.DirFS("testdata"), "valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTaxRate(t *testing.T) {
	p := testPolicy(t)
	tests := []struct {
		name, country, region string
		wantRate              string
		wantTaxable           bool
	}{
		{"RegionWinsOverCountry", "US", "CA", "7.25", false},
		{"RegionCaseInsensitive", "us", "ca", "7.25", false},
		{"OtherRegionGetsCountry", "US", "NY", "5", false},
		{"NoRegionGetsCountry", "US", "", "5", false},
		{"ShippingTaxable", "DE", "BY", "19", true},
		{"NoEntryIsZero", "FR", "", "0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rate, taxable := p.TaxRate(tt.country, tt.region)
			if diff := cmp.Diff([]any{tt.wantRate, tt.wantTaxable}, []any{rate.String(), taxable}); diff != "" {
				t.Errorf("TaxRate(%q, %q) mismatch (-want +got):\n%s", tt.country, tt.region, diff)
			}
		})
	}
	t.Run("RegionWinsWhateverTheOrder", func(t *testing.T) {
		q := *p
		q.Tax = []TaxRule{p.Tax[1], p.Tax[0]}
		if rate, _ := q.TaxRate("US", "CA"); rate.String() != "7.25" {
			t.Errorf("TaxRate(US, CA) = %s, want 7.25", rate)
		}
	})
}

func TestPromotion(t *testing.T) {
	p := testPolicy(t)
	for _, tt := range []struct{ code, want string }{
		{"WELCOME10", "WELCOME10"}, {"welcome10", "WELCOME10"}, {"freeship", "FreeShip"},
		{"FREESHIP", "FreeShip"}, {"SaVe5", "SAVE5"}, {"NOPE", ""}, {"", ""},
	} {
		got := ""
		if pr, ok := p.Promotion(tt.code); ok {
			got = pr.Code
		}
		if got != tt.want {
			t.Errorf("Promotion(%q) = %q, want %q", tt.code, got, tt.want)
		}
	}
}

func TestZone(t *testing.T) {
	p := testPolicy(t)
	for _, tt := range []struct{ country, want string }{
		{"US", "us"}, {"us", "us"}, {"FR", "europe"}, {"JP", ""}, {"", ""},
	} {
		got := ""
		if z, ok := p.Zone(tt.country); ok {
			got = z.ID
		}
		if got != tt.want {
			t.Errorf("Zone(%q) = %q, want %q", tt.country, got, tt.want)
		}
	}
}

func TestCurrency(t *testing.T) {
	p := testPolicy(t)
	if got := p.Currency(); got != money.MustLookup("usd") {
		t.Errorf("Currency() = %q, want usd", got.Code())
	}
	if got := (&Policy{CurrencyCode: "xyz"}).Currency(); got != (money.Currency{}) {
		t.Errorf("Currency() of an invalid policy = %q, want the zero Currency", got.Code())
	}
}

func TestCountries(t *testing.T) {
	if len(countries) != 249 {
		t.Errorf("%d country codes, want 249", len(countries))
	}
	for c, want := range map[string]bool{"US": true, "GB": true, "NO": true, "AX": true, "SS": true,
		"XK": false, "UK": false, "EU": false, "us": false, "": false} {
		if got := isCountry(c); got != want {
			t.Errorf("isCountry(%q) = %v, want %v", c, got, want)
		}
	}
}
