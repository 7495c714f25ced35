package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/database"
	"shop/database/dbtest"
	"shop/widgets"
)

// TestWidgetResources reads the widgets' templates from a running shop as a
// host does: both the resources/list entry and the resources/read content
// carry _meta.ui, whose CSP names the shop's own origin and nothing else.
func TestWidgetResources(t *testing.T) {
	shop := startShop(t, dbtest.DSN(t, database.SQLite), nil)
	s := connect(t, shop.url)
	ctx := context.Background()
	wantUI := map[string]any{
		"prefersBorder": true,
		"csp":           map[string]any{"connectDomains": []any{}, "resourceDomains": []any{shop.url}},
	}
	uiOf := func(meta mcp.Meta) any {
		b, _ := json.Marshal(meta)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m["ui"]
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
			if diff := cmp.Diff(wantUI, uiOf(r.Meta)); diff != "" {
				t.Errorf("list entry _meta.ui (-want +got):\n%s", diff)
			}
			got, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			c := got.Contents[0]
			if c.MIMEType != "text/html;profile=mcp-app" || !strings.HasPrefix(c.Text, "<!doctype html>") {
				t.Errorf("content %s %.40q", c.MIMEType, c.Text)
			}
			if diff := cmp.Diff(wantUI, uiOf(c.Meta)); diff != "" {
				t.Errorf("content _meta.ui (-want +got):\n%s", diff)
			}
		})
	}
}
