package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"shop/catalog"
	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/server"
)

// payCheckout is the demo shop's checkout with one session ready for
// payment, on the sandbox's payment page.
func payCheckout(t *testing.T) (*checkout.Checkout, string) {
	t.Helper()
	ctx := context.Background()
	db := dbtest.Open(t, database.SQLite)
	policy, err := checkout.LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.New(db, policy.Currency(), nil)
	if _, err := cat.SeedIfEmpty(ctx, os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
		t.Fatal(err)
	}
	c := checkout.New(db, policy, cat, nil)
	s, err := c.Create(ctx, checkout.Request{
		Items: &[]checkout.Item{{ID: "enamel-camp-mug-cream", Quantity: 1}},
		Address: &checkout.Address{Name: "Ada Lovelace", LineOne: "1 Market St", City: "San Francisco", State: "CA",
			Country: "US", PostalCode: "94105"},
		Buyer: &checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"},
	})
	if err != nil || s.Status != checkout.Ready {
		t.Fatalf("session: %v %+v", err, s)
	}
	return c, s.ID
}

// TestPageHeaders: the receipt and the payment pages, found or not, may be
// framed by no site (CSP frame-ancestors 'none', merged into each page's
// own policy, and X-Frame-Options DENY), and tell browsers to stay on https
// when the shop's public URL is https.
func TestPageHeaders(t *testing.T) {
	_, o, ord := receiptShop(t)
	c, sessionID := payCheckout(t)
	for _, publicURL := range []string{"https://shop.example.com", "http://127.0.0.1:8000"} {
		t.Run(publicURL, func(t *testing.T) {
			srv, err := server.New(server.Options{
				PublicURL: publicURL,
				Receipts:  server.ReceiptHandler(o, nil),
				Pay:       server.PayPages(c, server.PayOptions{Shop: "Demo"}),
			})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv.Handler())
			defer ts.Close()
			receipt := strings.TrimPrefix(ord.PermalinkURL, "https://shop.example.com")
			for _, tc := range []struct {
				name, path string
				status     int
				keep       []string // directives of the page's own policy
			}{
				{"Receipt", receipt, http.StatusOK, []string{"default-src 'none'", "style-src 'unsafe-inline'", "img-src 'self'"}},
				{"ReceiptNotFound", receipt + "x", http.StatusNotFound, []string{"default-src 'none'"}},
				{"PayPage", "/pay/" + sessionID + "?t=" + c.PayToken(sessionID), http.StatusOK, []string{"default-src 'none'", "form-action 'self'"}},
				{"PayPageNotFound", "/pay/" + sessionID + "?t=wrong", http.StatusNotFound, []string{"default-src 'none'", "form-action 'self'"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res, err := http.Get(ts.URL + tc.path)
					if err != nil {
						t.Fatal(err)
					}
					res.Body.Close()
					if res.StatusCode != tc.status {
						t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
					}
					csp := res.Header.Values("Content-Security-Policy")
					if len(csp) != 1 || strings.Count(csp[0], "frame-ancestors") != 1 || !strings.HasSuffix(csp[0], "; frame-ancestors 'none'") {
						t.Errorf("Content-Security-Policy %q; want one policy with frame-ancestors 'none'", csp)
					}
					for _, d := range tc.keep {
						if len(csp) > 0 && !strings.Contains(csp[0], d) {
							t.Errorf("Content-Security-Policy %q lost the page's %s", csp, d)
						}
					}
					if got := res.Header.Get("X-Frame-Options"); got != "DENY" {
						t.Errorf("X-Frame-Options %q, want DENY", got)
					}
					want := ""
					if strings.HasPrefix(publicURL, "https:") {
						want = "max-age=31536000"
					}
					if got := res.Header.Get("Strict-Transport-Security"); got != want {
						t.Errorf("Strict-Transport-Security %q, want %q", got, want)
					}
				})
			}
		})
	}
}
