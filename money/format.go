package money

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bojanz/currency"
)

// displayLocale is the CLDR locale of every display string.
var displayLocale = currency.NewLocale("en")

// displayFormat formats and parses display strings for one currency.
type displayFormat struct {
	upper     string              // upper-case code, as the formatting library wants it
	exponent  int                 // ISO 4217 exponent
	formatter *currency.Formatter // read-only after construction, safe for concurrent use
	// Text around the number in Format's output, with no-break spaces
	// replaced by plain spaces (see normalizeSpaces).
	posPrefix, posSuffix string
	negPrefix, negSuffix string
	// The same text as the library writes it, which Format puts around
	// the grouped number itself rather than asking the library each time.
	rawPos, rawNeg [2]string
}

// newDisplayFormat builds the formatter for a currency. It panics if the
// formatting library does not know the code: the table of supported
// currencies must only list codes it knows.
func newDisplayFormat(code string, exponent int) *displayFormat {
	f := currency.NewFormatter(displayLocale)
	// Exactly the ISO 4217 number of fraction digits: never pad, never round.
	f.MinDigits = uint8(exponent)
	f.MaxDigits = uint8(exponent)
	df := &displayFormat{upper: strings.ToUpper(code), exponent: exponent, formatter: f}

	// Learn what the locale puts around the number by formatting a sample
	// whose number part cannot be mistaken for anything else.
	const sample = 123456789
	number := groupedNumber(sample, exponent)
	var ok bool
	df.posPrefix, df.posSuffix, ok = strings.Cut(normalizeSpaces(df.format(sample)), number)
	if !ok {
		panic(fmt.Sprintf("money: cannot find %q in %q", number, df.format(sample)))
	}
	df.negPrefix, df.negSuffix, ok = strings.Cut(normalizeSpaces(df.format(-sample)), number)
	if !ok {
		panic(fmt.Sprintf("money: cannot find %q in %q", number, df.format(-sample)))
	}
	if df.negPrefix+df.negSuffix == df.posPrefix+df.posSuffix {
		panic(fmt.Sprintf("money: cannot tell negative %s amounts from positive ones", code))
	}
	df.rawPos[0], df.rawPos[1], _ = strings.Cut(df.format(sample), number)
	df.rawNeg[0], df.rawNeg[1], _ = strings.Cut(df.format(-sample), number)
	for _, a := range []int64{0, 1, 7, 99, 100, 1234, 12345, 999999, 1000000, 123456789012, math.MaxInt64, -1, -100, -12345, math.MinInt64} {
		if got, want := df.fast(a), df.format(a); got != want {
			panic(fmt.Sprintf("money: %s: %d formats as %q, the library's %q", code, a, got, want))
		}
	}
	return df
}

// fast is format without the library: the locale's text around the
// grouped number, as newDisplayFormat learned it and checked it.
func (df *displayFormat) fast(amount int64) string {
	around := df.rawPos
	if amount < 0 {
		around = df.rawNeg
	}
	return around[0] + groupedNumber(magnitude(amount), df.exponent) + around[1]
}

func (df *displayFormat) format(amount int64) string {
	a, err := currency.NewAmount(decimalString(amount, df.exponent), df.upper)
	if err != nil {
		panic(fmt.Sprintf("money: formatting %d %s: %v", amount, df.upper, err))
	}
	return df.formatter.Format(a)
}

// Format returns the display string of amount minor units of c: English
// (CLDR "en") formatting by github.com/bojanz/currency with exactly
// Exponent() fraction digits, e.g. "$12.50" for 1250 usd, "¥1,200" for
// 1200 jpy and "KWD 1.234" for 1234 kwd (with a no-break space, U+00A0,
// after a letter symbol). Negative amounts get a leading minus sign:
// "-$12.50". Display strings are for people; machines use the amount.
//
// Format panics for the zero Currency.
func (c Currency) Format(amount int64) string {
	if c.info == nil {
		panic("money: Format called on the zero Currency; use Lookup")
	}
	return c.info.display.fast(amount)
}

// Parse is the inverse of [Currency.Format]: it returns the amount in minor
// units shown by a display string, and Parse(Format(x)) == x for every x.
//
// Besides Format's exact output Parse accepts a few harmless variants: a
// plain space instead of a no-break space, a missing currency symbol
// ("12.50" or "-12.50"), no thousands separators, and fewer fraction digits
// than Exponent() ("$12.5" is 1250 usd). It rejects anything else,
// in particular more fraction digits than Exponent() (they would lose
// precision, even if zero), a symbol of another currency, malformed digit
// grouping and values outside the int64 range.
func (c Currency) Parse(display string) (int64, error) {
	if c.info == nil {
		return 0, errors.New("money: Parse called on the zero Currency; use Lookup")
	}
	df := c.info.display
	fail := func(why string) (int64, error) {
		return 0, fmt.Errorf("money: cannot parse %q as a %s amount: %s; want a display string like %q",
			display, c.info.code, why, c.Format(123456))
	}

	s := normalizeSpaces(display)
	var (
		body string
		neg  bool
	)
	if b, ok := cutAffixes(s, df.negPrefix, df.negSuffix); ok {
		body, neg = b, true
	} else if b, ok := cutAffixes(s, df.posPrefix, df.posSuffix); ok {
		body = b
	} else if b, ok := strings.CutPrefix(s, "-"); ok {
		body, neg = b, true
	} else {
		body = s
	}

	mag, err := parseMagnitude(body, df.exponent)
	if err != nil {
		return fail(err.Error())
	}
	switch {
	case !neg && mag <= 1<<63-1:
		return int64(mag), nil
	case neg && mag <= 1<<63:
		// -int64(mag) is right for 1<<63 too: it wraps to MinInt64.
		return -int64(mag), nil
	default:
		return fail("out of the int64 range of minor units")
	}
}

// parseMagnitude parses an unsigned decimal number with optional ","
// thousands separators and at most exponent fraction digits into minor
// units. The magnitude must be at most 1<<63.
func parseMagnitude(s string, exponent int) (uint64, error) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || !isDigits(strings.ReplaceAll(intPart, ",", "")) {
		return 0, errors.New("not a number, or not written with this currency's symbol")
	}
	if strings.Contains(intPart, ",") {
		groups := strings.Split(intPart, ",")
		if len(groups[0]) > 3 {
			return 0, errors.New("misplaced thousands separator")
		}
		for i, g := range groups {
			if g == "" || (i > 0 && len(g) != 3) {
				return 0, errors.New("misplaced thousands separator")
			}
		}
		intPart = strings.Join(groups, "")
	}
	if hasDot {
		switch {
		case exponent == 0:
			return 0, errors.New("the currency has no fraction digits")
		case !isDigits(frac):
			return 0, errors.New("malformed fraction digits")
		case len(frac) > exponent:
			return 0, fmt.Errorf("%d fraction digits but the currency has %d", len(frac), exponent)
		}
	}
	// Minor units as a digit string: integer digits then exactly exponent
	// fraction digits.
	digits := intPart + frac + strings.Repeat("0", exponent-len(frac))
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return 0, nil
	}
	u, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || u > 1<<63 {
		return 0, errors.New("out of the int64 range of minor units")
	}
	return u, nil
}

// cutAffixes removes prefix and suffix from s, reporting whether both were
// present and something is left in between.
func cutAffixes(s, prefix, suffix string) (string, bool) {
	if len(s) <= len(prefix)+len(suffix) || !strings.HasPrefix(s, prefix) || !strings.HasSuffix(s, suffix) {
		return "", false
	}
	return s[len(prefix) : len(s)-len(suffix)], true
}

// normalizeSpaces replaces no-break spaces, which CLDR puts between a
// letter symbol and the number, by plain spaces.
func normalizeSpaces(s string) string {
	return strings.ReplaceAll(s, "\u00a0", " ")
}

// magnitude returns |amount| without overflowing for math.MinInt64.
func magnitude(amount int64) uint64 {
	if amount < 0 {
		return uint64(-(amount + 1)) + 1
	}
	return uint64(amount)
}

// decimalString returns amount minor units as a plain decimal number of
// major units with exactly exponent fraction digits: 1250, 2 -> "12.50".
func decimalString(amount int64, exponent int) string {
	s := splitDigits(magnitude(amount), exponent, false)
	if amount < 0 {
		return "-" + s
	}
	return s
}

// groupedNumber is like decimalString for non-negative amounts but with
// "," thousands separators, the way the "en" locale writes numbers.
func groupedNumber(amount uint64, exponent int) string {
	return splitDigits(amount, exponent, true)
}

func splitDigits(u uint64, exponent int, group bool) string {
	digits := strconv.FormatUint(u, 10)
	if len(digits) <= exponent {
		digits = strings.Repeat("0", exponent-len(digits)+1) + digits
	}
	intPart, frac := digits[:len(digits)-exponent], digits[len(digits)-exponent:]
	if group {
		var b strings.Builder
		for i, r := range intPart {
			if i > 0 && (len(intPart)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(r)
		}
		intPart = b.String()
	}
	if frac == "" {
		return intPart
	}
	return intPart + "." + frac
}
