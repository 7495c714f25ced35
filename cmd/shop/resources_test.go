package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/database/dbtest"
	"shop/widgets"
)

// cdnCatalogJSON is a catalog whose images come from two hosts besides the
// shop's /static/ paths: a product's own from one, a variant's from another.
const cdnCatalogJSON = `{"currency": "usd", "products": [{
  "id": "cdn-mug", "title": "CDN Mug", "category": "Kitchen", "description": "A mug whose pictures live on a CDN.",
  "images": ["https://cdn.example.test/mug.jpg", "/static/products/enamel-camp-mug.svg"],
  "variants": [
    {"id": "cdn-mug-red", "title": "Red", "options": {"Colour": "Red"}, "price": 1500, "stock": 5, "image": "https://img.example.test:8443/red.jpg"},
    {"id": "cdn-mug-blue", "title": "Blue", "options": {"Colour": "Blue"}, "price": 1500, "stock": 5, "image": "/static/products/enamel-camp-mug.svg"}
  ]
}]}`

// TestWidgetResources reads the widgets' templates from a running shop as a
// host does: both the resources/list entry and the resources/read content
// carry _meta.ui (and openai/widgetCSP), whose CSP names the shop's own
// origin and the catalog's image hosts, and nothing else. A catalog imported
// by another process while the shop runs shows in the next answers.
func TestWidgetResources(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			shop := startShop(t, dsn, nil)
			s := connect(t, shop.url)
			t.Run("demo", func(t *testing.T) { checkWidgetCSP(t, s, shop.url) })

			file := filepath.Join(t.TempDir(), "cdn.json")
			if err := os.WriteFile(file, []byte(cdnCatalogJSON), 0o600); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			m := &Main{
				Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out,
				Getenv: func(string) string { return "" }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			}
			if err := m.Run(context.Background(), []string{"catalog", "import", file, "--db", dsn}); err != nil {
				t.Fatalf("catalog import: %v\n%s", err, out.String())
			}
			t.Run("cdn", func(t *testing.T) {
				checkWidgetCSP(t, s, shop.url, "https://cdn.example.test", "https://img.example.test:8443")
			})
		})
	}
}

// checkWidgetCSP checks both templates' list entries and contents: their
// CSP's resource origins are exactly origins, in both conventions.
func checkWidgetCSP(t *testing.T, s *mcp.ClientSession, origins ...string) {
	t.Helper()
	ctx := context.Background()
	domains := make([]any, len(origins))
	for i, o := range origins {
		domains[i] = o
	}
	wantUI := map[string]any{
		"prefersBorder": true,
		"csp":           map[string]any{"connectDomains": []any{}, "resourceDomains": domains},
	}
	// The pages the widgets open: the shop's own (payment page, receipts,
	// legal pages); the sandbox needs no Stripe Checkout.
	wantOpenAI := map[string]any{"connect_domains": []any{}, "resource_domains": domains, "redirect_domains": domains[:1]}
	metaOf := func(meta mcp.Meta) map[string]any {
		b, _ := json.Marshal(meta)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	check := func(t *testing.T, what string, meta mcp.Meta) {
		t.Helper()
		m := metaOf(meta)
		if diff := cmp.Diff(wantUI, m["ui"]); diff != "" {
			t.Errorf("%s _meta.ui (-want +got):\n%s", what, diff)
		}
		if diff := cmp.Diff(wantOpenAI, m["openai/widgetCSP"]); diff != "" {
			t.Errorf("%s _meta[openai/widgetCSP] (-want +got):\n%s", what, diff)
		}
	}

	list, err := s.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*mcp.Resource{}
	for _, r := range list.Resources {
		listed[r.URI] = r
	}
	for _, uri := range []string{widgets.ProductsURI, widgets.CheckoutURI} {
		t.Run(strings.TrimPrefix(uri, "ui://shop/"), func(t *testing.T) {
			r := listed[uri]
			if r == nil || r.MIMEType != "text/html;profile=mcp-app" {
				t.Fatalf("resources/list entry %+v", r)
			}
			check(t, "list entry", r.Meta)
			got, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			c := got.Contents[0]
			if c.MIMEType != "text/html;profile=mcp-app" || !strings.HasPrefix(c.Text, "<!doctype html>") {
				t.Errorf("content %s %.40q", c.MIMEType, c.Text)
			}
			check(t, "content", c.Meta)
		})
	}
}
