package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/database"
	"shop/database/dbtest"
	"shop/mcptest"
	"shop/widgets"
)

// testWidgetDomain is the SHOP_WIDGET_DOMAIN of the tests that set one.
const testWidgetDomain = "https://northwind-widgets.example.com"

// appsExtension is initialize's capabilities.extensions entry of the MCP
// Apps extension, as docs/buying.md declares it.
var appsExtension = map[string]any{"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []any{"text/html;profile=mcp-app"}}}

// connectAs joins the buyers' endpoint as a client that advertises caps.
func connectAs(t *testing.T, url, name string, caps *mcp.ClientCapabilities) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := mcptest.NewClient(t, name, &mcp.ClientOptions{Capabilities: caps}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestMCPAppsExtension: initialize answers the MCP Apps extension among
// the buyers' endpoint's capabilities (not the staff's, which has no
// widgets). A host that advertises the extension and one that does not
// both get every tool, the render tools included, which answer their data
// and a text; the log says which client renders widgets.
func TestMCPAppsExtension(t *testing.T) {
	shop := startShop(t, dbtest.DSN(t, database.SQLite), map[string]string{"SHOP_ADMIN_TOKENS": "owner:" + ownerToken})
	claude := &mcp.ClientCapabilities{}
	claude.AddExtension("io.modelcontextprotocol/ui", map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}})
	var names [][]string
	for _, c := range []struct {
		name string
		caps *mcp.ClientCapabilities
		apps string
	}{{"apps-host", claude, "mcp_apps=true"}, {"text-host", nil, "mcp_apps=false"}} {
		s := connectAs(t, shop.url, c.name, c.caps)
		caps := s.InitializeResult().Capabilities
		if diff := cmp.Diff(appsExtension, mcptest.JSON(t, caps.Extensions)); diff != "" {
			t.Errorf("%s: initialize's capabilities.extensions (-want +got):\n%s", c.name, diff)
		}
		//lint:ignore SA1019 the logging capability stays declared for hosts of older protocols
		if caps.Tools == nil || caps.Resources == nil || caps.Logging == nil {
			t.Errorf("%s: capabilities %+v, want logging, resources and tools too", c.name, caps)
		}
		said := false
		for _, line := range strings.Split(shop.logs.String(), "\n") {
			said = said || strings.Contains(line, `msg="client initialized" client=`+c.name+" ") && strings.Contains(line, c.apps)
		}
		if !said {
			t.Errorf("%s: the log does not say %s:\n%s", c.name, c.apps, shop.logs.String())
		}
		list, err := s.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var tools []string
		for _, tool := range list.Tools {
			tools = append(tools, tool.Name)
		}
		names = append(names, tools)
		cs := readySession(t, s)
		res := call(t, s, "render_checkout", map[string]any{"checkout_session_id": cs.ID})
		if res.IsError || res.StructuredContent == nil || !strings.Contains(text(res), cs.ID) {
			t.Errorf("%s: render_checkout answers isError %v, text %q, structuredContent %v", c.name, res.IsError, text(res), res.StructuredContent != nil)
		}
	}
	if diff := cmp.Diff(names[0], names[1]); diff != "" || len(names[0]) < 11 {
		t.Errorf("the tools differ between a host with MCP Apps and one without (-apps +text):\n%s", diff)
	}

	admin := connectAdmin(t, shop.url, ownerToken)
	if ext := admin.InitializeResult().Capabilities.Extensions; len(ext) != 0 {
		t.Errorf("the staff's endpoint declares extensions %v: it serves no widgets", ext)
	}
}

// TestWidgetDomain: with SHOP_WIDGET_DOMAIN set, both templates carry it as
// _meta.ui.domain and _meta["openai/widgetDomain"], on the resources/list
// entry and on the resources/read content; unset, neither key is there and
// the shop warns at start that ChatGPT's directory needs it.
func TestWidgetDomain(t *testing.T) {
	for _, tc := range []struct {
		name, domain string
	}{{"Set", testWidgetDomain}, {"Unset", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			if tc.domain != "" {
				env["SHOP_WIDGET_DOMAIN"] = tc.domain
			}
			shop := startShop(t, dbtest.DSN(t, database.SQLite), env)
			warned := strings.Contains(shop.logs.String(), "SHOP_WIDGET_DOMAIN is unset")
			if warned != (tc.domain == "") {
				t.Errorf("warned about SHOP_WIDGET_DOMAIN %v with it %q:\n%s", warned, tc.domain, shop.logs.String())
			}
			s := connect(t, shop.url)
			ctx := context.Background()
			list, err := s.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			metas := map[string]mcp.Meta{}
			for _, r := range list.Resources {
				metas["list "+r.URI] = r.Meta
				read, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
				if err != nil {
					t.Fatal(err)
				}
				metas["read "+r.URI] = read.Contents[0].Meta
			}
			for _, uri := range []string{widgets.ProductsURI, widgets.CheckoutURI} {
				for _, at := range []string{"list ", "read "} {
					meta, ok := metas[at+uri]
					if !ok {
						t.Fatalf("no %s%s", at, uri)
					}
					ui, _ := mcptest.JSON(t, meta["ui"]).(map[string]any)
					got := map[string]any{"ui.domain": ui["domain"], "openai/widgetDomain": meta["openai/widgetDomain"]}
					want := map[string]any{"ui.domain": nil, "openai/widgetDomain": nil}
					if tc.domain != "" {
						want = map[string]any{"ui.domain": tc.domain, "openai/widgetDomain": tc.domain}
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%s%s: the domain (-want +got):\n%s", at, uri, diff)
					}
				}
			}
		})
	}
}

// TestIdempotentHints: every tool says whether a replay of the same call
// changes nothing more (idempotentHint), as decided here one by one; a new
// tool fails until it is added.
func TestIdempotentHints(t *testing.T) {
	want := map[string]bool{
		// Buyers: each create makes a new session, each link a new page.
		"search_products": true, "get_product": true, "get_checkout_session": true, "get_order": true,
		"render_products": true, "render_checkout": true,
		"create_checkout_session": false, "create_payment_link": false,
		"update_checkout_session": true, "cancel_checkout_session": true,
		"complete_checkout": true, // a replay answers the same order and charges nothing
		// Staff: a confirm token works once; a note or a parcel is added again.
		"list_orders": true, "sales_report": true, "list_audit_events": true,
		"refund_order": true, "cancel_order": true, "adjust_inventory": true,
		"fulfill_order": false, "add_order_note": false,
		// A linked buyer's: an address is saved again; a deletion leaves
		// nothing to delete, but its replay is refused, not answered alike.
		"get_my_account": true, "list_my_orders": true, "get_my_order": true,
		"add_my_address": false, "remove_my_address": true, "set_my_default_address": true,
		"delete_my_account": false, "delete_account": false,
		"list_my_payment_methods": true, "remove_my_payment_method": true,
		// Returns: a request makes another return (or is refused as already
		// returned), a cancel or a rejection of a return that ended is
		// refused; accepting is two steps, its confirm token works once.
		"request_return": false, "cancel_return": false,
		"list_returns": true, "accept_return": true, "reject_return": false,
	}
	shop := startShop(t, dbtest.DSN(t, database.SQLite), map[string]string{"SHOP_ADMIN_TOKENS": "owner:" + ownerToken})
	seen := map[string]bool{}
	for _, s := range []*mcp.ClientSession{connect(t, shop.url), connectAdmin(t, shop.url, ownerToken)} {
		list, err := s.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Tools {
			name := tool.Name
			if seen[name] {
				name += " (staff)"
			}
			seen[tool.Name] = true
			w, ok := want[tool.Name]
			switch {
			case !ok:
				t.Errorf("%s: decide whether a replay changes nothing and add it here", name)
			case tool.Annotations == nil || tool.Annotations.IdempotentHint != w:
				t.Errorf("%s: annotations %+v, want idempotentHint %v", name, tool.Annotations, w)
			case tool.Annotations.OpenWorldHint == nil || *tool.Annotations.OpenWorldHint:
				t.Errorf("%s: openWorldHint is not false", name)
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no tool %s", name)
		}
	}
}
