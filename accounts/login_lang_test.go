package accounts_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop/database/dbtest"
)

// langTransport sends every request with an Accept-Language header.
type langTransport string

func (l langTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if l != "" {
		r.Header.Set("Accept-Language", string(l))
	}
	return http.DefaultTransport.RoundTrip(r)
}

var (
	styleElement = regexp.MustCompile(`(?s)<style>.*?</style>`)
	markup       = regexp.MustCompile(`<[^>]*>`)
)

// checkPage fails unless page is in lang, its visible text has each of
// want and none of the English words in english.
func checkPage(t *testing.T, what, page, lang string, want, english []string) {
	t.Helper()
	if !strings.Contains(page, `<html lang="`+lang+`">`) {
		t.Errorf("%s is not in %s:\n%s", what, lang, page)
	}
	text := markup.ReplaceAllString(styleElement.ReplaceAllString(page, ""), " ")
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

// checkCodeEmail fails unless the sign-in code email to email has subject
// and, unless lang is English, a body without the English words in english.
func checkCodeEmail(t *testing.T, e *env, email, lang, subject string, english []string) {
	t.Helper()
	var m struct{ Subject, BodyText, BodyHTML string }
	if err := e.db.Raw("SELECT subject, body_text, body_html FROM emails WHERE recipient = lower(?) AND kind = 'login_code'", email).Scan(&m).Error; err != nil {
		t.Fatalf("the code email: %v", err)
	}
	if m.Subject != subject {
		t.Errorf("the code email's subject is %q, want %q", m.Subject, subject)
	}
	if lang == "en" {
		return
	}
	english = append(english, "Your code", "did not ask")
	for _, body := range []string{m.BodyText, markup.ReplaceAllString(m.BodyHTML, " ")} {
		for _, w := range english {
			if strings.Contains(body, w) {
				t.Errorf("the code email shows the English %q:\n%s", w, body)
			}
		}
	}
}

// loginEnglish are English words of the sign-in pages.
var loginEnglish = []string{"Sign in", "asks to connect", "Your email", "six-digit", "Email me a code", "Check your email",
	"Continue", "is not right", "tries left", "Connect", "will be able to", "see your orders", "see and change your account",
	"disconnect", "Allow", "Deny", "Sign-in stopped", "expired"}

// TestLoginPagesLanguage: the sign-in pages (email, code, a wrong code,
// consent, a stopped sign-in) and the email with the code are in the
// language of the browser's Accept-Language, English when it names none the
// shop has; the shop's and the client's names are theirs.
func TestLoginPagesLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		cases := []struct {
			header, lang                       string
			email, code, wrong, consent, stops []string
			mail                               string // the code email's subject
		}{
			{"de-DE,de;q=0.9,en;q=0.5", "de",
				[]string{"Bei Northwind Goods anmelden", "Test Host", "möchte sich mit deinem Konto bei Northwind Goods verbinden", "Deine E-Mail-Adresse", "Code per E-Mail senden"},
				[]string{"Sieh in dein Postfach", "sechsstelliger Code", "Weiter"},
				[]string{"Dieser Code stimmt nicht. Noch 4 Versuche."},
				[]string{"Test Host verbinden?", "deine Bestellungen sehen", "dein Konto sehen und ändern", "Erlauben", "Ablehnen"},
				[]string{"Anmeldung abgebrochen", "Diese Anmeldung ist abgelaufen"},
				"Dein Anmeldecode für Northwind Goods"},
			{"ja-JP", "ja",
				[]string{"Northwind Goods にサインイン", "Test Host", "のあなたのアカウントへの接続を求めています", "メールアドレス", "コードをメールで受け取る"},
				[]string{"メールを確認してください", "6 桁のコード", "続ける"},
				[]string{"コードが正しくありません。残り 4 回です。"},
				[]string{"Test Host を接続しますか？", "注文の閲覧", "アカウントの閲覧と変更", "許可する", "拒否する"},
				[]string{"サインインを中止しました", "期限切れ"},
				"Northwind Goods のサインインコード"},
			{"", "en",
				[]string{"Sign in to Northwind Goods", "asks to connect to your Northwind Goods account", "Your email", "Email me a code"},
				[]string{"Check your email", "six-digit code", "Continue"},
				[]string{"That code is not right. 4 tries left."},
				[]string{"Connect Test Host?", "see your orders", "Allow", "Deny"},
				[]string{"Sign-in stopped", "has expired"},
				"Your sign-in code for Northwind Goods"},
			{"ko-KR", "en", []string{"Sign in to Northwind Goods"}, []string{"Check your email"}, []string{"4 tries left"}, []string{"Allow"}, []string{"Sign-in stopped"},
				"Your sign-in code for Northwind Goods"},
		}
		for i, tc := range cases {
			t.Run(tc.lang+"/"+tc.header, func(t *testing.T) {
				english := loginEnglish
				if tc.lang == "en" {
					english = []string{"Anmeldung", "サインイン"}
				}
				b := browser()
				b.Transport = langTransport(tc.header)
				_, challenge := pkce()
				status, page := read(t)(b.Get(e.authorizeURL(e.clientID, e.redirect, challenge, e.url+"/mcp")))
				if status != http.StatusOK {
					t.Fatalf("authorize: %d\n%s", status, page)
				}
				checkPage(t, "the email page", page, tc.lang, tc.email, english)
				csrf := csrfOf(t, page)
				email := "lang" + string(rune('a'+i)) + "@example.com"
				status, page = read(t)(b.PostForm(e.url+"/login/email", url.Values{"csrf": {csrf}, "email": {email}}))
				if status != http.StatusOK {
					t.Fatalf("email: %d\n%s", status, page)
				}
				checkPage(t, "the code page", page, tc.lang, tc.code, english)
				checkCodeEmail(t, e, email, tc.lang, tc.mail, english)
				status, page = read(t)(b.PostForm(e.url+"/login/code", url.Values{"csrf": {csrf}, "code": {"000000x"}}))
				if status != http.StatusUnprocessableEntity {
					t.Fatalf("wrong code: %d\n%s", status, page)
				}
				checkPage(t, "the wrong code page", page, tc.lang, tc.wrong, english)
				status, page = read(t)(b.PostForm(e.url+"/login/code", url.Values{"csrf": {csrf}, "code": {e.lastCode(t, email)}}))
				if status != http.StatusOK {
					t.Fatalf("code: %d\n%s", status, page)
				}
				checkPage(t, "the consent page", page, tc.lang, tc.consent, english)

				stranger := browser()
				stranger.Transport = langTransport(tc.header)
				status, page = read(t)(stranger.PostForm(e.url+"/login/email", url.Values{"csrf": {csrf}, "email": {email}}))
				if status != http.StatusBadRequest {
					t.Fatalf("a form without the flow's cookie: %d\n%s", status, page)
				}
				checkPage(t, "the stopped page", page, tc.lang, tc.stops, english)
			})
		}
	})
}
