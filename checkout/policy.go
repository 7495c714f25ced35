package checkout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/mail"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

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

// Validate checks the policy and returns every problem found, joined with
// errors.Join, each naming its key path. LoadPolicy runs the same checks.
func (p *Policy) Validate() error {
	var errs []error
	for _, e := range p.problems() {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// Descriptions shared by decoding and validation messages.
const (
	minorUnits = "a whole number of minor units ≥ 0"
	positive   = "a whole number of minor units > 0"
	days       = "a whole number of business days from 0 to 60"
)

var (
	regionRE = regexp.MustCompile(`^[A-Z0-9]{1,3}$`)
	codeRE   = regexp.MustCompile(`^[A-Z0-9_-]{3,32}$`)
	fifty    = decimal.NewFromInt(50)
	hundred  = decimal.NewFromInt(100)
)

// problems lists what is wrong with p.
func (p *Policy) problems() []*keyError {
	var v validator
	v.text("name", p.Name)
	if n := utf8.RuneCountInString(p.Name); n > 80 {
		v.add("name", "must be at most 80 characters (got %d)", n)
	}
	if v.text("currency", p.CurrencyCode) {
		if _, err := money.Lookup(p.CurrencyCode); err != nil {
			v.add("currency", "%s", strings.TrimPrefix(err.Error(), "money: "))
		}
	}
	v.text("merchant_id", p.MerchantID)
	if p.PaymentMode != PaymentTest && p.PaymentMode != PaymentLive {
		v.add("payment_mode", "must be test or live (got %q)", p.PaymentMode)
	}
	v.cardBrands(p.CardBrands)
	v.paymentSheet(p.PaymentSheet)
	v.link("links.terms_of_use", p.Links.TermsOfUse)
	v.link("links.privacy_policy", p.Links.PrivacyPolicy)
	if p.Links.ReturnPolicy != "" { // none: the shop's page made from returns:
		v.link("links.return_policy", p.Links.ReturnPolicy)
	}
	v.link("links.support", p.Links.Support)
	v.zones(p.Shipping.Zones)
	v.taxes(p.Tax)
	v.taxDisplay(p.TaxDisplay)
	v.promotions(p.Promotions)
	v.limits(p.Limits, p.Sessions)
	v.emails(p.Emails)
	rp := p.Returns.Problems()
	for _, key := range slices.Sorted(maps.Keys(rp)) {
		v.add("returns."+key, "%s", rp[key])
	}
	return v.errs
}

// emails checks the addresses of the buyer's emails.
func (v *validator) emails(e Emails) {
	if e.From == "" && (e.Support != "" || e.StaffCopy != "") {
		v.add("emails.from", "missing; the shop sends emails only from an address, such as \"Northwind Goods <orders@example.com>\"")
	}
	if e.From != "" && e.Support == "" {
		v.add("emails.support", "missing; send the address buyers' replies go to, such as help@example.com")
	}
	for _, f := range []struct{ at, s string }{{"emails.from", e.From}, {"emails.support", e.Support}, {"emails.staff_copy", e.StaffCopy}} {
		if f.s == "" {
			continue
		}
		if _, err := mail.ParseAddress(f.s); err != nil || strings.ContainsAny(f.s, "\r\n") {
			v.add(f.at, "must be an email address such as help@example.com or \"Northwind Goods <help@example.com>\" (got %q)", f.s)
		}
	}
}

type validator struct{ errs []*keyError }

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, &keyError{path: path, msg: fmt.Sprintf(format, args...)})
}

// text reports a missing required text and returns whether there is one.
func (v *validator) text(path, s string) bool {
	if strings.TrimSpace(s) == "" {
		v.add(path, "missing")
		return false
	}
	return true
}

func (v *validator) link(at, s string) {
	u, err := url.Parse(s)
	switch {
	case s == "":
		v.add(at, "missing; send an https URL or a path under /static/")
	case strings.HasPrefix(s, "/static/") && path.Clean(s) == s && !strings.ContainsAny(s, "?# "):
	case err == nil && u.Scheme == "https" && u.Host != "":
	default:
		v.add(at, "must be an https URL or a path under /static/ (got %q)", s)
	}
}

func (v *validator) country(path, c string) bool {
	switch {
	case c == "":
		v.add(path, "missing; send an ISO 3166-1 alpha-2 code such as US")
	case isCountry(c):
		return true
	case isCountry(strings.ToUpper(c)):
		v.add(path, "must be upper-case: write %q (got %q)", strings.ToUpper(c), c)
	default:
		v.add(path, "unknown country %q; send an ISO 3166-1 alpha-2 code such as US", c)
	}
	return false
}

// unique reports a value already seen at another key.
func (v *validator) unique(seen map[string]string, at, what, val, hint string) {
	if first, dup := seen[val]; dup {
		v.add(at, "duplicate %s %q (first at %s)%s", what, val, first, hint)
	} else {
		seen[val] = at
	}
}

func (v *validator) zones(zones []Zone) {
	if len(zones) == 0 {
		v.add("shipping.zones", "missing; list at least one zone")
	}
	zoneIDs, countryAt := map[string]string{}, map[string]string{}
	for i, z := range zones {
		zp := fmt.Sprintf("shipping.zones[%d]", i)
		if v.text(zp+".id", z.ID) {
			v.unique(zoneIDs, zp+".id", "zone id", z.ID, "")
		}
		if len(z.Countries) == 0 {
			v.add(zp+".countries", "missing; list ISO 3166-1 alpha-2 codes such as [US]")
		}
		for j, c := range z.Countries {
			if cp := fmt.Sprintf("%s.countries[%d]", zp, j); v.country(cp, c) {
				v.unique(countryAt, cp, "country", c, "; a country may be in at most one zone")
			}
		}
		if len(z.Rates) == 0 {
			v.add(zp+".rates", "missing; list at least one shipping rate")
		}
		rateIDs := map[string]string{}
		for j, r := range z.Rates {
			rp := fmt.Sprintf("%s.rates[%d].", zp, j)
			if v.text(rp+"id", r.ID) {
				v.unique(rateIDs, rp+"id", "rate id", r.ID, "; rate ids must be unique within a zone")
			}
			v.text(rp+"title", r.Title)
			v.atLeast(rp+"price", r.Price, 0, minorUnits)
			v.atMost(rp+"price", r.Price)
			if r.FreeOver != nil {
				v.atLeast(rp+"free_over", *r.FreeOver, 0, minorUnits)
				v.atMost(rp+"free_over", *r.FreeOver)
			}
			v.atLeast(rp+"min_days", int64(r.MinDays), 0, days)
			v.atLeast(rp+"max_days", int64(r.MaxDays), 0, days)
			if r.MaxDays > 60 {
				v.add(rp+"max_days", "must be %s (got %d)", days, r.MaxDays)
			} else if r.MinDays > r.MaxDays {
				v.add(rp+"min_days", "must be at most max_days (got %d > %d)", r.MinDays, r.MaxDays)
			}
		}
	}
}

// maxAmount bounds every amount of the policy, in minor units (a billion
// dollars), far below where arithmetic on amounts could overflow.
const maxAmount = 100_000_000_000

// atMost reports an amount above maxAmount.
func (v *validator) atMost(at string, n int64) {
	if n > maxAmount {
		v.add(at, "must be at most %d minor units (got %d)", int64(maxAmount), n)
	}
}

// atLeast reports a number below min.
func (v *validator) atLeast(at string, n, min int64, desc string) {
	if n < min {
		v.add(at, "must be %s (got %d)", desc, n)
	}
}

func (v *validator) taxes(rules []TaxRule) {
	seen := map[string]string{}
	for i, t := range rules {
		tp := fmt.Sprintf("tax[%d]", i)
		v.country(tp+".country", t.Country)
		if t.Region != "" && !regionRE.MatchString(t.Region) {
			v.add(tp+".region", "must be an upper-case ISO 3166-2 subdivision code without the country, such as CA (got %q)", t.Region)
		}
		if t.Rate.IsNegative() || t.Rate.GreaterThan(fifty) {
			v.add(tp+".rate", "must be a percentage from 0 to 50 (got %s)", t.Rate)
		}
		v.unique(seen, tp, "tax entry for", strings.TrimSuffix(t.Country+"-"+t.Region, "-"), "")
	}
}

func (v *validator) promotions(promos []Promotion) {
	codes := map[string]string{}
	for i, pr := range promos {
		pp := fmt.Sprintf("promotions[%d].", i)
		switch code := strings.ToUpper(pr.Code); {
		case !v.text(pp+"code", pr.Code):
		case !codeRE.MatchString(code):
			v.add(pp+"code", "must be 3 to 32 letters, digits, _ or - (got %q)", pr.Code)
		default:
			v.unique(codes, pp+"code", "code", code, "; codes are compared case-insensitively")
		}
		if pr.Kind != PercentOff && !pr.Percent.IsZero() {
			v.add(pp+"percent", "not allowed for kind %s; only percent_off takes a percent", pr.Kind)
		}
		if pr.Kind != AmountOff && pr.Amount != 0 {
			v.add(pp+"amount", "not allowed for kind %s; only amount_off takes an amount", pr.Kind)
		}
		switch {
		case pr.Kind == PercentOff && !pr.Percent.IsPositive():
			v.add(pp+"percent", `required for kind percent_off: a percentage above 0 and at most 100, such as "10"`)
		case pr.Kind == PercentOff && pr.Percent.GreaterThan(hundred):
			v.add(pp+"percent", "must be above 0 and at most 100 (got %s)", pr.Percent)
		case pr.Kind == AmountOff && pr.Amount == 0:
			v.add(pp+"amount", "required for kind amount_off: %s", positive)
		case pr.Kind == AmountOff:
			v.atLeast(pp+"amount", pr.Amount, 1, positive)
			v.atMost(pp+"amount", pr.Amount)
		case pr.Kind == "":
			v.add(pp+"kind", "missing; send percent_off, amount_off or free_shipping")
		case pr.Kind != PercentOff && pr.Kind != FreeShipping:
			v.add(pp+"kind", "must be percent_off, amount_off or free_shipping (got %q)", pr.Kind)
		}
		v.atLeast(pp+"min_subtotal", pr.MinSubtotal, 0, minorUnits)
		v.atMost(pp+"min_subtotal", pr.MinSubtotal)
		if !pr.StartsAt.IsZero() && !pr.EndsAt.IsZero() && !pr.StartsAt.Before(pr.EndsAt) {
			v.add(pp+"ends_at", "must be after starts_at (%s)", pr.StartsAt.Format(time.RFC3339))
		}
		if len(pr.Title) > maxPromoTitleLen {
			v.add(pp+"title", "must be at most %d characters (got %d)", maxPromoTitleLen, len(pr.Title))
		}
		if pr.UsageLimit != nil && *pr.UsageLimit <= 0 {
			v.add(pp+"usage_limit", "must be a whole number > 0 (got %d)", *pr.UsageLimit)
		}
	}
}
