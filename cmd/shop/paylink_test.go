package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
)

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// fetch answers a request's status, Location and body.
func fetch(t *testing.T, req *http.Request) (int, string, string) {
	t.Helper()
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(body)
}

func get(t *testing.T, u string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fetch(t, req)
}

// payForm posts the sandbox page's form as a browser on the shop's page does:
// with the figures the page shows now (its "seen" field).
func payForm(t *testing.T, link string, form url.Values) (int, string, string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	form.Set("t", u.Query().Get("t"))
	if _, _, page := get(t, link); form.Get("seen") == "" {
		if m := seenField.FindStringSubmatch(page); m != nil {
			form.Set("seen", m[1])
		}
	}
	u.RawQuery = ""
	req, err := http.NewRequest("POST", u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return fetch(t, req)
}

// TestPaymentLinkSandbox: without a Stripe key, create_payment_link answers
// the shop's own page, which pays through complete_checkout's path: a
// decline shows again with the reason, a payment sends the buyer to the
// receipt, which says they can go back to the conversation; paying again,
// or many times at once, places one order.
func TestPaymentLinkSandbox(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			shop := startShop(t, dsn, nil)
			s := connect(t, shop.url)
			cs := readySession(t, s)
			res := call(t, s, "create_payment_link", map[string]any{"checkout_session_id": cs.ID})
			if res.IsError {
				t.Fatal(text(res))
			}
			link := structured[checkout.PaymentLink](t, res)
			if link.Provider != "sandbox" || !strings.Contains(link.URL, "/pay/"+cs.ID+"?t=") || !strings.Contains(text(res), link.URL) {
				t.Fatalf("link %+v, text %q", link, text(res))
			}
			// The shop's address is the public URL's; the test reaches it on its own port.
			u, _ := url.Parse(link.URL)
			link.URL = shop.url + u.RequestURI()

			code, _, body := get(t, link.URL)
			total := cs.Totals[len(cs.Totals)-1]
			if code != 200 || !strings.Contains(body, `id="pay-form"`) || !strings.Contains(body, total.DisplayText) && !strings.Contains(body, "Pay $") {
				t.Fatalf("page: %d\n%s", code, body)
			}
			for _, want := range []string{`value="ada@example.com"`, "Enamel Camp Mug", "Terms of use", `id="card-pm_card_visa"`, `id="pay-cancel"`} {
				if !strings.Contains(strings.ToLower(body), strings.ToLower(want)) {
					t.Errorf("page lacks %q", want)
				}
			}
			if code, _, _ := get(t, strings.Replace(link.URL, "?t=", "?t=A", 1)); code != 404 {
				t.Errorf("wrong token: %d, want 404", code)
			}

			code, _, body = payForm(t, link.URL, url.Values{"card": {"pm_card_visa_chargeDeclined"}, "email": {"ada@example.com"}})
			if code != http.StatusPaymentRequired || !strings.Contains(body, `id="pay-error"`) || !strings.Contains(body, "declined") || !strings.Contains(body, `id="pay-form"`) {
				t.Fatalf("declined: %d\n%s", code, body)
			}
			code, _, body = payForm(t, link.URL, url.Values{"card": {"pm_card_nosuch"}, "email": {"ada@example.com"}})
			if code != http.StatusPaymentRequired || !strings.Contains(body, "Choose one of the test cards") {
				t.Errorf("unknown card: %d", code)
			}

			// Many payments at once (a double click, a reload): one order.
			var wg sync.WaitGroup
			codes := make(chan int, 8)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					code, _, _ := payForm(t, link.URL, url.Values{"card": {"pm_card_visa"}, "email": {"ada@example.com"}})
					codes <- code
				}()
			}
			wg.Wait()
			close(codes)
			for c := range codes {
				if c != http.StatusSeeOther && c != http.StatusAccepted {
					t.Errorf("concurrent payment answered %d", c)
				}
			}
			code, loc, _ := payForm(t, link.URL, url.Values{"card": {"pm_card_visa"}})
			if code != http.StatusSeeOther || !strings.Contains(loc, "/orders/") || !strings.HasSuffix(loc, "&paid=1") {
				t.Fatalf("paid: %d %q", code, loc)
			}
			r, _ := url.Parse(loc)
			code, _, body = get(t, shop.url+r.RequestURI())
			if code != 200 || !strings.Contains(body, `id="return-note"`) || !strings.Contains(body, "return to the conversation") {
				t.Errorf("receipt after paying: %d\n%s", code, body)
			}
			done := session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": cs.ID}))
			if done.Status != checkout.Completed || done.Order == nil || !strings.HasPrefix(loc, done.Order.PermalinkURL) {
				t.Fatalf("session after paying: %s %+v", done.Status, done.Order)
			}
			if n := rows(t, dsn, "orders", "sandbox_charges"); n["orders"] != 1 || n["sandbox_charges"] != 2 {
				t.Errorf("rows %v; want 1 order and 2 charges (the decline and the payment)", n)
			}
			if code, loc, _ := get(t, link.URL); code != http.StatusSeeOther || !strings.HasPrefix(loc, done.Order.PermalinkURL) {
				t.Errorf("the page after paying: %d %q, want the receipt", code, loc)
			}
		})
	}
}

// TestPaymentLinkPage covers the page's other ways: leaving it, a session
// not ready, a cross-site form.
func TestPaymentLinkPage(t *testing.T) {
	shop := startShop(t, dbtest.DSN(t, database.SQLite), nil)
	s := connect(t, shop.url)
	cs := readySession(t, s)
	link := structured[checkout.PaymentLink](t, call(t, s, "create_payment_link", map[string]any{"checkout_session_id": cs.ID}))
	u, _ := url.Parse(link.URL)
	page := shop.url + u.RequestURI()

	t.Run("CrossSite", func(t *testing.T) {
		req, _ := http.NewRequest("POST", shop.url+u.Path, strings.NewReader(url.Values{"t": {u.Query().Get("t")}, "card": {"pm_card_visa"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		if code, _, _ := fetch(t, req); code != http.StatusForbidden {
			t.Errorf("cross-site post: %d, want 403", code)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		code, _, body := get(t, strings.Replace(page, "/pay/"+cs.ID+"?", "/pay/"+cs.ID+"/cancel?", 1))
		if code != 200 || !strings.Contains(body, "cart is kept") {
			t.Fatalf("cancel page: %d\n%s", code, body)
		}
		got := session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": cs.ID}))
		found := false
		for _, m := range got.Messages {
			found = found || m.Code == checkout.PaymentCanceled
		}
		if got.Status != checkout.Ready || !found {
			t.Errorf("after cancel: %s %+v", got.Status, got.Messages)
		}
	})
	t.Run("NotReady", func(t *testing.T) {
		session(t, call(t, s, "update_checkout_session", map[string]any{"checkout_session_id": cs.ID, "fulfillment_address": map[string]any{"country": "US"}}))
		code, _, body := get(t, page)
		if code != http.StatusConflict || !strings.Contains(body, "not ready for payment") {
			t.Errorf("page of a session not ready: %d\n%s", code, body)
		}
		res := call(t, s, "create_payment_link", map[string]any{"checkout_session_id": cs.ID})
		if !res.IsError || !strings.HasPrefix(text(res), "$.checkout_session_id: ") {
			t.Errorf("link for a session not ready: %s", text(res))
		}
	})
	t.Run("Canceled", func(t *testing.T) {
		session(t, call(t, s, "cancel_checkout_session", map[string]any{"checkout_session_id": cs.ID}))
		if code, _, _ := get(t, page); code != http.StatusGone {
			t.Errorf("page of a canceled session: %d, want 410", code)
		}
	})
}
