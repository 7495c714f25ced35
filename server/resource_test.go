package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
	"shop/mcptest"
)

// connectMCP joins a client to srv over in-memory transports.
func connectMCP(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcptest.NewClient(t, "test", nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestResources(t *testing.T) {
	meta := map[string]any{"ui": map[string]any{"prefersBorder": true, "csp": map[string]any{"resourceDomains": []any{"https://shop.example.com"}}}}
	read := map[string]func(context.Context) (string, error){
		"ui://t/ok.html":      func(context.Context) (string, error) { return "<!doctype html>", nil },
		"ui://t/refused.html": func(context.Context) (string, error) { return "", shop.Errorf(shop.NotFound, "", "no such widget") },
		"ui://t/broken.html":  func(context.Context) (string, error) { return "", errors.New("open dist/x.html: SQL secret detail") },
	}
	var res []shop.Resource
	for _, uri := range []string{"ui://t/ok.html", "ui://t/refused.html", "ui://t/broken.html"} {
		res = append(res, shop.Resource{URI: uri, Name: "n", Title: "T", Description: "d", MIMEType: "text/html;profile=mcp-app", Meta: meta, Read: read[uri]})
	}
	cs := connectMCP(t, NewMCP(MCPOptions{Name: "shop", Version: "1", Resources: res}))
	ctx := context.Background()

	t.Run("List", func(t *testing.T) {
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Resources) != 3 {
			t.Fatalf("listed %d resources", len(list.Resources))
		}
		for _, r := range list.Resources {
			if r.MIMEType != "text/html;profile=mcp-app" || r.Title != "T" {
				t.Errorf("entry %+v", r)
			}
			if diff := cmp.Diff(meta, map[string]any(r.Meta)); diff != "" {
				t.Errorf("%s: list entry _meta (-want +got):\n%s", r.URI, diff)
			}
		}
	})
	t.Run("Read", func(t *testing.T) {
		got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://t/ok.html"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Contents) != 1 || got.Contents[0].Text != "<!doctype html>" || got.Contents[0].MIMEType != "text/html;profile=mcp-app" {
			t.Fatalf("contents %+v", got.Contents)
		}
		if diff := cmp.Diff(meta, map[string]any(got.Contents[0].Meta)); diff != "" {
			t.Errorf("content _meta (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrRefused", func(t *testing.T) {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://t/refused.html"})
		if err == nil || !strings.Contains(err.Error(), "no such widget") {
			t.Errorf("got %v, want the *shop.Error's message", err)
		}
	})
	t.Run("ErrInternal", func(t *testing.T) {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://t/broken.html"})
		if err == nil || !strings.Contains(err.Error(), internalMessage) || strings.Contains(err.Error(), "SQL") {
			t.Errorf("got %v, want the generic text and no detail", err)
		}
	})
}
