package money

import "testing"

// TestFormatIn: amounts in the buyer's language, with the currency's own
// fraction digits; no locale is English.
func TestFormatIn(t *testing.T) {
	tests := []struct {
		code, locale string
		amount       int64
		want         string
	}{
		{"usd", "", 1800, "$18.00"},
		{"usd", "en-US", 1800, "$18.00"},
		{"eur", "de-DE", 342, "3,42\u00a0€"},
		{"eur", "de", 123456, "1.234,56\u00a0€"},
		{"jpy", "ja-JP", 1200, "￥1,200"},
		{"eur", "fr", 342, "3,42\u00a0€"},
	}
	for _, tt := range tests {
		if got := MustLookup(tt.code).FormatIn(tt.locale, tt.amount); got != tt.want {
			t.Errorf("FormatIn(%q, %d %s) = %q, want %q", tt.locale, tt.amount, tt.code, got, tt.want)
		}
	}
}
