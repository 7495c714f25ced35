package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"gorm.io/gorm"

	"shop/catalog"
	"shop/database/dbtest"
	"shop/money"
)

// TestSearchWordsPostings checks that several words without filters, which
// are intersected from their postings, answer what the intersection in SQL
// answers (the same words under a filter every product passes): the same
// products in the same order on every page, the same totals and summaries;
// and again after an import that changes a product's words.
func TestSearchWordsPostings(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := catalog.New(db, money.MustLookup("usd"), nil)
		file := generated(300)
		// Two words in different fields, so that the order depends on
		// each word's weight and factor: ties go to catalog order.
		for _, p := range [][3]string{
			{"zz-both", "Juniper Cedar Candle", "Poured by hand."},
			{"zz-cedar-title", "Cedar Candle", "Scented with juniper."},
			{"zz-juniper-title", "Juniper Candle", "Scented with cedar."},
			{"zz-description", "Candle", "Juniper and cedar."},
			// A word and a longer term it begins, the longer one first in
			// catalog order: the word itself must rank first.
			{"zz-lightweight", "Lightweight Lantern", "Hangs anywhere."},
			{"zz-light", "Light Lantern", "Hangs anywhere."},
		} {
			price, stock := int64(1200), int64(3)
			file.Products = append(file.Products, catalog.ProductRecord{ID: p[0], Title: p[1], Category: "Home", Description: p[2],
				Variants: []catalog.VariantRecord{{ID: p[0] + "-1", Title: "One", Price: &price, Stock: &stock}}})
		}
		// More terms beginning "zqa" than a search reads postings of:
		// those words are searched in SQL.
		for i := range 70 {
			price, stock := int64(900), int64(2)
			id := fmt.Sprintf("zz-many-%02d", i)
			file.Products = append(file.Products, catalog.ProductRecord{ID: id, Title: fmt.Sprintf("Zqa%02d Box", i), Category: "Home",
				Variants: []catalog.VariantRecord{{ID: id + "-1", Title: "One", Price: &price, Stock: &stock}}})
		}
		if err := c.Import(ctx, file, nil); err != nil {
			t.Fatal(err)
		}
		o := &oracle{t: t, c: c, db: db, file: file}
		texts := []string{"juniper cedar", "cedar juniper", "junip cedar", "cedar candle juniper", "soft recycled", "travel soft", "lea soft", "cotton mug", "blue mug", "blue made", "made daily care", "organic cotton tee", "xs blue", "cotton cotton", "lea blue", "mug submarine",
			// A word that begins longer terms, alone and with others.
			"lea", "junip", "lantern light", "ligh", "zqa", "zqa box", "box zqa", "soft", "light", "ba", "bag", "cott", "lea junip", "made lea"}
		same := func(when string) {
			t.Helper()
			zero := int64(0)
			for _, text := range texts {
				got := o.all(ctx, catalog.Query{Text: text})
				want := o.all(ctx, catalog.Query{Text: text, MinPrice: &zero})
				if !slices.Equal(brief(got), brief(want)) {
					t.Errorf("%s: %q:\n got %v\nwant %v", when, text, brief(got), brief(want))
				}
			}
		}
		same("after the import")
		want := []string{"zz-both", "zz-cedar-title", "zz-juniper-title", "zz-description"}
		if got := o.all(ctx, catalog.Query{Text: "juniper cedar"}); !slices.Equal(ids2(got), want) {
			t.Errorf("\"juniper cedar\" lists %v; want %v", ids2(got), want)
		}
		if got := o.all(ctx, catalog.Query{Text: "blue made"}); len(got) < 8 {
			t.Fatalf("\"blue made\" matches %d products; want more than a page", len(got))
		}

		// Product 0 takes new words and loses its old ones.
		again := generated(300)
		old := again.Products[0].Title
		again.Products[0].Title, again.Products[0].Description = "Zebra striped kettle", "Zebra stripes."
		if err := c.Import(ctx, &catalog.File{Currency: "usd", Products: again.Products[:1]}, nil); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, "zebra kettle", old)
		same("after a re-import")
		if got := o.all(ctx, catalog.Query{Text: "zebra kettle"}); len(got) != 1 || got[0].ID != again.Products[0].ID {
			t.Errorf("\"zebra kettle\" finds %v; want only %s", brief(got), again.Products[0].ID)
		}
		for _, s := range o.all(ctx, catalog.Query{Text: old}) {
			if s.ID == again.Products[0].ID {
				t.Errorf("%q still finds %s, which no longer has those words", old, s.ID)
			}
		}
	})
}

func ids2(list []catalog.ProductSummary) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}
