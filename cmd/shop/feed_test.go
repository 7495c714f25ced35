package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shop/checkout"
	"shop/database/dbtest"
	"shop/feed"
)

// TestMerchantExports: a merchant's Shopify and WooCommerce exports import
// with `shop catalog import`, search and check out like the demo catalog,
// and `shop feed export` and GET /feeds/products.jsonl write the same feed
// of that catalog, whose variant ids checkout takes.
func TestMerchantExports(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			for _, file := range []string{"shopify.csv", "woocommerce.csv"} {
				out, err := runCmd(t, nil, "catalog", "import", "../../catalog/testdata/"+file, "--db", dsn)
				if err != nil || !strings.Contains(out, "imported 3 products") || !strings.Contains(out, "skipped") {
					t.Fatalf("catalog import %s: %v\n%s", file, err, out)
				}
			}
			shop := startShop(t, dsn, nil)
			s := connect(t, shop.url)

			// The feed over HTTP: the products imported.
			resp, err := http.Get(shop.url + "/feeds/products.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			served, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /feeds/products.jsonl: %s %v", resp.Status, err)
			}
			records := feedRecords(t, served)
			if len(records) != 6 {
				t.Fatalf("the feed has %d products, want the 6 imported", len(records))
			}
			apron := records["linen-apron"]
			if len(apron.Variants) != 3 || apron.Variants[0].Seller == nil || apron.Variants[0].Seller.Name != "Northwind Goods" {
				t.Fatalf("linen-apron in the feed: %+v", apron)
			}

			// Found by search, bought with the feed's variant id.
			found := structured[searchResult](t, call(t, s, "search_products", map[string]any{"query": "linen apron"}))
			if len(found.Products) != 1 || found.Products[0].ID != "linen-apron" || found.Products[0].Price.Amount != 4200 {
				t.Fatalf("search linen apron: %+v", found)
			}
			variant := apron.Variants[0].ID
			cs := session(t, call(t, s, "create_checkout_session", map[string]any{
				"items": []map[string]any{{"id": variant, "quantity": 2}}, "fulfillment_address": address, "fulfillment_option_id": "us-standard",
				"buyer": map[string]any{"name": "Ada Lovelace", "email": "ada@example.com"},
			}))
			if cs.Status != checkout.Ready || cs.LineItems[0].UnitAmount != apron.Variants[0].Price.Amount {
				t.Fatalf("checkout of %s: %s %+v", variant, cs.Status, cs.Messages)
			}
			if done := session(t, complete(t, s, cs.ID, "pm_card_visa")); done.Status != checkout.Completed || done.Order == nil {
				t.Fatalf("complete: %s %+v", done.Status, done.Messages)
			}
			got := structured[productResult](t, call(t, s, "get_product", map[string]any{"product_id": "linen-apron"}))
			if got.Product.Variants[0].ID != variant || got.Product.Variants[0].Available != 3 {
				t.Errorf("after buying 2 of 5: %+v", got.Product.Variants[0])
			}

			// shop feed export writes what the shop serves, in both formats.
			dir := t.TempDir()
			if _, err := runCmd(t, map[string]string{"SHOP_PUBLIC_URL": shop.url}, "feed", "export", "--db", dsn, "--out", filepath.Join(dir, "products.jsonl")); err != nil {
				t.Fatalf("feed export: %v", err)
			}
			exported, err := os.ReadFile(filepath.Join(dir, "products.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err = http.Get(shop.url + "/feeds/products.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			served, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(exported, served) {
				t.Errorf("shop feed export and GET /feeds/products.jsonl differ:\n%s\n%s", exported, served)
			}
			out, err := runCmd(t, nil, "feed", "export", "--db", dsn, "--format", "json")
			if err != nil {
				t.Fatal(err)
			}
			var whole struct{ Products []feed.Product }
			if err := json.Unmarshal([]byte(out), &whole); err != nil || len(whole.Products) != 6 {
				t.Errorf("feed export --format json: %v, %d products", err, len(whole.Products))
			}
			if _, err := runCmd(t, nil, "feed", "export", "--db", dsn, "--format", "xml"); !errors.Is(err, errUsage) {
				t.Errorf("--format xml: %v", err)
			}
		})
	}
}

// feedRecords returns the products of a JSON Lines feed by id (package
// feed's tests validate every record against ACP's schema).
func feedRecords(t *testing.T, data []byte) map[string]feed.Product {
	t.Helper()
	out := map[string]feed.Product{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var p feed.Product
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		out[p.ID] = p
	}
	return out
}
