package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/database"
	"shop/database/dbtest"
	"shop/money"
)

// demo opens the demo catalog on db.
func demo(t *testing.T, db *gorm.DB) *catalog.Catalog {
	t.Helper()
	c := catalog.New(db, money.MustLookup("usd"), nil)
	seeded, err := c.SeedIfEmpty(context.Background(), os.DirFS("../testdata/demo"), "catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	if !seeded {
		t.Fatal("SeedIfEmpty did not seed an empty catalog")
	}
	return c
}

func ids(p *catalog.Page) []string {
	out := make([]string, len(p.Products))
	for i, s := range p.Products {
		out[i] = s.ID
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestSearch(t *testing.T) {
	ctx := context.Background()
	// results[dialect][case] = ids, to compare the engines at the end.
	results := map[string]map[string][]string{}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := demo(t, db)
		got := map[string][]string{}
		results[t.Name()] = got
		cases := []struct {
			name  string
			q     catalog.Query
			check func(t *testing.T, p *catalog.Page)
		}{
			{"Mug", catalog.Query{Text: "mug"}, func(t *testing.T, p *catalog.Page) {
				if p.Total < 3 {
					t.Fatalf("total = %d, want ≥ 3 mugs", p.Total)
				}
				for _, s := range p.Products[:3] {
					if !strings.Contains(s.Title, "Mug") {
						t.Errorf("top result %q is not a mug", s.Title)
					}
				}
			}},
			{"PluralFolds", catalog.Query{Text: "MUGS"}, func(t *testing.T, p *catalog.Page) {
				if p.Total < 3 {
					t.Errorf("total = %d for \"MUGS\", want the mugs", p.Total)
				}
			}},
			{"Accents", catalog.Query{Text: "crème"}, func(t *testing.T, p *catalog.Page) {
				if p.Total == 0 {
					t.Error("no result for crème")
				}
			}},
			{"EveryWordMustMatch", catalog.Query{Text: "cotton tote"}, func(t *testing.T, p *catalog.Page) {
				for _, s := range p.Products {
					if !strings.Contains(strings.ToLower(s.Title), "tote") {
						t.Errorf("%q matched \"cotton tote\"", s.Title)
					}
				}
				if p.Total == 0 {
					t.Error("no cotton tote")
				}
			}},
			{"Category", catalog.Query{Category: "kitchen", Limit: 50}, func(t *testing.T, p *catalog.Page) {
				for _, s := range p.Products {
					if s.Category != "Kitchen" {
						t.Errorf("%s is in %s", s.ID, s.Category)
					}
				}
				if p.Total != int64(len(p.Products)) || p.Total == 0 {
					t.Errorf("total %d, listed %d", p.Total, len(p.Products))
				}
			}},
			{"PriceRange", catalog.Query{MinPrice: ptr[int64](2000), MaxPrice: ptr[int64](3000), Limit: 50}, func(t *testing.T, p *catalog.Page) {
				for _, s := range p.Products {
					if s.Price.Amount < 2000 || s.Price.Amount > 3000 {
						t.Errorf("%s priced %d outside 2000–3000", s.ID, s.Price.Amount)
					}
				}
			}},
			{"InStockOnly", catalog.Query{InStockOnly: true, Limit: 50}, func(t *testing.T, p *catalog.Page) {
				for _, s := range p.Products {
					if !s.InStock {
						t.Errorf("%s is out of stock", s.ID)
					}
				}
				if p.Total != 46 {
					t.Errorf("total = %d, want the 46 products with stock", p.Total)
				}
			}},
			{"NoMatch", catalog.Query{Text: "submarine"}, func(t *testing.T, p *catalog.Page) {
				if p.Total != 0 || len(p.Products) != 0 || p.NextCursor != "" {
					t.Errorf("got %+v, want nothing", p)
				}
			}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				p, err := c.Search(ctx, tc.q)
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, p)
				got[tc.name] = ids(p)
			})
		}
	})
	if len(results) == 2 {
		var a, b map[string][]string
		for _, r := range results {
			if a == nil {
				a = r
			} else {
				b = r
			}
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("SQLite and PostgreSQL disagree (-one +other):\n%s", diff)
		}
	}
}

func TestSearchPaging(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := demo(t, db)
		for _, q := range []catalog.Query{{Limit: 7}, {Text: "cotton", Limit: 2}} {
			all, err := c.Search(ctx, catalog.Query{Text: q.Text, Limit: catalog.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			var paged []string
			for pages := 0; ; pages++ {
				if pages > 50 {
					t.Fatal("paging does not end")
				}
				p, err := c.Search(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != all.Total {
					t.Errorf("page total %d, want %d", p.Total, all.Total)
				}
				paged = append(paged, ids(p)...)
				if p.NextCursor == "" {
					break
				}
				q.Cursor = p.NextCursor
			}
			want := ids(all)
			if all.Total > catalog.MaxLimit {
				want = nil
				for cur := ""; ; {
					p, err := c.Search(ctx, catalog.Query{Text: q.Text, Limit: catalog.MaxLimit, Cursor: cur})
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, ids(p)...)
					if cur = p.NextCursor; cur == "" {
						break
					}
				}
			}
			if diff := cmp.Diff(want, paged); diff != "" {
				t.Errorf("query %q: pages differ from one listing (-want +got):\n%s", q.Text, diff)
			}
			if int64(len(paged)) != all.Total {
				t.Errorf("query %q: paged %d products, total %d", q.Text, len(paged), all.Total)
			}
		}
	})
}

func TestSearchErrors(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, "sqlite")
	c := demo(t, db)
	first, err := c.Search(ctx, catalog.Query{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		q     catalog.Query
		param string
	}{
		{"ErrLimitNegative", catalog.Query{Limit: -1}, "$.limit"},
		{"ErrLimitHuge", catalog.Query{Limit: 1 << 30}, "$.limit"},
		{"ErrQueryTooLong", catalog.Query{Text: strings.Repeat("mug ", 25_000)}, "$.query"},
		{"ErrTooManyWords", catalog.Query{Text: "a1 b2 c3 d4 e5 f6 g7 h8 i9"}, "$.query"},
		{"ErrUnknownCategory", catalog.Query{Category: "Submarines"}, "$.category"},
		{"ErrNegativePrice", catalog.Query{MinPrice: ptr[int64](-1)}, "$.min_price"},
		{"ErrMaxBelowMin", catalog.Query{MinPrice: ptr[int64](500), MaxPrice: ptr[int64](100)}, "$.max_price"},
		{"ErrGarbageCursor", catalog.Query{Cursor: "not-a-cursor!"}, "$.cursor"},
		{"ErrCursorOfAnotherQuery", catalog.Query{Text: "mug", Limit: 2, Cursor: first.NextCursor}, "$.cursor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Search(ctx, tc.q)
			var e *shop.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *shop.Error", err)
			}
			if e.Param != tc.param || e.Code != shop.Invalid {
				t.Errorf("got %s %s (%s), want invalid %s", e.Code, e.Param, e.Message, tc.param)
			}
		})
	}
}

func TestProduct(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := demo(t, db)
		t.Run("OK", func(t *testing.T) {
			p, err := c.Product(ctx, "enamel-camp-mug")
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Variants) == 0 || p.Images[0] != catalog.DefaultPublicURL+"/static/products/enamel-camp-mug.svg" {
				t.Errorf("got %+v", p)
			}
			for _, v := range p.Variants {
				if v.Price.Amount < p.PriceRange.Min.Amount || v.Price.Amount > p.PriceRange.Max.Amount {
					t.Errorf("variant %s price %d outside range %+v", v.ID, v.Price.Amount, p.PriceRange)
				}
				if v.Price.Currency != "usd" || v.Price.Display == "" {
					t.Errorf("variant %s price %+v", v.ID, v.Price)
				}
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			_, err := c.Product(ctx, "no-such-product")
			if shop.ErrorCode(err) != shop.NotFound {
				t.Errorf("got %v, want not_found", err)
			}
		})
		t.Run("ErrInvalid", func(t *testing.T) {
			_, err := c.Product(ctx, "DROP TABLE products;")
			if shop.ErrorCode(err) != shop.Invalid {
				t.Errorf("got %v, want invalid", err)
			}
		})
	})
}

// TestSearchSameOnEngines searches a generated catalog of 3,000 products on
// SQLite and PostgreSQL and requires the same pages, in the same order.
func TestSearchSameOnEngines(t *testing.T) {
	ctx := context.Background()
	file := generated(3000)
	maxPrice, minPrice := int64(5000), int64(1000)
	queries := []catalog.Query{
		{Text: "mug"}, {Text: "cotton"}, {Text: "organic cotton tee"}, {Text: "lea"}, {Text: "wo"},
		{Text: "mugs", Category: "kitchen"}, {Text: "walnut", MinPrice: &minPrice, MaxPrice: &maxPrice, InStockOnly: true},
		{Category: "Garden"}, {}, {Text: "submarine"},
	}
	got := map[database.Dialect][]string{}
	for _, d := range dbtest.Dialects {
		db := dbtest.Open(t, d)
		c := catalog.New(db, money.MustLookup("usd"), nil)
		if err := c.Import(ctx, file, nil); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			q.Limit = 25
			for pages := 0; pages < 200; pages++ {
				p, err := c.Search(ctx, q)
				if err != nil {
					t.Fatalf("%s %+v: %v", d, q, err)
				}
				for _, s := range p.Products {
					got[d] = append(got[d], fmt.Sprintf("%q total %d: %s %d %t %d", q.Text, p.Total, s.ID, s.Price.Amount, s.InStock, s.VariantCount))
				}
				if q.Cursor = p.NextCursor; q.Cursor == "" {
					break
				}
			}
		}
	}
	if len(got[database.SQLite]) < 3000 {
		t.Fatalf("only %d rows listed", len(got[database.SQLite]))
	}
	if diff := cmp.Diff(got[database.SQLite], got[database.Postgres]); diff != "" {
		t.Errorf("SQLite and PostgreSQL disagree (-sqlite +postgres):\n%s", diff)
	}
}
