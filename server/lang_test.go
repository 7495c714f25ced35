package server_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop/database/dbtest"
	"shop/i18n"
)

// fetch sends a request with an Accept-Language header (none when lang is
// "") and answers its status and body, redirects not followed.
func fetch(t *testing.T, method, target, lang string, form url.Values) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

var (
	styleElement = regexp.MustCompile(`(?s)<style>.*?</style>`)
	markup       = regexp.MustCompile(`<[^>]*>`)
)

// visible is the text of a page a buyer reads: no markup, no stylesheet.
func visible(page string) string {
	return markup.ReplaceAllString(styleElement.ReplaceAllString(page, ""), " ")
}

// checkWords fails unless the page's visible text has each of want and
// none of the English labels in english.
func checkWords(t *testing.T, what, page string, want, english []string) {
	t.Helper()
	text := visible(page)
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
	for _, e := range english {
		if strings.Contains(text, e) {
			t.Errorf("%s shows the English %q:\n%s", what, e, text)
		}
	}
}

// payEnglish are English labels of the payment page.
var payEnglish = []string{"Your order", "Card (Stripe test cards)", "Email (for the receipt)", "Cancel and return to the conversation",
	"your cart is kept", "Quantity", "Unit price", "Line total", "Subtotal", "Test mode", "sandbox", "ending", "succeeds", "declined",
	"This page is open until", "By paying", "Terms of use", "Pay $", "Shipping", "Expected"}

// TestPayPageLanguage: the sandbox payment page, its decline and its
// "order changed" answer, and its message pages are in the language of the
// buyer's Accept-Language, English when it names none the shop has; the
// product and shipping option keep the merchant's words.
func TestPayPageLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := newPayShop(t, db)
		cases := []struct {
			header, lang      string
			want, decline     []string
			changed, canceled string
		}{
			{"de-DE", "de", []string{"Deine Bestellung", "Karte (Stripe-Testkarten)", "E-Mail (für die Quittung)", "Menge", "Stückpreis",
				"Zwischensumme", "Versand", "Testmodus", "Visa mit Endziffern 4242: erfolgreich", "abgelehnt, unzureichende Deckung",
				"Abbrechen und zum Gespräch zurückkehren", "Diese Seite ist bis", "bezahlen", "Enamel", "Standard"},
				[]string{"Deine Karte hat keine ausreichende Deckung. Versuche es mit einer anderen Karte."},
				"Der Gesamtbetrag ist jetzt", "Zahlung abgebrochen"},
			{"ja-JP,ja;q=0.9", "ja", []string{"ご注文内容", "カード（Stripe のテストカード）", "数量", "単価", "小計", "配送",
				"Visa（末尾 4242）：成功", "キャンセルして会話に戻る", "このページは", "Enamel", "Standard"},
				[]string{"カードの残高が不足しています。別のカードをお試しください。"},
				"現在の合計は", "お支払いはキャンセルされました"},
		}
		for _, tc := range cases {
			t.Run(tc.lang, func(t *testing.T) {
				l := i18n.Named(tc.lang)
				s := p.readyMug(t)
				page := p.url + "/pay/" + s.ID + "?t=" + p.co.PayToken(s.ID)
				total := p.policy.Currency().FormatIn(tc.lang, sessionTotal(s))
				status, body := fetch(t, "GET", page, tc.header, nil)
				if status != http.StatusOK || !strings.Contains(body, `<html lang="`+tc.lang+`">`) {
					t.Fatalf("page: %d, want 200 in %s:\n%s", status, tc.lang, body)
				}
				checkWords(t, "the page", body, append(tc.want, l.T("pay", "total", total), l.Date(s.ExpiresAt)), payEnglish)

				form := url.Values{"t": {p.co.PayToken(s.ID)}, "card": {"pm_card_chargeDeclinedInsufficientFunds"}, "email": {"ada@example.com"}, "seen": {seenOf(t, body)}}
				status, body = fetch(t, "POST", p.url+"/pay/"+s.ID, tc.header, form)
				if status != http.StatusPaymentRequired {
					t.Fatalf("decline: %d\n%s", status, body)
				}
				checkWords(t, "the decline", body, tc.decline, append(payEnglish, "insufficient", "Try another card"))

				form.Set("card", "pm_card_visa")
				form.Set("seen", strings.Repeat("A", 43))
				status, body = fetch(t, "POST", p.url+"/pay/"+s.ID, tc.header, form)
				if status != http.StatusConflict {
					t.Fatalf("changed: %d\n%s", status, body)
				}
				checkWords(t, "the changed order", body, []string{tc.changed, total}, append(payEnglish, "This order changed", "Nothing was charged"))

				status, body = fetch(t, "GET", p.url+"/pay/"+s.ID+"/cancel?t="+p.co.PayToken(s.ID), tc.header, nil)
				if status != http.StatusOK {
					t.Fatalf("cancel: %d\n%s", status, body)
				}
				checkWords(t, "the cancel page", body, []string{tc.canceled, l.T("checkAgain")}, []string{"Payment canceled", "Nothing was charged", "Check again"})

				status, body = fetch(t, "GET", p.url+"/pay/"+s.ID+"?t=wrong", tc.header, nil)
				if status != http.StatusNotFound {
					t.Fatalf("wrong token: %d", status)
				}
				checkWords(t, "the not-found page", body, []string{l.T("msg_not_found_title")}, []string{"Payment page not found", "This payment link is not valid"})
			})
		}
		for _, header := range []string{"", "ko-KR", "xx-YY;q=0.8", "*"} {
			s := p.readyMug(t)
			status, body := fetch(t, "GET", p.url+"/pay/"+s.ID+"?t="+p.co.PayToken(s.ID), header, nil)
			if status != http.StatusOK || !strings.Contains(body, `<html lang="en">`) {
				t.Fatalf("Accept-Language %q: %d, want English:\n%s", header, status, body)
			}
			checkWords(t, "the English page", body, []string{"Your order", "Card (Stripe test cards)", "Quantity", "Visa ending 4242: succeeds",
				"Pay " + p.policy.Currency().Format(sessionTotal(s))}, []string{"Deine", "Menge", "数量"})
		}
	})
}

// TestReceiptPageLanguage: the receipt, and its not-found page, are in the
// buyer's language; names, addresses and the shipping option are the
// merchant's, and amounts keep their format.
func TestReceiptPageLanguage(t *testing.T) {
	ts, _, ord := receiptShop(t)
	_, token, _ := strings.Cut(ord.PermalinkURL, "?t=")
	page := ts.URL + "/orders/" + ord.ID + "?t=" + token + "&paid=1"
	english := []string{"Order 1001", "Thank you", "Placed", "Confirmation sent", "Quantity", "Unit price", "Line total",
		"Item discounts", "Subtotal", "Tax", "Shipping", "Expected", "between", "October", "Provider", "Reference", "succeeded",
		"Policies you agreed to", "Terms of use", "Returns", "Anyone with", "confirmed"}
	cases := []struct {
		header, lang string
		want         []string
	}{
		{"de-DE", "de", []string{"Bestellung Nr. 1001", "Danke", "Aufgegeben am 1. Oktober 2025, 12:30 UTC", "Status: bestätigt",
			"Menge", "Stückpreis", "Zwischensumme", "Umsatzsteuer", "Versand", "Standard mit USPS: 5,00\u00a0$.",
			"Voraussichtlich zwischen 4. Oktober 2025 und 6. Oktober 2025.", "Rabatt −10,00\u00a0$", "1.022,00\u00a0$", "Vereinigte Staaten",
			"erfolgreich", "Nutzungsbedingungen", "Rückgabe", "Jane Doe", "Enamel mug", "Springfield, IL 62701"}},
		{"ja-JP", "ja", []string{"注文番号 1001", "ありがとうございます", "注文日時：2025年10月1日 12:30 UTC", "状況：確定",
			"数量", "単価", "小計", "税", "配送", "Standard（USPS）：$5.00。お届け予定：2025年10月4日〜2025年10月6日。",
			"割引 −$10.00", "$1,022.00", "アメリカ合衆国", "成功", "利用規約", "Jane Doe", "Enamel mug"}},
	}
	for _, tc := range cases {
		t.Run(tc.lang, func(t *testing.T) {
			status, body := fetch(t, "GET", page, tc.header, nil)
			if status != http.StatusOK || !strings.Contains(body, `<html lang="`+tc.lang+`">`) {
				t.Fatalf("receipt: %d, want 200 in %s:\n%s", status, tc.lang, body)
			}
			checkWords(t, "the receipt", body, tc.want, english)
			status, body = fetch(t, "GET", ts.URL+"/orders/"+ord.ID+"?t=wrong", tc.header, nil)
			if status != http.StatusNotFound || !strings.Contains(body, `<html lang="`+tc.lang+`">`) {
				t.Fatalf("not found: %d\n%s", status, body)
			}
			checkWords(t, "the not-found page", body, []string{i18n.Named(tc.lang).T("receipt_notfound_title")}, []string{"Receipt not found", "not valid"})
		})
	}
	for _, header := range []string{"", "ko-KR"} {
		status, body := fetch(t, "GET", page, header, nil)
		if status != http.StatusOK || !strings.Contains(body, `<html lang="en">`) {
			t.Fatalf("Accept-Language %q: %d, want English", header, status)
		}
		checkWords(t, "the English receipt", body, []string{"Order 1001", "Placed 1 October 2025, 12:30 UTC", "Status: confirmed", "Quantity",
			"Standard by USPS: $5.00. Expected between 4 October 2025 and 6 October 2025."}, []string{"Bestellung", "注文"})
	}
}
