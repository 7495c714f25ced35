package catalog_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/catalog"
	"shop/database/dbtest"
	"shop/money"
)

// TestSearchAfterAnotherImport checks that a replica answers a search from
// the catalog as it is, not from what it learned of the search's words
// before another replica's import changed them: "leath" is first the one
// word "leather", then also "leathery"; "sued" is first "suede", then only
// "suedette" (a page of the word it was would be empty).
func TestSearchAfterAnotherImport(t *testing.T) {
	ctx := context.Background()
	product := func(id, title string) catalog.ProductRecord {
		price, stock := int64(2500), int64(5)
		return catalog.ProductRecord{ID: id, Title: title, Category: "Bags", Images: []string{"/static/products/" + id + ".svg"},
			Variants: []catalog.VariantRecord{{ID: id + "-0", Title: "One size", Options: map[string]string{}, Price: &price, Stock: &stock}}}
	}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		b := catalog.New(db, money.MustLookup("usd"), nil)
		first := &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{product("belt", "Leather Belt"), product("boot", "Suede Boot"), product("tote", "Canvas Tote")}}
		if err := b.Import(ctx, first, nil); err != nil {
			t.Fatal(err)
		}
		queries := []struct {
			text          string
			before, after []string // the total, then the products' ids
		}{
			{"leath", []string{"1", "belt"}, []string{"2", "belt", "belt-bag"}},
			{"leath belt", []string{"1", "belt"}, []string{"2", "belt", "belt-bag"}},
			{"belt leath", []string{"1", "belt"}, []string{"2", "belt", "belt-bag"}},
			{"sued", []string{"1", "boot"}, []string{"1", "boot"}},
			{"sued boot", []string{"1", "boot"}, []string{"1", "boot"}},
		}
		// A replica of its own for each query: what one learns or forgets
		// of a word is not another's.
		replicas := make([]*catalog.Catalog, len(queries))
		ids := func(i int) []string {
			t.Helper()
			if replicas[i] == nil {
				replicas[i] = catalog.New(db, money.MustLookup("usd"), nil)
			}
			q := queries[i].text
			page, err := replicas[i].Search(ctx, catalog.Query{Text: q, Limit: 10})
			if err != nil {
				t.Fatalf("%q: %v", q, err)
			}
			out := []string{fmt.Sprint(page.Total)}
			for _, p := range page.Products {
				out = append(out, p.ID)
			}
			return out
		}
		for i, q := range queries {
			for range 2 { // the second from what the first learned
				if diff := cmp.Diff(q.before, ids(i)); diff != "" {
					t.Errorf("before the import, %q (-want +got):\n%s", q.text, diff)
				}
			}
		}
		second := &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{product("belt-bag", "Leathery Belt Bag"), product("boot", "Suedette Boot")}}
		if err := b.Import(ctx, second, nil); err != nil {
			t.Fatal(err)
		}
		for i, q := range queries {
			if diff := cmp.Diff(q.after, ids(i)); diff != "" {
				t.Errorf("after the other replica's import, %q (-want +got):\n%s", q.text, diff)
			}
		}
	})
}
