package contract

import "strings"

// Lines are the address as the post of its country writes it, one line
// each, with country (the country's name in the reader's language, or its
// code) last where the country's order puts it:
//
//   - US, CA, AU: the city, the state and the ZIP on one line
//     ("San Francisco, CA 94105"; Australia without the comma);
//   - GB and IE: the town, then the postcode on a line of its own;
//   - JP: from the largest to the smallest, the postal code first
//     ("〒100-0001", the prefecture and city, the street, the name);
//   - elsewhere (most of Europe): the postal code before the city
//     ("10115 Berlin").
func (a Address) Lines(country string) []string {
	var out []string
	add := func(parts ...string) {
		if s := strings.TrimSpace(strings.Join(parts, "")); s != "" {
			out = append(out, s)
		}
	}
	space := func(a, b string) string { return strings.TrimSpace(a + " " + b) }
	switch a.Country {
	case "JP":
		if a.PostalCode != "" {
			add("〒", a.PostalCode)
		}
		add(space(a.State, a.City))
		add(a.LineOne)
		add(a.LineTwo)
		add(a.Name)
		add(country)
		add(a.PhoneNumber)
		return out
	}
	add(a.Name)
	add(a.LineOne)
	add(a.LineTwo)
	switch a.Country {
	case "US", "CA":
		city := a.City
		if a.State != "" {
			city += ", " + a.State
		}
		add(space(city, a.PostalCode))
	case "AU":
		add(space(space(a.City, a.State), a.PostalCode))
	case "GB", "IE":
		add(a.City)
		add(a.State)
		add(a.PostalCode)
	default:
		add(space(a.PostalCode, a.City))
		add(a.State)
	}
	add(country)
	add(a.PhoneNumber)
	return out
}
