package widgets_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/catalog"
	"shop/database"
	"shop/database/dbtest"
	"shop/mcptest"
	"shop/money"
	"shop/widgets"
)

// cdnCatalog has images on two hosts besides the shop's /static/ paths: a
// product's own on one, a variant's on another.
func cdnCatalog() *catalog.File {
	price, stock := int64(1500), int64(5)
	return &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{{
		ID: "cdn-mug", Title: "CDN Mug", Category: "Kitchen",
		Images: []string{"https://cdn.example.test/mug.jpg", "/static/products/mug.svg"},
		Variants: []catalog.VariantRecord{
			{ID: "cdn-mug-red", Title: "Red", Price: &price, Stock: &stock, Image: "https://img.example.test:8443/red.jpg"},
			{ID: "cdn-mug-blue", Title: "Blue", Price: &price, Stock: &stock, Image: "/static/products/blue.svg"},
		},
	}}}
}

// cspOf is a template's CSP origins as the wire carries them, in both
// conventions; it fails the test when they differ.
func cspOf(t *testing.T, meta map[string]any) []any {
	t.Helper()
	m := mcptest.JSON(t, meta).(map[string]any)
	ui := m["ui"].(map[string]any)["csp"].(map[string]any)
	openai := m["openai/widgetCSP"].(map[string]any)
	if diff := cmp.Diff(ui["resourceDomains"], openai["resource_domains"]); diff != "" {
		t.Errorf("ui.csp.resourceDomains and openai/widgetCSP.resource_domains differ (-ui +openai):\n%s", diff)
	}
	if diff := cmp.Diff([]any{}, ui["connectDomains"]); diff != "" {
		t.Errorf("ui.csp.connectDomains (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{}, openai["connect_domains"]); diff != "" {
		t.Errorf("openai/widgetCSP.connect_domains (-want +got):\n%s", diff)
	}
	d, _ := ui["resourceDomains"].([]any)
	return d
}

// TestResourceCSP: the templates' CSP names the shop's origin and the
// catalog's image hosts as the database holds them when the _meta is sent,
// so an import (by this process or another) shows at once.
func TestResourceCSP(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var logs strings.Builder
		cat := catalog.New(db, money.MustLookup("usd"), &catalog.Options{PublicURL: publicURL})
		if _, err := cat.SeedIfEmpty(ctx, os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
			t.Fatal(err)
		}
		w := widgets.New(nil, cat, &widgets.Options{PublicURL: publicURL, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		res := w.Resources()
		for _, r := range res {
			if diff := cmp.Diff([]any{"https://shop.example.com"}, cspOf(t, r.MetaFor(ctx))); diff != "" {
				t.Errorf("%s, demo catalog: CSP origins (-want +got):\n%s", r.URI, diff)
			}
		}

		// Another process imports a catalog with images on a CDN: the same
		// resources, declared before, now name its hosts.
		other := catalog.New(db, money.MustLookup("usd"), nil)
		if err := other.Import(ctx, cdnCatalog(), nil); err != nil {
			t.Fatal(err)
		}
		want := []any{"https://shop.example.com", "https://cdn.example.test", "https://img.example.test:8443"}
		for _, r := range res {
			if diff := cmp.Diff(want, cspOf(t, r.MetaFor(ctx))); diff != "" {
				t.Errorf("%s, CDN catalog: CSP origins (-want +got):\n%s", r.URI, diff)
			}
		}
		if got := w.ResourceDomains(ctx); !cmp.Equal(got, []string{"https://shop.example.com", "https://cdn.example.test", "https://img.example.test:8443"}) {
			t.Errorf("ResourceDomains %v", got)
		}
		if logs.Len() > 0 {
			t.Errorf("unexpected logs:\n%s", logs.String())
		}

		// More hosts than the bound: the CSP names MaxImageOrigins of them,
		// and a warning says so (once, not on every response).
		many := &catalog.File{Currency: "usd"}
		for i := range widgets.MaxImageOrigins + 5 {
			many.Products = append(many.Products, catalog.ProductRecord{
				ID: fmt.Sprintf("many-%02d", i), Title: "Many", Category: "Kitchen",
				Images:   []string{fmt.Sprintf("https://h%02d.example.test/a.jpg", i)},
				Variants: []catalog.VariantRecord{{ID: fmt.Sprintf("many-%02d-v", i), Title: "V", Price: new(int64), Stock: new(int64)}},
			})
		}
		if err := other.Import(ctx, many, nil); err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			got := cspOf(t, r.MetaFor(ctx))
			if len(got) != 1+widgets.MaxImageOrigins || got[0] != "https://shop.example.com" || got[1] != "https://cdn.example.test" {
				t.Errorf("%s, %d hosts: CSP origins %v", r.URI, widgets.MaxImageOrigins+7, got)
			}
		}
		if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "more hosts than the CSP names") {
			t.Errorf("want one warning, got:\n%s", logs.String())
		}

		// The database gone: the CSP names the shop's origin alone, and says why.
		if err := database.Close(db); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]any{"https://shop.example.com"}, cspOf(t, res[0].MetaFor(ctx))); diff != "" {
			t.Errorf("database closed: CSP origins (-want +got):\n%s", diff)
		}
		if !strings.Contains(logs.String(), "level=ERROR") {
			t.Errorf("no error logged:\n%s", logs.String())
		}
	})
}

// TestResourceCSPNoCatalog: widgets without a catalog name the shop's origin.
func TestResourceCSPNoCatalog(t *testing.T) {
	ctx := context.Background()
	w := widgets.New(nil, nil, &widgets.Options{PublicURL: publicURL})
	for _, r := range w.Resources() {
		if diff := cmp.Diff([]any{"https://shop.example.com"}, cspOf(t, r.MetaFor(ctx))); diff != "" {
			t.Errorf("%s: CSP origins (-want +got):\n%s", r.URI, diff)
		}
	}
}
