package orders_test

import (
	"encoding/json"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop/database/dbtest"
	"shop/i18n"
	"shop/money"
)

// englishWords are words of the emails' English templates: none may show
// in an email written in another language.
var englishWords = regexp.MustCompile(`(?i)\b(hello|thank|your|order|received|payment|shipping|ship to|each|before tax|arriving|view|questions|reply|email|parcel|tracking|track|refunded|refund|card|canceled|return|accepted|nothing|items|subtotal|tax|total|united states|december|by)\b`)

// TestEmailsInBuyersLanguage: every kind of buyer email (confirmation,
// shipped, refunded, canceled, return requested, refunded and rejected) of
// a de-DE and a ja-JP buyer, delivered over SMTP, has no English template
// word in its subject, text or HTML, and writes amounts, the country and
// dates in the buyer's language; the staff's copy stays English.
func TestEmailsInBuyersLanguage(t *testing.T) {
	for _, tc := range []struct{ locale, country, month string }{
		{"de-DE", "Vereinigte Staaten", "Dezember"},
		{"ja-JP", "アメリカ合衆国", "12月"},
	} {
		t.Run(tc.locale, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				s := newMailShop(t, db)
				ord := s.buyIn(t, tc.locale, "Ada", 2)
				li := ord.Receipt.LineItems[0]
				if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": ord.ID, "carrier": "USPS", "tracking_number": "9400"}); err != nil {
					t.Fatal(err)
				}
				if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": 100, "reason": "dented"}); err != nil {
					t.Fatal(err)
				}
				got, err := ask(t, s.ret, ord, 1)
				if err != nil {
					t.Fatal(err)
				}
				instructions, _ := got["return"].(map[string]any)["instructions"].(string)
				id, _, _ := returnOf(t, got)
				if _, err := s.twoStep(t, owner, "accept_return", map[string]any{"return_id": id}); err != nil {
					t.Fatal(err)
				}
				if got, err = ask(t, s.ret, ord, 1); err != nil {
					t.Fatal(err)
				}
				id2, _, _ := returnOf(t, got)
				if _, err := s.call(t, support, "reject_return", map[string]any{"return_id": id2, "reason": "—"}); err != nil {
					t.Fatal(err)
				}
				second := s.buyIn(t, tc.locale, "Ada", 1)
				if _, err := s.twoStep(t, owner, "cancel_order", map[string]any{"order_id": second.ID, "reason": "buyer asked"}); err != nil {
					t.Fatal(err)
				}
				usd, _ := money.Lookup("usd")
				// What the merchant and staff wrote stays as written: left out of the check.
				merchant := strings.NewReplacer("Northwind Goods", "", li.Name, "", ord.Receipt.FulfillmentOption.Title, "", "USPS", "",
					instructions, "", "help@northwind.example", "", "Ada Lovelace", "", "Market St", "", "San Francisco", "")
				url := regexp.MustCompile(`https?://[^\s"<>]+`)
				kinds, texts := map[string]bool{}, ""
				for _, p := range s.deliver(t) {
					if p.Header.Get("To") != "<ada@example.com>" {
						if subj := p.Header.Get("Subject"); !strings.Contains(subj, "new order") {
							t.Errorf("the staff's copy is not English: %q", subj)
						}
						continue
					}
					subject, err := new(mime.WordDecoder).DecodeHeader(p.Header.Get("Subject"))
					if err != nil {
						t.Fatal(err)
					}
					all := subject + "\n" + p.Parts["text/plain"] + "\n" + p.Parts["text/html"]
					kinds[subject] = true
					texts += all
					rest := url.ReplaceAllString(merchant.Replace(all), "")
					rest = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(rest, " ")
					if w := englishWords.FindAllString(rest, -1); len(w) > 0 {
						t.Errorf("%s email %q says English %q:\n%s", tc.locale, subject, w, rest)
					}
				}
				// Two confirmations, the cancel's refund and the partial refund,
				// and one of each other kind; both return requests say the same.
				if len(kinds) != 9 {
					t.Errorf("%d buyer emails, want 9 subjects: %v", len(kinds), kinds)
				}
				// Amounts, the country and the delivery dates in the buyer's language.
				contains(t, tc.locale+" emails", texts, usd.FormatIn(tc.locale, paid(ord)), usd.FormatIn(tc.locale, 100), tc.country, tc.month)
			})
		})
	}
}

// TestEmailKeysInEveryCatalog: every catalog key the order emails use is
// in all six catalogs, not only English.
func TestEmailKeysInEveryCatalog(t *testing.T) {
	use := regexp.MustCompile(`\.T "(\w+)"|"(email_\w+)"`)
	keys := map[string]bool{}
	for _, kind := range []string{"confirmation", "shipped", "refunded", "canceled", "return_requested", "return_refunded", "return_rejected"} {
		keys["email_"+kind+"_subject"] = true
	}
	for _, typ := range []string{"terms_of_use", "privacy_policy", "return_policy", "support"} {
		keys["link_"+typ] = true
	}
	files, _ := filepath.Glob("emails/*")
	files = append(files, "emails.go", "returns_emails.go")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range use.FindAllStringSubmatch(string(src), -1) {
			if k := m[1] + m[2]; !strings.HasSuffix(k, "_") {
				keys[k] = true
			}
		}
	}
	if len(keys) < 35 {
		t.Fatalf("found only %d keys: %v", len(keys), keys)
	}
	for _, lang := range i18n.Languages {
		b, err := os.ReadFile(filepath.Join("..", "i18n", "messages", lang+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for k := range keys {
			if m[k] == "" {
				t.Errorf("%s.json lacks the emails' %q", lang, k)
			}
		}
	}
}
