package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
)

// acceptLanguage makes the tab send Accept-Language: lang with every
// request, as a browser set to that language does.
func acceptLanguage(lang string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": lang}})
		return chromedp.Void{}, err
	}
}

// TestPayPageLanguageBrowser: the shop's payment page, opened in Chromium
// set to German and to Japanese, shows its labels in that language and none
// in English (issue 49); its screenshots are saved as
// TestPayPageLanguageBrowser-de-DE.png and …-ja-JP.png in the artifacts.
func TestPayPageLanguageBrowser(t *testing.T) {
	chromium := needChromium(t)
	shop := startShop(t, dbtest.DSN(t, database.SQLite), nil)
	s := connect(t, shop.url)
	cs := readySession(t, s)
	link := structured[checkout.PaymentLink](t, call(t, s, "create_payment_link", map[string]any{"checkout_session_id": cs.ID}))
	u, err := url.Parse(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	page := shop.url + u.RequestURI()
	bctx := browser(t, chromium)

	// english are the page's English labels; none may show in another language.
	english := []string{"Pay ", "Your order", "Test mode", "sandbox", "Item", "Quantity", "Unit price", "Line total", "Subtotal",
		"Shipping", "Tax", "Total", "Card", "test cards", "ending", "succeeds", "declined", "Email", "receipt",
		"By paying", "Terms of use", "Privacy", "Returns", "Support", "Cancel", "conversation", "your cart is kept", "This page is open until"}
	cases := []struct {
		lang, tag string
		want      []string
	}{
		{"de-DE", "de", []string{"Deine Bestellung", "Menge", "Stückpreis", "Karte (Stripe-Testkarten)", "E-Mail (für die Quittung)", "bezahlen"}},
		{"ja-JP", "ja", []string{"ご注文内容", "数量", "単価", "カード（Stripe のテストカード）", "キャンセルして会話に戻る"}},
	}
	for _, tc := range cases {
		t.Run(tc.lang, func(t *testing.T) {
			ctx, cancel := chromedp.NewContext(bctx)
			defer cancel()
			if err := chromedp.Do(ctx); err != nil {
				t.Fatalf("open a tab: %v", err)
			}
			tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
			defer tcancel()
			if err := chromedp.Do(tctx, acceptLanguage(tc.lang), chromedp.EmulateViewport(800, 1000),
				chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#pay-form"))); err != nil {
				t.Fatalf("open the payment page: %v", err)
			}
			var shown struct {
				Lang, Text string
			}
			if err := evaluate(tctx, `({lang: document.documentElement.lang, text: document.body.innerText + "\n" + document.title})`, &shown); err != nil {
				t.Fatal(err)
			}
			png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			file := filepath.Join(artifacts(t), fmt.Sprintf("TestPayPageLanguageBrowser-%s.png", tc.lang))
			if err := os.WriteFile(file, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", file)
			if shown.Lang != tc.tag {
				t.Errorf("<html lang=%q>, want %q", shown.Lang, tc.tag)
			}
			// The merchant's words stay as written: the product's name.
			text := strings.ReplaceAll(shown.Text, "Enamel Camp Mug", "")
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the page lacks %q:\n%s", w, shown.Text)
				}
			}
			for _, e := range english {
				if strings.Contains(text, e) {
					t.Errorf("the page shows the English %q:\n%s", e, shown.Text)
				}
			}
		})
	}
}
