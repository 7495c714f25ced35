package i18n

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCatalogsComplete fails when a catalog lacks a key English has, has a
// stray one, or leaves out (or adds) a {placeholder} of the English text:
// what `npm run check` is to the widgets' catalogs.
func TestCatalogsComplete(t *testing.T) {
	en := catalogs["en"]
	if len(en) < 100 {
		t.Fatalf("the English catalog has %d keys", len(en))
	}
	for _, name := range Languages[1:] {
		m := catalogs[name]
		for k, text := range en {
			got, ok := m[k]
			if !ok {
				t.Errorf("%s.json lacks %q (English: %q)", name, k, text)
				continue
			}
			if got == "" && text != "" && k != "sentence_space" { // Japanese joins sentences without a space
				t.Errorf("%s.json: %q is empty", name, k)
			}
			if want, have := placeholders(text), placeholders(got); !slices.Equal(want, have) {
				t.Errorf("%s.json: %q has placeholders %v, English %v", name, k, have, want)
			}
		}
		for k := range m {
			if _, ok := en[k]; !ok {
				t.Errorf("%s.json has %q, which en.json lacks", name, k)
			}
		}
		if n := len(strings.Split(m["months"], ",")); n != 12 {
			t.Errorf("%s.json: months has %d names", name, n)
		}
	}
}

var placeholder = regexp.MustCompile(`\{(\w+)\}`)

func placeholders(text string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestSharedWithWidgets: a key the pages share with the widgets' catalogs
// (widgets/web/src/lib/messages/*.ts) has the widgets' text in every
// language, so the buyer reads the same words in the widget and on the page.
func TestSharedWithWidgets(t *testing.T) {
	entry := regexp.MustCompile(`(?m)^\s*(\w+): ("(?:[^"\\]|\\.)*"),$`)
	shared := 0
	for _, name := range Languages {
		src, err := os.ReadFile(filepath.Join("..", "widgets", "web", "src", "lib", "messages", name+".ts"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range entry.FindAllStringSubmatch(string(src), -1) {
			text, err := strconv.Unquote(m[2])
			if err != nil {
				t.Fatalf("%s.ts: %s: %v", name, m[1], err)
			}
			page, ok := catalogs[name][m[1]]
			if !ok {
				continue
			}
			shared++
			if page != text {
				t.Errorf("%s: %q is %q in the widgets, %q on the pages", name, m[1], text, page)
			}
		}
	}
	if shared < 6*15 {
		t.Errorf("only %d messages shared with the widgets", shared)
	}
}

// TestKeysUsed: every key the pages' templates and code name is in the
// catalogs (a typo would show the key to the buyer).
func TestKeysUsed(t *testing.T) {
	use := regexp.MustCompile(`\.(?:T|N|Around)\s*\(?\s*"(\w+)"|(?:Title|Error): "(\w+)"|p\.(?:message|fail)\([^"]*"(\w+)"(?:, "(\w+)")?(?:, "(\w+)")?`)
	files := []string{"../server/pay.go", "../server/pay.html", "../server/receipt.go", "../server/receipt.html", "../accounts/login.go", "../accounts/login.html", "../orders/emails.go"}
	emails, err := filepath.Glob("../orders/emails/*")
	if err != nil || len(emails) == 0 {
		t.Fatalf("the order emails' templates: %v", err)
	}
	files = append(files, emails...)
	found := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range use.FindAllStringSubmatch(string(src), -1) {
			for _, k := range m[1:] {
				if k == "" || strings.HasSuffix(k, "_") {
					continue // a prefix, checked with Has where it is used
				}
				found++
				_, one := catalogs["en"][k+"_one"]
				if _, ok := catalogs["en"][k]; !ok && !one {
					t.Errorf("%s names %q, which en.json lacks", f, k)
				}
			}
		}
	}
	if found < 80 {
		t.Errorf("found only %d keys in the pages", found)
	}
}

func TestMatch(t *testing.T) {
	cases := []struct{ header, want string }{
		{"", "en"},
		{"de-DE", "de"},
		{"de-DE,de;q=0.9,en;q=0.8", "de"},
		{"ja-JP", "ja"},
		{"ja", "ja"},
		{"pt-BR", "pt-BR"},
		{"pt", "pt-BR"},
		{"fr-CA", "fr"},
		{"es-419", "es"},
		{"en-GB", "en"},
		{"zz", "en"},
		{"ko-KR", "en"},
		{"ko-KR, es;q=0.5", "es"},
		{"*", "en"},
		{"not a language header ;;;", "en"},
		{strings.Repeat("de-DE,", 400), "en"},
	}
	for _, tc := range cases {
		if got := Match(tc.header).Tag(); got != tc.want {
			t.Errorf("Match(%.40q) = %s, want %s", tc.header, got, tc.want)
		}
	}
}

func TestMessages(t *testing.T) {
	de, ja := Named("de"), Named("ja")
	day := time.Date(2026, 3, 7, 18, 5, 0, 0, time.FixedZone("x", 3600))
	cases := []struct{ got, want string }{
		{English.T("pay", "total", "$5.00"), "Pay $5.00"},
		{de.T("pay", "total", "5,00 €"), "5,00 € bezahlen"},
		{English.Date(day), "7 March 2026"},
		{de.Date(day), "7. März 2026"},
		{ja.Date(day), "2026年3月7日"},
		{English.DateTime(day), "7 March 2026, 17:05 UTC"},
		{English.N("login_code_wrong", 1), "That code is not right. 1 try left."},
		{English.N("login_code_wrong", 3), "That code is not right. 3 tries left."},
		{Named("fr").N("login_code_wrong", 0), "Ce code n’est pas le bon. Il reste 0 essai."},
		{de.T("no_such_key"), "no_such_key"},
		{strings.Join(de.Around("receipt_shipped", "number", "date", "1. Mai 2026", "carrier", "DHL"), "|"), "Versandt am 1. Mai 2026 mit DHL: |"},
	}
	for i, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%d: %q, want %q", i, tc.got, tc.want)
		}
	}
	if Named("xx") != English || Named("de") != de {
		t.Error("Named does not give one *Lang per language")
	}
}

// TestCountry: a country's name in each language; a code naming no region
// stays as it is.
func TestCountry(t *testing.T) {
	for _, tt := range []struct{ lang, code, want string }{
		{"en", "DE", "Germany"}, {"de", "DE", "Deutschland"}, {"ja", "DE", "ドイツ"}, {"fr", "US", "États-Unis"}, {"en", "Q!", "Q!"},
	} {
		if got := Named(tt.lang).Country(tt.code); got != tt.want {
			t.Errorf("%s Country(%q) = %q, want %q", tt.lang, tt.code, got, tt.want)
		}
	}
}
