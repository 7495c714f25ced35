package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"shop/contract"
	"shop/database"
	"shop/database/dbtest"
	"shop/orders"
	"shop/server"
)

// receiptShop is a receipt page over one stored order.
func receiptShop(t *testing.T) (*httptest.Server, *orders.Orders, *contract.Order) {
	t.Helper()
	ctx := context.Background()
	db := dbtest.Open(t, database.SQLite)
	now := time.Date(2025, 10, 1, 12, 30, 0, 0, time.UTC)
	o := orders.New(db, &orders.Options{PublicURL: "https://shop.example.com", ReceiptKey: []byte(strings.Repeat("k", 32)),
		Now: func() time.Time { return now }})
	err := db.Exec(`INSERT INTO checkout_sessions (id, status, version, currency, items, priced, total, expires_at, created_at, updated_at)
		VALUES ('cs_1', 'in_progress', 1, 'usd', '[]', '{}', 0, ?, ?, ?)`, now, now, now).Error
	if err != nil {
		t.Fatal(err)
	}
	ord, err := o.Create(ctx, nil, orders.NewOrder{
		SessionID: "cs_1",
		Buyer:     &contract.Buyer{Name: "Jane Doe", Email: "jane@example.com"},
		Address: &contract.Address{Name: "Jane Doe", LineOne: "1 Main St", City: "Springfield", State: "IL",
			Country: "US", PostalCode: "62701"},
		FulfillmentOption: &contract.FulfillmentOption{Type: "shipping", ID: "standard", Title: "Standard", Carrier: "USPS",
			EarliestDeliveryTime: now.AddDate(0, 0, 3), LatestDeliveryTime: now.AddDate(0, 0, 5), Subtotal: 500, Total: 500},
		LineItems: []contract.LineItem{
			{ID: "li_1", Item: contract.Item{ID: "mug", Quantity: 2}, Name: "Enamel mug",
				UnitAmount: 1250, BaseAmount: 2500, Subtotal: 2500, Tax: 200, Total: 2700},
			{ID: "li_2", Item: contract.Item{ID: "evil", Quantity: 1}, Name: `Mug <script>alert("x")</script> & co`,
				UnitAmount: 100000, BaseAmount: 100000, Discount: 1000, Subtotal: 99000, Tax: 0, Total: 99000},
		},
		Totals: []contract.Total{
			{Type: contract.TotalItemsBase, DisplayText: "Items", Amount: 102500},
			{Type: contract.TotalItemsDiscount, DisplayText: "Item discounts", Amount: 1000},
			{Type: contract.TotalSubtotal, DisplayText: "Subtotal", Amount: 101500},
			{Type: contract.TotalFulfillment, DisplayText: "Shipping", Amount: 500},
			{Type: contract.TotalTax, DisplayText: "Tax", Amount: 200},
			{Type: contract.TotalTotal, DisplayText: "Total", Amount: 102200},
		},
		Links: []contract.Link{
			{Type: "terms_of_use", URL: "https://shop.example.com/static/legal/terms.html"},
			{Type: "return_policy", URL: "javascript:alert(1)"},
		},
		Currency: "usd",
		Total:    102200,
		Payment:  contract.Payment{Provider: "stripe", Mode: "test", Reference: "pi_123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /orders/{order_id}", server.ReceiptHandler(o, slog.New(slog.NewTextHandler(io.Discard, nil))))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts, o, ord
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body)
}

func TestReceiptPage(t *testing.T) {
	ts, o, ord := receiptShop(t)
	_, token, _ := strings.Cut(ord.PermalinkURL, "?t=")
	other := orders.New(nil, &orders.Options{ReceiptKey: []byte(strings.Repeat("x", 32))})
	_, otherToken, _ := strings.Cut(other.PermalinkURL(ord.ID), "?t=")
	unknown := "ord_" + strings.Repeat("a", 26)
	_, unknownToken, _ := strings.Cut(o.PermalinkURL(unknown), "?t=")

	wantHeaders := map[string]string{
		"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'",
		"Cache-Control":           "private, no-store",
		"Referrer-Policy":         "no-referrer",
		"Content-Type":            "text/html; charset=utf-8",
	}
	cases := []struct {
		name, path string
		status     int
		contains   []string
	}{
		{"OK", "/orders/" + ord.ID + "?t=" + token, http.StatusOK, []string{
			`<html lang="en">`, "<main>", "<h1>Order 1001</h1>", "<caption>", `<th scope="col">`, `<th scope="row">`,
			"Enamel mug", "Mug &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co",
			"$12.50", "$25.00", "$1,000.00", "Discount −$10.00", "$1,022.00",
			"Subtotal", "Shipping", "Sales tax", "Total",
			"1 Main St", "Springfield, IL 62701", "Standard by USPS", "between 4 October 2025 and 6 October 2025",
			"test", "succeeded",
			`<a href="https://shop.example.com/static/legal/terms.html" rel="noreferrer">Terms of use</a>`,
			`<a href="#ZgotmplZ" rel="noreferrer">Returns</a>`, // the widgets' word for it,
		}},
		{"NoToken", "/orders/" + ord.ID, http.StatusNotFound, nil},
		{"EmptyToken", "/orders/" + ord.ID + "?t=", http.StatusNotFound, nil},
		{"WrongToken", "/orders/" + ord.ID + "?t=" + strings.Repeat("A", 43), http.StatusNotFound, nil},
		{"TamperedToken", "/orders/" + ord.ID + "?t=" + token[:len(token)-1] + string(token[len(token)-1]^1), http.StatusNotFound, nil},
		{"OtherKeysToken", "/orders/" + ord.ID + "?t=" + otherToken, http.StatusNotFound, nil},
		{"UnknownOrder", "/orders/" + unknown + "?t=" + unknownToken, http.StatusNotFound, nil},
	}
	var notFound string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, body := get(t, ts.URL+tc.path)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d:\n%s", res.StatusCode, tc.status, body)
			}
			got := map[string]string{}
			for k := range wantHeaders {
				got[k] = res.Header.Get(k)
			}
			if diff := cmp.Diff(wantHeaders, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			for _, s := range tc.contains {
				if !strings.Contains(body, s) {
					t.Errorf("page lacks %q", s)
				}
			}
			for _, s := range []string{"<script", "<img", "<link", "<iframe", "http://", "src="} {
				if strings.Contains(strings.ToLower(body), s) {
					t.Errorf("page contains %q", s)
				}
			}
			if tc.status == http.StatusOK {
				for _, s := range []string{"pi_123", "stripe", "sandbox", "Reference"} { // the provider's internals are not the buyer's
					if strings.Contains(body, s) {
						t.Errorf("the receipt shows %q", s)
					}
				}
			}
			if tc.status == http.StatusNotFound {
				for _, s := range []string{ord.ID, "1001", "Jane", "Enamel", "stripe"} {
					if strings.Contains(body, s) {
						t.Errorf("404 page reveals %q", s)
					}
				}
				if notFound == "" {
					notFound = body
				} else if body != notFound {
					t.Errorf("404 pages differ:\n%s", cmp.Diff(notFound, body))
				}
			}
		})
	}
}

func TestReceiptPageShape(t *testing.T) {
	ts, _, ord := receiptShop(t)
	_, query, _ := strings.Cut(ord.PermalinkURL, "?")
	url := ts.URL + "/orders/" + ord.ID + "?" + query
	res, err := http.Head(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("HEAD: status %d", res.StatusCode)
	}
	_, body := get(t, url)
	for s, n := range map[string]int{"<!doctype html>": 1, "<main>": 1, "<h1>": 1, "<caption>": 1, "<style>": 1, "@media print": 1} {
		if got := strings.Count(body, s); got != n {
			t.Errorf("%q appears %d times, want %d", s, got, n)
		}
	}
}
