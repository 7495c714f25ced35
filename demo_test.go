package shop_test

import (
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"shop"
	"shop/catalog"
	"shop/checkout"
)

// TestDemoCatalog checks the demo merchant's catalog as it is embedded: enough
// products in enough categories to browse, an image for each that the shop
// serves itself, and variants told apart by their options, with prices and
// stock of their own.
func TestDemoCatalog(t *testing.T) {
	r, err := shop.Demo.Open("catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := catalog.ReadFile(r)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := checkout.LoadPolicyFile(shop.Demo, "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(policy.Currency().Code()); err != nil {
		t.Fatalf("the demo catalog does not validate against the demo policy's currency:\n%v", err)
	}

	categories := map[string]int{}
	optionNames := map[string]int{} // products offering each option
	var pricedApart, stockApart, bothOptions int
	for _, p := range f.Products {
		categories[p.Category]++
		if len(strings.TrimSpace(p.Description)) < 80 {
			t.Errorf("%s: a description of %d characters; write one a buyer would read", p.ID, len(p.Description))
		}

		images := p.Images
		if len(images) == 0 {
			t.Errorf("%s: no image", p.ID)
		}
		for _, v := range p.Variants {
			if v.Image != "" {
				images = append(images, v.Image)
			}
		}
		for _, img := range images {
			checkStatic(t, p.ID, img)
		}

		names := map[string]bool{}
		combos := map[string]string{}
		prices, stocks := map[int64]bool{}, map[int64]bool{}
		for _, v := range p.Variants {
			prices[*v.Price], stocks[*v.Stock] = true, true
			for name := range v.Options {
				names[name] = true
			}
			if len(p.Variants) == 1 {
				continue
			}
			if len(v.Options) == 0 {
				t.Errorf("%s: variant %s has no options to tell it from the product's other variants", p.ID, v.ID)
			}
			combo := fmt.Sprint(v.Options) // fmt sorts map keys
			if other, dup := combos[combo]; dup {
				t.Errorf("%s: variants %s and %s have the same options %s", p.ID, other, v.ID, combo)
			}
			combos[combo] = v.ID
		}
		for name := range names {
			optionNames[name]++
		}
		if names["Size"] && names["Colour"] {
			bothOptions++
		}
		if len(prices) > 1 {
			pricedApart++
		}
		if len(stocks) > 1 {
			stockApart++
		}
	}

	if len(f.Products) < 40 {
		t.Errorf("%d products, want at least 40", len(f.Products))
	}
	if len(categories) < 5 {
		t.Errorf("%d categories (%v), want at least 5", len(categories), slices.Sorted(maps.Keys(categories)))
	}
	for c, n := range categories {
		if n < 3 {
			t.Errorf("category %s holds %d products; a category to browse needs at least 3", c, n)
		}
	}
	if optionNames["Size"] < 5 || optionNames["Colour"] < 5 || bothOptions < 1 {
		t.Errorf("%d products have sizes, %d colours, %d both; want at least 5, 5 and 1", optionNames["Size"], optionNames["Colour"], bothOptions)
	}
	if pricedApart < 5 {
		t.Errorf("%d products price their variants differently; want at least 5", pricedApart)
	}
	if stockApart < 10 {
		t.Errorf("%d products have variants with different stock; want at least 10", stockApart)
	}
}

// checkStatic fails unless ref is a path under /static/ to a non-empty file
// that the shop serves from its embedded demo files: the demo needs no internet.
func checkStatic(t *testing.T, product, ref string) {
	t.Helper()
	name, ok := strings.CutPrefix(ref, "/static/")
	if !ok {
		t.Errorf("%s: image %q is not one of the shop's own files (/static/…)", product, ref)
		return
	}
	info, err := fs.Stat(shop.Demo, "static/"+name)
	switch {
	case err != nil:
		t.Errorf("%s: image %s is not in the embedded static files: %v", product, ref, err)
	case info.IsDir() || info.Size() == 0:
		t.Errorf("%s: image %s is empty or a directory", product, ref)
	}
}
