package catalog

import (
	"strings"
	"testing"
)

// TestSearchTextPlural: "1 product", never "1 products".
func TestSearchTextPlural(t *testing.T) {
	one := searchText("mug", &Page{Products: []ProductSummary{{ID: "mug", Title: "Mug"}}, Total: 1})
	two := searchText("", &Page{Products: []ProductSummary{{ID: "a"}, {ID: "b"}}, Total: 2})
	if !strings.HasPrefix(one, `1 product for "mug":`) || !strings.HasPrefix(two, "2 products:") {
		t.Errorf("texts: %q, %q", one, two)
	}
}
