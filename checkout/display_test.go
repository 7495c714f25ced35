package checkout

import (
	"strings"
	"testing"

	"shop/contract"
)

// TestDisplay: the built-in conventions per country, the policy's
// overrides (a region's over its country's) and the home country before
// an address is known.
func TestDisplay(t *testing.T) {
	p, err := LoadPolicy(strings.NewReader(validYAML(t)+`
tax_display:
  home_country: DE
  countries:
    - country: CA
      region: QC
      prices_include_tax: true
      tax_name: sales_tax
    - country: US
      prices_include_tax: true
      tax_name: sales_tax
`), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := func(name contract.TaxName) Display { return Display{PricesIncludeTax: true, TaxName: name} }
	tests := []struct {
		country, region string
		want            Display
	}{
		{"", "", in(contract.TaxVAT)}, // home: DE
		{"DE", "", in(contract.TaxVAT)},
		{"GB", "", in(contract.TaxVAT)},
		{"CH", "", in(contract.TaxVAT)},
		{"NO", "", in(contract.TaxVAT)},
		{"JP", "", in(contract.TaxConsumption)},
		{"AU", "", in(contract.TaxGST)},
		{"NZ", "", in(contract.TaxGST)},
		{"CA", "ON", Display{TaxName: contract.TaxGST}},
		{"CA", "QC", in(contract.TaxSales)},
		{"US", "NY", in(contract.TaxSales)},
	}
	for _, tt := range tests {
		if got := p.Display(tt.country, tt.region); got != tt.want {
			t.Errorf("Display(%q, %q) = %+v, want %+v", tt.country, tt.region, got, tt.want)
		}
	}
	plain, err := LoadPolicy(strings.NewReader(validYAML(t)), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.Display("US", "CA"); got != (Display{TaxName: contract.TaxSales}) {
		t.Errorf("built-in US = %+v, want tax excluded, sales_tax", got)
	}
	if got, want := plain.Display("", ""), plain.Display(plain.Shipping.Zones[0].Countries[0], ""); got != want {
		t.Errorf("home by default = %+v, want the first shipped country's %+v", got, want)
	}
	if got, want := plain.displayFor(&Address{Country: "ZZ"}), plain.Display("", ""); got != want {
		t.Errorf("an unshipped country shows %+v, want the home country's %+v", got, want)
	}
}

// TestTaxDisplayPolicyErrors: a bad tax_display is refused naming the key.
func TestTaxDisplayPolicyErrors(t *testing.T) {
	_, err := LoadPolicy(strings.NewReader(validYAML(t)+`
tax_display:
  home_country: germany
  countries:
    - country: DE
      tax_name: mwst
    - country: DE
      tax_name: vat
`), "policy.yaml")
	for _, want := range []string{"tax_display.home_country", "tax_display.countries[0].tax_name", "tax_display.countries[1]: repeats"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to name %s", err, want)
		}
	}
}
