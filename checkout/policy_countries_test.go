package checkout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShippingCountries: a session lists every zone's countries once,
// upper-case and sorted, for the checkout widget's country list.
func TestShippingCountries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		zones []Zone
		want  []string
	}{
		{"None", nil, nil},
		{"OneZone", []Zone{{Countries: []string{"US"}}}, []string{"US"}},
		{"SortedUpperUnique", []Zone{{Countries: []string{"gb", "DE"}}, {Countries: []string{"CA", "de"}}}, []string{"CA", "DE", "GB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Policy{Shipping: Shipping{Zones: tc.zones}}
			if diff := cmp.Diff(tc.want, p.ShippingCountries()); diff != "" {
				t.Errorf("ShippingCountries (-want +got):\n%s", diff)
			}
		})
	}
}
