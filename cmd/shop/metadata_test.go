package main

import (
	"strings"
	"testing"

	"shop/database"
	"shop/database/dbtest"
)

// TestInputRefusedOverMCP: over MCP, metadata beyond the bounds and text
// with control characters or bidirectional overrides are refused with the
// JSONPath of the field and what to send.
func TestInputRefusedOverMCP(t *testing.T) {
	shop := startShop(t, dbtest.DSN(t, database.SQLite), nil)
	s := connect(t, shop.url)
	items := []map[string]any{{"id": "enamel-camp-mug-cream", "quantity": 1}}
	with := func(k string, v any) map[string]any { return map[string]any{"items": items, k: v} }
	addr := func(k, v string) map[string]any {
		a := map[string]any{}
		for key, val := range address {
			a[key] = val
		}
		a[k] = v
		return a
	}
	for _, tc := range []struct {
		name  string
		args  map[string]any
		param string
	}{
		{"MetadataOverride", with("metadata", map[string]any{"note": "abc\u202Edcba"}), "$.metadata.note"},
		{"MetadataNewline", with("metadata", map[string]any{"note": "one\ntwo"}), "$.metadata.note"},
		{"MetadataKey", with("metadata", map[string]any{"gift note": "x"}), "$.metadata"},
		{"MetadataTotal", with("metadata", map[string]any{"a": strings.Repeat("x", 500), "b": strings.Repeat("x", 500), "c": strings.Repeat("x", 500),
			"d": strings.Repeat("x", 500), "e": strings.Repeat("x", 500), "f": strings.Repeat("x", 500), "g": strings.Repeat("x", 500),
			"h": strings.Repeat("x", 500), "i": strings.Repeat("x", 500)}), "$.metadata"},
		{"BuyerNameIsolate", with("buyer", map[string]any{"name": "Ada \u2067Lovelace", "email": "ada@example.com"}), "$.buyer.name"},
		{"AddressLineControl", with("fulfillment_address", addr("line_one", "1 Market St\x1b[2J")), "$.fulfillment_address.line_one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, s, "create_checkout_session", tc.args)
			if !res.IsError || !strings.HasPrefix(text(res), tc.param+": ") {
				t.Errorf("got %q; want an error at %s", text(res), tc.param)
			}
		})
	}
}
