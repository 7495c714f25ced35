package checkout

// The checks of a policy: every problem found, each naming its key path
// (LoadPolicy and Validate run them).

import (
	"errors"
	"fmt"
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

	"shop/money"
)

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
