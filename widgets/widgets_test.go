package widgets_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/mcptest"
	"shop/widgets"
)

const publicURL = "https://shop.example.com/base/"

// demo opens the demo merchant on db and returns its widgets.
func demo(t *testing.T, db *gorm.DB) (*widgets.Widgets, *checkout.Checkout) {
	t.Helper()
	policy, err := checkout.LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.New(db, policy.Currency(), &catalog.Options{PublicURL: publicURL})
	if _, err := cat.SeedIfEmpty(context.Background(), os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
		t.Fatal(err)
	}
	co := checkout.New(db, policy, cat, nil)
	return widgets.New(co, cat, &widgets.Options{PublicURL: publicURL}), co
}

func TestToolMeta(t *testing.T) {
	w := widgets.New(nil, nil, &widgets.Options{PublicURL: publicURL})
	want := map[string]struct{ uri, first string }{
		"render_products": {widgets.ProductsURI, "search_products first"},
		"render_checkout": {widgets.CheckoutURI, "create_checkout_session first"},
	}
	tools := w.Tools()
	if len(tools) != len(want) {
		t.Fatalf("got %d tools, want %d", len(tools), len(want))
	}
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			wt, ok := want[tool.Name]
			if !ok {
				t.Fatalf("unexpected tool %s", tool.Name)
			}
			got := mcptest.JSON(t, tool.Meta).(map[string]any)
			for _, k := range []string{"openai/toolInvocation/invoking", "openai/toolInvocation/invoked"} {
				if s, _ := got[k].(string); s == "" || len(s) > 64 {
					t.Errorf("%s = %q, want a short status line", k, s)
				}
				delete(got, k)
			}
			wantMeta := map[string]any{
				"ui":                      map[string]any{"resourceUri": wt.uri},
				"ui/resourceUri":          wt.uri,
				"openai/outputTemplate":   wt.uri,
				"openai/widgetAccessible": true,
			}
			if diff := cmp.Diff(wantMeta, got); diff != "" {
				t.Errorf("_meta (-want +got):\n%s", diff)
			}
			if !strings.Contains(tool.Description, wt.first) {
				t.Errorf("description does not say %q: %s", wt.first, tool.Description)
			}
			if !tool.ReadOnly || tool.Destructive || !json.Valid(tool.InputSchema) {
				t.Errorf("annotations or schema: read-only %v, destructive %v, schema valid %v", tool.ReadOnly, tool.Destructive, json.Valid(tool.InputSchema))
			}
		})
	}
}

// externalAttr finds an attribute loading from a scheme or a
// protocol-relative URL; externalCSS the same in a stylesheet.
var (
	externalAttr = regexp.MustCompile(`(?i)\b(src|href|srcset|action|data)\s*=\s*["']?\s*(https?:|//)`)
	externalCSS  = regexp.MustCompile(`(?i)(url\(\s*["']?\s*(https?:|//)|@import)`)
	styleBlock   = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
)

// TestResourceDomain: with a domain, both templates name it under
// _meta.ui.domain and openai/widgetDomain; the redirect domains are the
// shop's origin and the others given, each once, as origins.
func TestResourceDomain(t *testing.T) {
	w := widgets.New(nil, nil, &widgets.Options{PublicURL: publicURL, Domain: "https://widgets.example.com",
		RedirectDomains: []string{"https://checkout.stripe.com", "https://legal.example.com/terms.html", "https://shop.example.com/static/x", "not a url"}})
	for _, r := range w.Resources() {
		for what, meta := range map[string]map[string]any{"Meta": r.Meta, "MetaFor": r.MetaFor(context.Background())} {
			m := mcptest.JSON(t, meta).(map[string]any)
			got := map[string]any{"ui.domain": m["ui"].(map[string]any)["domain"], "openai/widgetDomain": m["openai/widgetDomain"],
				"redirect_domains": m["openai/widgetCSP"].(map[string]any)["redirect_domains"]}
			want := map[string]any{"ui.domain": "https://widgets.example.com", "openai/widgetDomain": "https://widgets.example.com",
				"redirect_domains": []any{"https://shop.example.com", "https://checkout.stripe.com", "https://legal.example.com"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", r.URI, what, diff)
			}
		}
	}
}

func TestResources(t *testing.T) {
	w := widgets.New(nil, nil, &widgets.Options{PublicURL: publicURL})
	if got := w.Origin(); got != "https://shop.example.com" {
		t.Errorf("origin %q", got)
	}
	wantURIs := []string{widgets.ProductsURI, widgets.CheckoutURI}
	res := w.Resources()
	if len(res) != len(wantURIs) {
		t.Fatalf("got %d resources", len(res))
	}
	for i, r := range res {
		t.Run(r.Name, func(t *testing.T) {
			if r.URI != wantURIs[i] || r.MIMEType != "text/html;profile=mcp-app" || r.Title == "" || r.Description == "" {
				t.Errorf("resource %+v", r)
			}
			wantMeta := map[string]any{
				"ui": map[string]any{
					"prefersBorder": true,
					"csp":           map[string]any{"connectDomains": []any{}, "resourceDomains": []any{"https://shop.example.com"}},
				},
				"openai/widgetPrefersBorder": true,
				"openai/widgetDescription":   r.Description,
				"openai/widgetCSP": map[string]any{"connect_domains": []any{}, "resource_domains": []any{"https://shop.example.com"},
					"redirect_domains": []any{"https://shop.example.com"}},
			}
			if diff := cmp.Diff(wantMeta, mcptest.JSON(t, r.Meta)); diff != "" {
				t.Errorf("_meta (-want +got):\n%s", diff)
			}
			html, err := r.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(html, "<!doctype html>") || !strings.Contains(html, `<div id="root"></div>`) || !strings.Contains(html, "<script>") {
				t.Errorf("not a self-contained HTML5 document: %.200s", html)
			}
			if m := externalAttr.FindString(html); m != "" {
				t.Errorf("the widget loads from elsewhere: %q", m)
			}
			for _, css := range styleBlock.FindAllStringSubmatch(html, -1) {
				if m := externalCSS.FindString(css[1]); m != "" {
					t.Errorf("the widget's CSS loads from elsewhere: %q", m)
				}
			}
			if n := strings.Count(html, "<script"); n != 1 {
				t.Errorf("%d script elements, want the one inline bundle", n)
			}
			var gz bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
			_, _ = zw.Write([]byte(html))
			_ = zw.Close()
			t.Logf("%s: %d bytes, %d gzip", r.URI, len(html), gz.Len())
		})
	}
}

func TestDefaultOrigin(t *testing.T) {
	for _, public := range []string{"", "not a url", "ftp://x"} {
		if got := widgets.New(nil, nil, &widgets.Options{PublicURL: public}).Origin(); got != "http://127.0.0.1:8000" {
			t.Errorf("PublicURL %q: origin %q", public, got)
		}
	}
	if got := widgets.New(nil, nil, nil).Origin(); got != "http://127.0.0.1:8000" {
		t.Errorf("nil options: origin %q", got)
	}
}

func tool(t *testing.T, w *widgets.Widgets, name string) shop.Tool {
	t.Helper()
	for _, tl := range w.Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return shop.Tool{}
}

func TestRenderProducts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w, _ := demo(t, db)
		render := tool(t, w, "render_products").Handle
		t.Run("OK", func(t *testing.T) {
			res, err := render(context.Background(), json.RawMessage(`{"product_ids": ["enamel-camp-mug", "stoneware-coffee-mug", "enamel-camp-mug"]}`))
			if err != nil {
				t.Fatal(err)
			}
			out := res.Structured.(widgets.ProductsResult)
			if len(out.Products) != 2 || out.Products[0].ID != "enamel-camp-mug" || out.Products[1].ID != "stoneware-coffee-mug" {
				t.Fatalf("products %+v", out.Products)
			}
			if len(out.Products[0].Variants) == 0 || !strings.HasPrefix(out.Products[0].Images[0], "https://shop.example.com/") {
				t.Errorf("product %+v", out.Products[0])
			}
			if !strings.Contains(res.Text, "Enamel Camp Mug") {
				t.Errorf("text %q", res.Text)
			}
		})
		ids21 := `["` + strings.TrimSuffix(strings.Repeat(`enamel-camp-mug","`, 21), `","`) + `"]`
		for _, tc := range []struct{ name, args, param string }{
			{"ErrMissing", `{}`, "$.product_ids"},
			{"ErrEmpty", `{"product_ids": []}`, "$.product_ids"},
			{"ErrTooMany", `{"product_ids": ` + ids21 + `}`, "$.product_ids"},
			{"ErrNotAnArray", `{"product_ids": "enamel-camp-mug"}`, "$.product_ids"},
			{"ErrUnknown", `{"product_ids": ["enamel-camp-mug", "no-such-thing"]}`, "$.product_ids[1]"},
			{"ErrInvalidID", `{"product_ids": ["Bad Id"]}`, "$.product_ids[0]"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := render(context.Background(), json.RawMessage(tc.args))
				var e *shop.Error
				if !errors.As(err, &e) || e.Param != tc.param || len(e.Message) < 10 {
					t.Errorf("got %v, want a *shop.Error at %s", err, tc.param)
				}
			})
		}
	})
}

func TestRenderCheckout(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		w, co := demo(t, db)
		render := tool(t, w, "render_checkout").Handle
		s, err := co.Create(context.Background(), checkout.Request{Items: &[]checkout.Item{{ID: "enamel-camp-mug-slate", Quantity: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := render(context.Background(), json.RawMessage(`{"checkout_session_id": "`+s.ID+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		got := res.Structured.(*checkout.Session)
		if got.ID != s.ID || len(got.LineItems) != 1 || got.Status != checkout.NotReady {
			t.Errorf("session %+v", got)
		}
		if !strings.Contains(res.Text, s.ID) || !strings.Contains(res.Text, "2 item(s)") || !strings.Contains(res.Text, "$.fulfillment_address") {
			t.Errorf("text %q", res.Text)
		}
		for _, args := range []string{`{}`, `{"checkout_session_id": "cs_nope"}`} {
			_, err := render(context.Background(), json.RawMessage(args))
			var e *shop.Error
			if !errors.As(err, &e) || e.Param != "$.checkout_session_id" {
				t.Errorf("%s: got %v, want a *shop.Error at $.checkout_session_id", args, err)
			}
		}
	})
}
