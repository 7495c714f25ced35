package catalog_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/catalog"
	"shop/database/dbtest"
	"shop/money"
)

// fieldsCatalog is a catalog whose words each sit in known fields: "juniper"
// in one field of each of four products, listed in the order that ranking
// must reverse, so that catalog order alone could not pass the test.
func fieldsCatalog() *catalog.File {
	product := func(id, title, category, description string, options ...map[string]string) catalog.ProductRecord {
		p := catalog.ProductRecord{ID: id, Title: title, Category: category, Description: description,
			Images: []string{"/static/products/" + id + ".svg"}}
		if len(options) == 0 {
			options = []map[string]string{{}}
		}
		for k, o := range options {
			price, stock := int64(1000+100*k), int64(5)
			p.Variants = append(p.Variants, catalog.VariantRecord{
				ID: fmt.Sprintf("%s-%d", id, k), Title: fmt.Sprint(o), Options: o, Price: &price, Stock: &stock,
			})
		}
		return p
	}
	return &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{
		product("in-description", "Beeswax Candle", "Home", "Scented with juniper and cedar."),
		product("in-option", "Soy Candle", "Home", "Poured by hand.",
			map[string]string{"Scent": "Juniper"}, map[string]string{"Scent": "Fig"}),
		product("in-category", "Dried Berries", "Juniper", "A bundle for the pantry."),
		product("in-title", "Juniper Candle", "Home", "Poured by hand."),
		product("canvas-tote", "Canvas Tote", "Bags", "Carries a day's things.",
			map[string]string{"Colour": "Natural", "Size": "M"}, map[string]string{"Colour": "Saffron", "Size": "L"}),
		product("trowel", "Hand Trowel", "Garden Tools", "Forged steel, ash handle."),
		product("pruner", "Bypass Pruner", "Garden Tools", "Cuts clean."),
	}}
}

// TestSearchFields checks what a search matches besides titles, variants'
// option values and category words, and that it ranks a title match above
// a category match above an option match above a description match.
func TestSearchFields(t *testing.T) {
	ctx := context.Background()
	results := map[string]map[string][]string{}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := catalog.New(db, money.MustLookup("usd"), nil)
		if err := c.Import(ctx, fieldsCatalog(), nil); err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{}
		results[t.Name()] = got
		cases := []struct {
			name string
			q    catalog.Query
			want []string // in order
		}{
			// "Saffron" is only a colour of one of the tote's variants.
			{"OptionValue", catalog.Query{Text: "saffron"}, []string{"canvas-tote"}},
			{"OptionValuePrefix", catalog.Query{Text: "saff"}, []string{"canvas-tote"}},
			{"OptionValueAndTitle", catalog.Query{Text: "saffron tote"}, []string{"canvas-tote"}},
			{"OptionValueOfNoProduct", catalog.Query{Text: "saffron trowel"}, []string{}},
			// "Garden" is only in the category "Garden Tools".
			{"CategoryWord", catalog.Query{Text: "garden"}, []string{"trowel", "pruner"}},
			{"CategoryWordAndTitle", catalog.Query{Text: "garden pruner"}, []string{"pruner"}},
			// Ranking by field, against catalog order.
			{"RankByField", catalog.Query{Text: "juniper"}, []string{"in-title", "in-category", "in-option", "in-description"}},
			// Every candle has "candle" in its title; "juniper" then ranks
			// them as above, against catalog order.
			{"TitleAboveDescription", catalog.Query{Text: "juniper candle"}, []string{"in-title", "in-option", "in-description"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				p, err := c.Search(ctx, tc.q)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, ids(p)); diff != "" {
					t.Errorf("search %q (-want +got):\n%s", tc.q.Text, diff)
				}
				if p.Total != int64(len(tc.want)) {
					t.Errorf("total %d, want %d", p.Total, len(tc.want))
				}
				got[tc.name] = ids(p)
			})
		}
	})
	if len(results) == 2 {
		var all []map[string][]string
		for _, r := range results {
			all = append(all, r)
		}
		if diff := cmp.Diff(all[0], all[1]); diff != "" {
			t.Errorf("SQLite and PostgreSQL disagree (-one +other):\n%s", diff)
		}
	}
}

// TestSearchDemoFields checks the same on the demo catalog: a colour that
// only a variant names finds its product, and a title match ranks above
// products that only mention the word in their description.
func TestSearchDemoFields(t *testing.T) {
	ctx := context.Background()
	f, err := catalog.ReadFile(mustOpen(t, "../testdata/demo/catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := demo(t, db)
		t.Run("OptionOnlyColour", func(t *testing.T) {
			// "Forest" is a colour of some variants (the enamel mug's
			// "Forest green") and appears in no title, category or
			// description: those products match, tied, in catalog order.
			var want []string
			for _, p := range f.Products {
				for _, text := range []string{p.Title, p.Category, p.Description} {
					if containsFold(text, "forest") {
						t.Fatalf("%s mentions forest outside its options; pick another colour for this test", p.ID)
					}
				}
				if optionsContain(p, "forest") {
					want = append(want, p.ID)
				}
			}
			if !slices.Contains(want, "enamel-camp-mug") {
				t.Fatalf("no forest green enamel mug in the demo catalog; pick another colour for this test")
			}
			p, err := c.Search(ctx, catalog.Query{Text: "forest"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, ids(p)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
		t.Run("TitleAboveDescription", func(t *testing.T) {
			p, err := c.Search(ctx, catalog.Query{Text: "linen", Limit: catalog.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]catalog.ProductRecord{}
			for _, r := range f.Products {
				byID[r.ID] = r
			}
			seenDescriptionOnly, titles := false, 0
			for _, s := range p.Products {
				r := byID[s.ID]
				switch {
				case containsFold(r.Title, "linen"):
					titles++
					if seenDescriptionOnly {
						t.Errorf("%s (linen in its title) ranks below a product with linen only in its description: %v", s.ID, ids(p))
					}
				case !containsFold(r.Category, "linen") && !optionsContain(r, "linen"):
					seenDescriptionOnly = true
				}
			}
			if titles == 0 || !seenDescriptionOnly {
				t.Errorf("want products with linen in the title and others with it only in the description; got %v", ids(p))
			}
		})
	})
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func containsFold(s, word string) bool { return strings.Contains(strings.ToLower(s), word) }

// optionsContain reports whether an option name or value of p's variants
// holds word.
func optionsContain(p catalog.ProductRecord, word string) bool {
	for _, v := range p.Variants {
		for name, value := range v.Options {
			if containsFold(name, word) || containsFold(value, word) {
				return true
			}
		}
	}
	return false
}
