package contract

import (
	"slices"
	"testing"
)

// TestAddressLines: each country's own order.
func TestAddressLines(t *testing.T) {
	tests := []struct {
		name string
		a    Address
		want []string
	}{
		{"US", Address{Name: "Ada", LineOne: "1 Market St", City: "San Francisco", State: "CA", Country: "US", PostalCode: "94105"},
			[]string{"Ada", "1 Market St", "San Francisco, CA 94105", "United States"}},
		{"DE", Address{Name: "Jo", LineOne: "Invalidenstr. 1", LineTwo: "2. OG", City: "Berlin", Country: "DE", PostalCode: "10115"},
			[]string{"Jo", "Invalidenstr. 1", "2. OG", "10115 Berlin", "Germany"}},
		{"JP", Address{Name: "山田太郎", LineOne: "千代田1-1", City: "千代田区", State: "東京都", Country: "JP", PostalCode: "100-0001"},
			[]string{"〒100-0001", "東京都 千代田区", "千代田1-1", "山田太郎", "Japan"}},
		{"GB", Address{Name: "Al", LineOne: "10 Downing St", City: "London", Country: "GB", PostalCode: "SW1A 2AA"},
			[]string{"Al", "10 Downing St", "London", "SW1A 2AA", "United Kingdom"}},
		{"AU", Address{Name: "Bo", LineOne: "1 George St", City: "Sydney", State: "NSW", Country: "AU", PostalCode: "2000"},
			[]string{"Bo", "1 George St", "Sydney NSW 2000", "Australia"}},
	}
	names := map[string]string{"US": "United States", "DE": "Germany", "JP": "Japan", "GB": "United Kingdom", "AU": "Australia"}
	for _, tt := range tests {
		if got := tt.a.Lines(names[tt.a.Country]); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Lines = %q, want %q", tt.name, got, tt.want)
		}
	}
}
