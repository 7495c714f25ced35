package checkout

import (
	"fmt"
	"slices"
	"strings"

	"shop/contract"
)

// Display is how a session's figures are shown (docs/messages.md).
type Display = contract.Display

// TaxDisplay is the policy's say on how prices are shown: with tax included
// (the EU, the UK, Switzerland, Norway, Australia, New Zealand, Japan, …) or
// not (the US, Canada), and what the tax is called, per country or region.
// The built-in conventions (displayDefaults) apply where Countries has no
// entry; HomeCountry's apply before the buyer's address is known.
type TaxDisplay struct {
	// HomeCountry is the shop's own country (ISO 3166-1 alpha-2); default:
	// the first country of the first shipping zone.
	HomeCountry string `yaml:"home_country"`
	// Countries override the built-in conventions; an entry for a region
	// wins over one for its whole country.
	Countries []TaxDisplayRule `yaml:"countries"`
}

// TaxDisplayRule is how prices are shown in one country or region.
type TaxDisplayRule struct {
	Country          string           `yaml:"country"`
	Region           string           `yaml:"region"`             // optional, as in tax:
	PricesIncludeTax bool             `yaml:"prices_include_tax"` // default false
	TaxName          contract.TaxName `yaml:"tax_name"`           // vat, gst, consumption_tax or sales_tax
}

// taxNames are the names a tax may have.
var taxNames = []contract.TaxName{contract.TaxVAT, contract.TaxGST, contract.TaxConsumption, contract.TaxSales}

// displayDefaults are the countries whose convention is not VAT shown
// included, which is the rest of the world's.
var displayDefaults = map[string]Display{
	"US": {PricesIncludeTax: false, TaxName: contract.TaxSales},
	"CA": {PricesIncludeTax: false, TaxName: contract.TaxGST},
	"JP": {PricesIncludeTax: true, TaxName: contract.TaxConsumption},
	"AU": {PricesIncludeTax: true, TaxName: contract.TaxGST},
	"NZ": {PricesIncludeTax: true, TaxName: contract.TaxGST},
	"SG": {PricesIncludeTax: true, TaxName: contract.TaxGST},
	"IN": {PricesIncludeTax: true, TaxName: contract.TaxGST},
	"MY": {PricesIncludeTax: true, TaxName: contract.TaxSales},
}

// Display is how prices are shown to a buyer in country and region (both
// upper case; country "" before an address is known: the home country's).
func (p *Policy) Display(country, region string) Display {
	if country == "" {
		country, region = p.homeCountry(), ""
	}
	var found *TaxDisplayRule
	for i, r := range p.TaxDisplay.Countries {
		if r.Country != country {
			continue
		}
		if r.Region != "" && r.Region == region {
			found = &p.TaxDisplay.Countries[i]
			break
		}
		if r.Region == "" && found == nil {
			found = &p.TaxDisplay.Countries[i]
		}
	}
	if found != nil {
		return Display{PricesIncludeTax: found.PricesIncludeTax, TaxName: found.TaxName}
	}
	if d, ok := displayDefaults[country]; ok {
		return d
	}
	return Display{PricesIncludeTax: true, TaxName: contract.TaxVAT}
}

// displayFor is how prices are shown for a session shipping to a: by its
// country and region when the shop ships there, else the home country's.
func (p *Policy) displayFor(a *Address) Display {
	if a == nil {
		return p.Display("", "")
	}
	country := strings.ToUpper(strings.TrimSpace(a.Country))
	if _, shipped := p.Zone(country); !shipped {
		return p.Display("", "")
	}
	return p.Display(country, strings.ToUpper(strings.TrimSpace(a.State)))
}

// homeCountry is TaxDisplay.HomeCountry, or the first shipped country.
func (p *Policy) homeCountry() string {
	if p.TaxDisplay.HomeCountry != "" {
		return p.TaxDisplay.HomeCountry
	}
	for _, z := range p.Shipping.Zones {
		if len(z.Countries) > 0 {
			return z.Countries[0]
		}
	}
	return ""
}

// taxDisplay checks the policy's tax_display.
func (v *validator) taxDisplay(d TaxDisplay) {
	if d.HomeCountry != "" && !isCountry(d.HomeCountry) {
		v.add("tax_display.home_country", "must be an upper-case ISO 3166-1 alpha-2 code such as US (got %q)", d.HomeCountry)
	}
	seen := map[string]int{}
	for i, r := range d.Countries {
		at := fmt.Sprintf("tax_display.countries[%d]", i)
		if !isCountry(r.Country) {
			v.add(at+".country", "must be an upper-case ISO 3166-1 alpha-2 code such as DE (got %q)", r.Country)
		}
		if r.Region != "" && !regionRE.MatchString(r.Region) {
			v.add(at+".region", "must be 1 to 3 upper-case letters or digits, such as CA (got %q)", r.Region)
		}
		if !slices.Contains(taxNames, r.TaxName) {
			v.add(at+".tax_name", "must be vat, gst, consumption_tax or sales_tax (got %q)", r.TaxName)
		}
		key := r.Country + "-" + r.Region
		if j, dup := seen[key]; dup {
			v.add(at, "repeats tax_display.countries[%d] (%s)", j, key)
		}
		seen[key] = i
	}
}
