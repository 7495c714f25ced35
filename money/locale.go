package money

import (
	"sync"

	"github.com/bojanz/currency"
)

// localized are the formatters of (locale, currency) pairs in use, made
// on first use: a formatter is read-only once made and safe to share.
var localized sync.Map // localeKey → *currency.Formatter

type localeKey struct{ locale, code string }

// FormatIn returns the display string of amount minor units of c as the
// language of a BCP 47 locale writes it ("de-DE": "18,00 $", "ja": "$18.00",
// "fr": "18,00 $US"), with exactly Exponent() fraction digits. An empty or
// unknown locale formats as Format does (CLDR "en").
func (c Currency) FormatIn(locale string, amount int64) string {
	if c.info == nil {
		panic("money: FormatIn called on the zero Currency; use Lookup")
	}
	if locale == "" || locale == "en" {
		return c.Format(amount)
	}
	key := localeKey{locale, c.info.code}
	f, ok := localized.Load(key)
	if !ok {
		nf := currency.NewFormatter(currency.NewLocale(locale))
		nf.MinDigits, nf.MaxDigits = uint8(c.info.exponent), uint8(c.info.exponent)
		f, _ = localized.LoadOrStore(key, nf)
	}
	a, err := currency.NewAmount(decimalString(amount, c.info.exponent), c.info.display.upper)
	if err != nil {
		return c.Format(amount)
	}
	return f.(*currency.Formatter).Format(a)
}
