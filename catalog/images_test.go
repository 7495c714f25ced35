package catalog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pressly/goose/v3"
	"gorm.io/gorm"

	"shop/catalog"
	"shop/database"
	"shop/database/dbtest"
	"shop/migrations"
	"shop/money"
)

func TestImageOrigin(t *testing.T) {
	for ref, want := range map[string]string{
		"/static/products/mug.svg":                   "",
		"https://cdn.example.test/a/b.jpg":           "https://cdn.example.test",
		"https://img.example.test:8443/x.png?w=1#f":  "https://img.example.test:8443",
		"https://CDN.Example.Test:443/y.jpg":         "https://cdn.example.test",
		"http://legacy.example.test:80/z.gif":        "http://legacy.example.test",
		"https://[2001:db8::1]:8443/v.webp":          "https://[2001:db8::1]:8443",
		"https://user@cdn.example.test/u.jpg":        "https://cdn.example.test",
		"https:///no-host.jpg":                       "",
		"https://%zz/bad.jpg":                        "",
		"ftp://files.example.test/f.jpg":             "",
		"":                                           "",
		"https://cdn.example.test":                   "https://cdn.example.test",
		"https://cdn.example.test:8443":              "https://cdn.example.test:8443",
		"https://cdn.example.test:443/keeps-nothing": "https://cdn.example.test",
	} {
		if got := catalog.ImageOrigin(ref); got != want {
			t.Errorf("ImageOrigin(%q) = %q, want %q", ref, got, want)
		}
	}
}

// cdnCatalog has images on two hosts besides the shop's /static/ paths: a
// product's own images on one, a variant's image on another.
func cdnCatalog() *catalog.File {
	price, stock := int64(1500), int64(5)
	return &catalog.File{Currency: "usd", Products: []catalog.ProductRecord{
		{
			ID: "cdn-mug", Title: "CDN Mug", Category: "Kitchen",
			Images: []string{"https://cdn.example.test/mug.jpg", "/static/products/mug.svg", "https://CDN.example.test:443/mug-2.jpg"},
			Variants: []catalog.VariantRecord{
				{ID: "cdn-mug-red", Title: "Red", Price: &price, Stock: &stock, Image: "https://img.example.test:8443/red.jpg"},
				{ID: "cdn-mug-blue", Title: "Blue", Price: &price, Stock: &stock, Image: "/static/products/blue.svg"},
			},
		},
		{
			ID: "cdn-bowl", Title: "CDN Bowl", Category: "Kitchen",
			Images:   []string{"https://cdn.example.test/bowl.jpg"},
			Variants: []catalog.VariantRecord{{ID: "cdn-bowl-one", Title: "One", Price: &price, Stock: &stock}},
		},
	}}
}

func imageOrigins(t *testing.T, c *catalog.Catalog, max int) ([]string, bool) {
	t.Helper()
	got, more, err := c.ImageOrigins(context.Background(), max)
	if err != nil {
		t.Fatal(err)
	}
	return got, more
}

func TestImageOrigins(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := demo(t, db)
		if got, more := imageOrigins(t, c, 20); len(got) != 0 || more {
			t.Errorf("demo catalog: origins %v (more %v), want none: its images are the shop's own", got, more)
		}

		if err := c.Import(ctx, cdnCatalog(), nil); err != nil {
			t.Fatal(err)
		}
		want := []string{"https://cdn.example.test", "https://img.example.test:8443"}
		if got, more := imageOrigins(t, c, 20); !cmp.Equal(got, want) || more {
			t.Errorf("origins %v (more %v), want %v", got, more, want)
		}
		if got, more := imageOrigins(t, c, 1); !cmp.Equal(got, want[:1]) || !more {
			t.Errorf("at most 1: origins %v (more %v), want %v and more", got, more, want[:1])
		}

		// Importing the mug again without its variant's host drops that host;
		// the bowl keeps the CDN.
		f := cdnCatalog()
		f.Products = f.Products[:1]
		f.Products[0].Variants[0].Image = ""
		if err := c.Import(ctx, f, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := imageOrigins(t, c, 20); !cmp.Equal(got, want[:1]) {
			t.Errorf("after re-import: origins %v, want %v", got, want[:1])
		}
		f.Products[0].Images = []string{"/static/products/mug.svg"}
		f.Products = append(f.Products, catalog.ProductRecord{
			ID: "cdn-bowl", Title: "Bowl", Category: "Kitchen", Images: []string{"/static/products/bowl.svg"},
			Variants: []catalog.VariantRecord{{ID: "cdn-bowl-one", Title: "One", Price: ptr(int64(1)), Stock: ptr(int64(1))}},
		})
		if err := c.Import(ctx, f, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := imageOrigins(t, c, 20); len(got) != 0 {
			t.Errorf("after moving every image to /static/: origins %v, want none", got)
		}

		// Many hosts: the bound holds, however many products share a host.
		many := &catalog.File{Currency: "usd"}
		for i := range 30 {
			many.Products = append(many.Products, catalog.ProductRecord{
				ID: fmt.Sprintf("many-%02d", i), Title: "Many", Category: "Kitchen",
				Images:   []string{fmt.Sprintf("https://h%02d.example.test/a.jpg", i%25), "https://cdn.example.test/b.jpg"},
				Variants: []catalog.VariantRecord{{ID: fmt.Sprintf("many-%02d-v", i), Title: "V", Price: ptr(int64(1)), Stock: ptr(int64(1))}},
			})
		}
		if err := c.Import(ctx, many, nil); err != nil {
			t.Fatal(err)
		}
		got, more := imageOrigins(t, c, 20)
		if len(got) != 20 || !more || got[0] != "https://cdn.example.test" || got[1] != "https://h00.example.test" {
			t.Errorf("26 hosts, at most 20: origins %v (more %v)", got, more)
		}
		if got, more := imageOrigins(t, c, 26); len(got) != 26 || more {
			t.Errorf("26 hosts, at most 26: %d origins (more %v)", len(got), more)
		}
	})
}

// TestResolveImageOrigins migrates a catalog imported before the image
// origins were kept: migration 00009 marks its products with absolute images,
// and ResolveImageOrigins computes their origins.
func TestResolveImageOrigins(t *testing.T) {
	ctx := context.Background()
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			db, err := database.Open(ctx, dbtest.DSN(t, d), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = database.Close(db) })
			sqlDB, err := db.DB()
			if err != nil {
				t.Fatal(err)
			}
			dialect := goose.DialectSQLite3
			if d == database.Postgres {
				dialect = goose.DialectPostgres
			}
			p, err := goose.NewProvider(dialect, sqlDB, migrations.FS)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.UpTo(ctx, 7); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC()
			for i, row := range []struct{ id, images, variantImage string }{
				{"old-cdn", `["https://cdn.example.test/a.jpg","/static/a.svg"]`, ""},
				{"old-variant", `["/static/b.svg"]`, "https://img.example.test:8443/b.jpg"},
				{"old-static", `["/static/c.svg"]`, "/static/c-red.svg"},
			} {
				if err := db.Exec("INSERT INTO products (id, seq, title, description, category, category_key, images, created_at, updated_at) VALUES (?, ?, 'T', '', 'C', 'c', ?, ?, ?)",
					row.id, i+1, row.images, now, now).Error; err != nil {
					t.Fatal(err)
				}
				if err := db.Exec("INSERT INTO variants (id, product_id, position, title, options, price, stock, image, created_at, updated_at) VALUES (?, ?, 0, 'V', '{}', 100, 1, ?, ?, ?)",
					row.id+"-v", row.id, row.variantImage, now, now).Error; err != nil {
					t.Fatal(err)
				}
			}
			if _, err := p.Up(ctx); err != nil {
				t.Fatal(err)
			}
			c := catalog.New(db, money.MustLookup("usd"), nil)
			if got, _ := imageOrigins(t, c, 20); len(got) != 0 {
				t.Errorf("before resolving: origins %v, want none (the products are only marked)", got)
			}
			n, err := c.ResolveImageOrigins(ctx)
			if err != nil || n != 2 {
				t.Fatalf("resolved %d products (err %v), want the 2 with absolute images", n, err)
			}
			want := []string{"https://cdn.example.test", "https://img.example.test:8443"}
			if got, _ := imageOrigins(t, c, 20); !cmp.Equal(got, want) {
				t.Errorf("origins %v, want %v", got, want)
			}
			if n, err := c.ResolveImageOrigins(ctx); err != nil || n != 0 {
				t.Errorf("second run resolved %d (err %v), want 0", n, err)
			}
		})
	}
}
