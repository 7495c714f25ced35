package checkout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.yaml.in/yaml/v3"

	"shop/money"
	"shop/orders"
)

// Policy is the merchant policy: who sells, in which currency, where to, at
// which shipping price, with which taxes and promotions. [LoadPolicy] reads it
// from one YAML file whose keys are the snake_case names of the fields.
// Amounts are int64 minor units of the shop currency. A loaded Policy is
// read-only.
type Policy struct {
	Name         string      `yaml:"name"`         // shown to buyers, ≤ 80 characters
	CurrencyCode string      `yaml:"currency"`     // ISO 4217 code of every amount, e.g. "usd"
	MerchantID   string      `yaml:"merchant_id"`  // the payment provider's id of the merchant
	PaymentMode  PaymentMode `yaml:"payment_mode"` // LoadPolicy defaults it to test
	// ExternalCheckout, when true, has the checkout widget always pay through
	// create_payment_link's page, even in hosts with a payment sheet.
	ExternalCheckout bool `yaml:"external_checkout"`
	// PaymentSheet is the host's payment sheet: off unless enabled.
	PaymentSheet PaymentSheet `yaml:"payment_sheet"`
	// ProductCheckout, when true, offers ChatGPT's product checkout
	// conversion contract on /mcp: the checkout_session tool and its
	// template ui://widget/checkout-session.html (docs/connecting.md), for a
	// merchant ChatGPT approved and whose product feed it reads.
	ProductCheckout bool `yaml:"product_checkout"`
	// CardBrands are the card brands the payment sheet offers (Stripe's
	// names: visa, mastercard, amex, discover, …); AllowedCardBrands gives
	// the default when left out.
	CardBrands []string  `yaml:"card_brands"`
	Links      Links     `yaml:"links"`    // legal and support pages
	Shipping   Shipping  `yaml:"shipping"` // where to and at which price
	Tax        []TaxRule `yaml:"-"`        // YAML key "tax", decoded by LoadPolicy
	// TaxDisplay says where prices are shown with tax included.
	TaxDisplay TaxDisplay  `yaml:"tax_display"`
	Promotions []Promotion `yaml:"-"`        // YAML key "promotions", decoded by LoadPolicy
	Limits     Limits      `yaml:"limits"`   // what one buyer may hold; defaults when left out
	Sessions   Sessions    `yaml:"sessions"` // how long sessions live and are kept
	Emails     Emails      `yaml:"emails"`   // the buyer's emails' addresses; none without From
	// Returns is the return policy (docs/returns.md); defaults when left out.
	Returns orders.ReturnPolicy `yaml:"returns"`
}

// Emails are the addresses of the emails orders send their buyers (sent
// only when the shop is also given an SMTP server). Each is an RFC 5322
// address, "Name <addr@example.com>" or "addr@example.com".
type Emails struct {
	// From is the sender of every email; empty: the shop sends none.
	From string `yaml:"from"`
	// Support is where buyers' replies go (Reply-To); required with From.
	Support string `yaml:"support"`
	// StaffCopy, when set, receives a copy of every new order's confirmation.
	StaffCopy string `yaml:"staff_copy"`
}

// Links are the merchant's pages shown in checkout. Each is an https URL or a
// path under /static/, which the shop serves and resolves against its public
// URL.
type Links struct {
	TermsOfUse    string `yaml:"terms_of_use"`   // terms of use
	PrivacyPolicy string `yaml:"privacy_policy"` // privacy policy
	ReturnPolicy  string `yaml:"return_policy"`  // return and refund policy
	Support       string `yaml:"support"`        // where buyers get help
}

// Shipping holds the shipping zones; a country is in at most one zone.
type Shipping struct {
	Zones []Zone `yaml:"zones"` // at least one
}

// Zone is a set of countries that share shipping rates.
type Zone struct {
	ID        string         `yaml:"id"`        // unique in the policy
	Name      string         `yaml:"name"`      // for the merchant, e.g. "Europe"
	Countries []string       `yaml:"countries"` // upper-case ISO 3166-1 alpha-2 codes
	Rates     []ShippingRate `yaml:"rates"`     // at least one
}

// ShippingRate is one shipping option of a zone. MinDays and MaxDays bound the
// delivery time in business days: 0 ≤ MinDays ≤ MaxDays ≤ 60.
type ShippingRate struct {
	ID       string `yaml:"id"`       // unique in the zone
	Title    string `yaml:"title"`    // e.g. "Standard"
	Subtitle string `yaml:"subtitle"` // optional, e.g. "3–5 business days"
	Carrier  string `yaml:"carrier"`  // optional, e.g. "USPS"
	Price    int64  `yaml:"price"`    // minor units, ≥ 0
	// FreeOver, when set, makes the rate free for a discounted items subtotal ≥ *FreeOver.
	FreeOver *int64 `yaml:"free_over"`
	MinDays  int    `yaml:"min_days"` // fastest delivery, business days
	MaxDays  int    `yaml:"max_days"` // slowest delivery, business days
}

// TaxRule is the tax rate of a country, or of one of its regions when Region
// (an ISO 3166-2 subdivision code without the country, e.g. "CA") is set.
type TaxRule struct {
	Country         string          `yaml:"country"`          // upper-case ISO 3166-1 alpha-2 code
	Region          string          `yaml:"region"`           // optional ISO 3166-2 subdivision code, e.g. "CA"
	Rate            decimal.Decimal `yaml:"-"`                // percent, 0 ≤ Rate ≤ 50; YAML key "rate", a string such as "7.25"
	ShippingTaxable bool            `yaml:"shipping_taxable"` // whether shipping is taxed at Rate too
}

// PromotionKind is what a promotion takes off.
type PromotionKind string

// Promotion kinds.
const (
	PercentOff   PromotionKind = "percent_off"   // Percent % off the items subtotal
	AmountOff    PromotionKind = "amount_off"    // Amount minor units off the items subtotal
	FreeShipping PromotionKind = "free_shipping" // no shipping cost
)

// Promotion is a code a buyer may enter at checkout. Code is compared
// case-insensitively and matches [A-Z0-9_-]{3,32} once upper-cased. StartsAt
// and EndsAt, when not zero, bound when the code works.
type Promotion struct {
	Code        string          `yaml:"code"`         // what buyers type
	Title       string          `yaml:"title"`        // its name, as agents show an applied discount; the description when empty
	Description string          `yaml:"description"`  // what the code does, for buyers
	Kind        PromotionKind   `yaml:"kind"`         // what it takes off
	Percent     decimal.Decimal `yaml:"-"`            // PercentOff only: 0 < Percent ≤ 100; YAML key "percent"
	Amount      int64           `yaml:"amount"`       // AmountOff only: minor units > 0
	MinSubtotal int64           `yaml:"min_subtotal"` // minor units; 0 means none
	StartsAt    time.Time       `yaml:"-"`            // YAML key "starts_at", RFC 3339
	EndsAt      time.Time       `yaml:"-"`            // YAML key "ends_at", RFC 3339, after StartsAt
	UsageLimit  *int            `yaml:"usage_limit"`  // when set, > 0: how many orders may use the code
}

// maxPromoTitleLen bounds a promotion's title, which agents show.
const maxPromoTitleLen = 100

// ShippingCountries lists the countries of every shipping zone, sorted.
func (p *Policy) ShippingCountries() []string {
	var out []string
	for _, z := range p.Shipping.Zones {
		for _, c := range z.Countries {
			out = append(out, strings.ToUpper(c))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Zone returns the shipping zone of a country (case-insensitive).
func (p *Policy) Zone(country string) (*Zone, bool) {
	country = strings.ToUpper(country)
	for i := range p.Shipping.Zones {
		if slices.Contains(p.Shipping.Zones[i].Countries, country) {
			return &p.Shipping.Zones[i], true
		}
	}
	return nil, false
}

// TaxRate returns the tax percentage for an address (7.25 for 7.25 %, as
// money.Percent takes it) and whether shipping is taxed too. An entry for the region wins over one for the whole country;
// with neither the rate is zero.
func (p *Policy) TaxRate(country, region string) (rate decimal.Decimal, shippingTaxable bool) {
	country, region = strings.ToUpper(country), strings.ToUpper(region)
	var found *TaxRule
	for i, t := range p.Tax {
		if t.Country == country && region != "" && t.Region == region {
			return t.Rate, t.ShippingTaxable
		}
		if t.Country == country && t.Region == "" && found == nil {
			found = &p.Tax[i]
		}
	}
	if found == nil {
		return decimal.Zero, false
	}
	return found.Rate, found.ShippingTaxable
}

// Promotion returns the promotion with the code, compared case-insensitively.
func (p *Policy) Promotion(code string) (*Promotion, bool) {
	for i := range p.Promotions {
		if strings.EqualFold(p.Promotions[i].Code, code) {
			return &p.Promotions[i], true
		}
	}
	return nil, false
}

// Currency returns the shop currency, or the zero Currency for an invalid policy.
func (p *Policy) Currency() money.Currency {
	c, _ := money.Lookup(p.CurrencyCode)
	return c
}

// LoadPolicyFile reads and validates the policy at path in fsys.
func LoadPolicyFile(fsys fs.FS, path string) (*Policy, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadPolicy(f, path)
}

// LoadPolicy reads a policy from YAML and validates it. Unknown keys are
// errors. Every problem is reported, each on its own line as
// "name: key.path: what is wrong (line N)".
func LoadPolicy(r io.Reader, name string) (*Policy, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var root, extra yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	switch err := dec.Decode(&root); {
	case err == io.EOF:
		return nil, fmt.Errorf("%s: empty; expected keys such as name, currency, links and shipping", name)
	case err != nil:
		return nil, fmt.Errorf("%s: invalid YAML: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	case dec.Decode(&extra) != io.EOF:
		return nil, fmt.Errorf("%s: only one YAML document is allowed (line %d)", name, extra.Line)
	}
	if doc := root.Content[0]; doc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: must be a mapping of keys such as name: and currency: (line %d)", name, doc.Line)
	}
	ix := &nodeIndex{}
	ix.walk("", "", nil, root.Content[0])

	var raw rawPolicy
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	var te *yaml.TypeError
	if err := strict.Decode(&raw); errors.As(err, &te) {
		for _, msg := range te.Errors {
			ix.translate(msg)
		}
	} else if err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	p := raw.Policy
	if p.PaymentMode == "" {
		p.PaymentMode = PaymentTest
	}
	for i, t := range raw.Tax {
		t.TaxRule.Rate = ix.percent(fmt.Sprintf("tax[%d].rate", i), t.Rate, true)
		p.Tax = append(p.Tax, t.TaxRule)
	}
	for i, r := range raw.Promotions {
		at := fmt.Sprintf("promotions[%d].", i)
		r.Promotion.Percent = ix.percent(at+"percent", r.Percent, false)
		r.Promotion.StartsAt = ix.timestamp(at+"starts_at", r.StartsAt)
		r.Promotion.EndsAt = ix.timestamp(at+"ends_at", r.EndsAt)
		p.Promotions = append(p.Promotions, r.Promotion)
	}

	// Report every decoding problem, then the validation problems that are
	// not about a key already reported.
	var all []error
	for _, e := range ix.errs {
		all = append(all, e.at(name, ix))
	}
	for _, e := range p.problems() {
		if !ix.moot(e.path) {
			all = append(all, e.at(name, ix))
		}
	}
	if len(all) > 0 {
		return nil, errors.Join(all...)
	}
	return &p, nil
}
