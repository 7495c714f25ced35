// Package money holds the shop's conventions for amounts of money.
//
// Every amount is an int64 in the currency's minor unit (cents for usd,
// yen for jpy, fils for kwd), as given by the ISO 4217 exponent of the
// currency: 2, 0 and 3 respectively. No binary fractions are used anywhere,
// and there are no decimal strings on the wire: a [Price] carries the
// integer amount, the lower-case ISO 4217 code and a display string meant
// only for people.
//
// Rates (tax rates, percentage discounts) are [decimal.Decimal] values.
// [ApplyRate] and [Percent] compute the exact product and round it half
// away from zero to a whole number of minor units, once. Callers round
// once per line and then add the rounded line amounts.
//
// Amounts passed to [ApplyRate] and [Percent] must be smaller than 1e15
// minor units in absolute value (ten trillion dollars); both functions
// panic beyond that bound rather than overflow silently.
package money

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// Currency is a currency the shop can price in: its lower-case ISO 4217 code and ISO 4217 exponent.
//
// Obtain one with [Lookup], [MustLookup] or [Supported]. The zero Currency
// is not a valid currency: its Code is "" and its Format panics.
// Currencies are comparable with ==.
type Currency struct {
	info *currencyInfo
}

// currencyInfo is the per-currency data behind a Currency. There is exactly
// one currencyInfo per supported code, so Currency values compare equal
// exactly when their codes are equal.
type currencyInfo struct {
	code     string // lower-case ISO 4217 code, "usd"
	exponent int    // ISO 4217 minor-unit exponent
	display  *displayFormat
}

// isoExponents is the explicit table of supported currencies with their
// ISO 4217 minor-unit exponents. It is the authority for amounts on the
// wire and for Format. It is deliberately not taken from the formatting
// library's digits: those come with its CLDR data, which is not the
// ISO 4217 list and has disagreed with it for some codes, and the wire
// contract must not change when the library is upgraded. For the codes
// below the library currently agrees; TestExponentVersusLibrary reports
// any drift.
var isoExponents = map[string]int{
	"aed": 2, // UAE dirham
	"aud": 2, // Australian dollar
	"bhd": 3, // Bahraini dinar
	"brl": 2, // Brazilian real
	"cad": 2, // Canadian dollar
	"chf": 2, // Swiss franc
	"clp": 0, // Chilean peso
	"cny": 2, // Chinese yuan
	"czk": 2, // Czech koruna
	"dkk": 2, // Danish krone
	"eur": 2, // Euro
	"gbp": 2, // Pound sterling
	"hkd": 2, // Hong Kong dollar
	"huf": 2, // Hungarian forint
	"idr": 2, // Indonesian rupiah
	"ils": 2, // Israeli new shekel
	"inr": 2, // Indian rupee
	"isk": 0, // Icelandic króna
	"jod": 3, // Jordanian dinar
	"jpy": 0, // Japanese yen
	"krw": 0, // South Korean won
	"kwd": 3, // Kuwaiti dinar
	"mxn": 2, // Mexican peso
	"myr": 2, // Malaysian ringgit
	"nok": 2, // Norwegian krone
	"nzd": 2, // New Zealand dollar
	"omr": 3, // Omani rial
	"php": 2, // Philippine peso
	"pln": 2, // Polish złoty
	"ron": 2, // Romanian leu
	"rsd": 2, // Serbian dinar
	"sar": 2, // Saudi riyal
	"sek": 2, // Swedish krona
	"sgd": 2, // Singapore dollar
	"thb": 2, // Thai baht
	"tnd": 3, // Tunisian dinar
	"try": 2, // Turkish lira
	"twd": 2, // New Taiwan dollar
	"usd": 2, // US dollar
	"vnd": 0, // Vietnamese đồng
	"zar": 2, // South African rand
}

// The supported currencies, built once from isoExponents.
var byCode, supported, codeList = buildTable()

// buildTable returns the currencies by code, the currencies sorted by code
// and the codes as a list for error messages ("aed, aud, …").
func buildTable() (map[string]*currencyInfo, []Currency, string) {
	byCode := make(map[string]*currencyInfo, len(isoExponents))
	codes := make([]string, 0, len(isoExponents))
	for code, exp := range isoExponents {
		byCode[code] = &currencyInfo{code: code, exponent: exp, display: newDisplayFormat(code, exp)}
		codes = append(codes, code)
	}
	slices.Sort(codes)
	sorted := make([]Currency, len(codes))
	for i, code := range codes {
		sorted[i] = Currency{byCode[code]}
	}
	return byCode, sorted, strings.Join(codes, ", ")
}

// Lookup returns the supported currency with the given ISO 4217 code.
// The code is case-insensitive: "usd" and "USD" both work.
// For an unknown or unsupported code the error names the code and lists
// the supported ones.
func Lookup(code string) (Currency, error) {
	if info, ok := byCode[asciiLower(code)]; ok {
		return Currency{info}, nil
	}
	return Currency{}, fmt.Errorf("money: unsupported currency %q: send a lower-case ISO 4217 code, one of: %s", code, codeList)
}

// asciiLower lower-cases ASCII letters only, so that no other Unicode
// letter (such as the Kelvin sign, which lower-cases to 'k') can match a code.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// MustLookup is like [Lookup] but panics if the code is not supported.
// It is meant for tests and package-level variables.
func MustLookup(code string) Currency {
	c, err := Lookup(code)
	if err != nil {
		panic(err)
	}
	return c
}

// Supported returns every supported currency, sorted by code.
// The caller may modify the returned slice.
func Supported() []Currency {
	return slices.Clone(supported)
}

// Code returns the lower-case ISO 4217 code, e.g. "usd".
// It returns "" for the zero Currency.
func (c Currency) Code() string {
	if c.info == nil {
		return ""
	}
	return c.info.code
}

// Exponent returns the ISO 4217 exponent: the number of decimal digits of
// the minor unit (2 for usd, 0 for jpy, 3 for kwd). An amount of n minor
// units is n × 10^-Exponent() major units.
func (c Currency) Exponent() int {
	if c.info == nil {
		return 0
	}
	return c.info.exponent
}

// Price returns the wire form of amount minor units of c.
// It panics for the zero Currency.
func (c Currency) Price(amount int64) Price {
	return Price{Amount: amount, Currency: c.Code(), Display: c.Format(amount)}
}

// Price is an amount as the contract puts it on the wire.
//
// Amount is in the minor unit of Currency (a lower-case ISO 4217 code);
// Display is the same amount formatted for people by [Currency.Format] and
// must never be parsed back by machines that have Amount.
type Price struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	Display  string `json:"display"`
}

// maxAmount bounds the absolute value of amounts given to ApplyRate and
// Percent: |amount| must be less than 1e15 minor units. With that bound and
// rates up to 1000 (what ParseRate accepts) every result fits in an int64.
const maxAmount = 1_000_000_000_000_000

// ApplyRate returns amount × rate rounded half away from zero to a whole
// number of minor units. rate is a fraction: 0.0725 means 7.25 %.
// The product is computed exactly; it is rounded once.
//
// ApplyRate panics if |amount| ≥ 1e15 (the documented bound on amounts) or
// if the rounded result does not fit in an int64 (only possible for
// |rate| > 9223). It never saturates or wraps around.
func ApplyRate(amount int64, rate decimal.Decimal) int64 {
	checkAmount("ApplyRate", amount)
	return mulPow10Round("ApplyRate", amount, rate.Coefficient(), int64(rate.Exponent()))
}

// Percent returns amount × percent / 100 rounded half away from zero to a
// whole number of minor units, e.g. Percent(1000, 7.25) == 73 (72.5 rounds
// up). The result is exact apart from that single rounding.
//
// Percent panics under the same conditions as [ApplyRate] (for Percent the
// result can only overflow for |percent| > 922337).
func Percent(amount int64, percent decimal.Decimal) int64 {
	checkAmount("Percent", amount)
	// Dividing by 100 is exact: it only moves the decimal exponent (in
	// int64, so that it cannot wrap around for extreme exponents).
	return mulPow10Round("Percent", amount, percent.Coefficient(), int64(percent.Exponent())-2)
}

func checkAmount(fn string, amount int64) {
	if amount >= maxAmount || amount <= -maxAmount {
		panic(fmt.Sprintf("money.%s: amount %d out of range: |amount| must be less than 1e15 minor units", fn, amount))
	}
}

var bigTen = big.NewInt(10)

// mulPow10Round returns amount × coeff × 10^exp rounded half away from zero,
// panicking if the result does not fit in an int64.
func mulPow10Round(fn string, amount int64, coeff *big.Int, exp int64) int64 {
	n := new(big.Int).Mul(big.NewInt(amount), coeff)
	if n.Sign() == 0 {
		return 0
	}
	switch {
	case exp >= 0:
		// |n| ≥ 1, so anything times 10^19 or more overflows; checking this
		// first avoids computing enormous powers of ten.
		if exp >= 19 {
			panic(overflow(fn, amount))
		}
		n.Mul(n, new(big.Int).Exp(bigTen, big.NewInt(exp), nil))
	default:
		// If |n| < 10^(k-1) with k = -exp, then |n|/10^k < 0.1, which rounds
		// to 0. Checking this first avoids computing enormous powers of ten.
		k := -exp
		if k > int64(len(new(big.Int).Abs(n).String())) {
			return 0
		}
		d := new(big.Int).Exp(bigTen, big.NewInt(k), nil)
		q, r := new(big.Int).QuoRem(n, d, new(big.Int)) // truncates toward zero
		// Round half away from zero: bump |q| when |r| ≥ d/2.
		r.Abs(r).Lsh(r, 1)
		if r.Cmp(d) >= 0 {
			q.Add(q, big.NewInt(int64(n.Sign())))
		}
		n = q
	}
	if !n.IsInt64() {
		panic(overflow(fn, amount))
	}
	return n.Int64()
}

func overflow(fn string, amount int64) string {
	return fmt.Sprintf("money.%s: result for amount %d overflows int64", fn, amount)
}

// maxRate is the largest value ParseRate accepts.
var maxRate = decimal.New(1000, 0)

// maxRateFractionDigits is the most fraction digits ParseRate accepts.
const maxRateFractionDigits = 6

// ParseRate parses a rate or percentage as sent by clients, e.g. "7.25".
// It accepts only plain non-negative decimal notation: ASCII digits with an
// optional '.' followed by 1 to 6 fraction digits, and a value of at most
// 1000. Signs, exponents, spaces and thousands separators are rejected.
// Whether the result is a fraction for [ApplyRate] or a percentage for
// [Percent] is up to the caller.
func ParseRate(s string) (decimal.Decimal, error) {
	bad := func(why string) (decimal.Decimal, error) {
		return decimal.Decimal{}, fmt.Errorf("money: invalid rate %q: %s; send a non-negative decimal string with at most %d fraction digits and a value of at most %s, e.g. \"7.25\"",
			s, why, maxRateFractionDigits, maxRate)
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	switch {
	case s == "":
		return bad("empty")
	case !isDigits(intPart):
		return bad("not a plain decimal number")
	case hasDot && !isDigits(frac):
		return bad("not a plain decimal number")
	case len(frac) > maxRateFractionDigits:
		return bad(fmt.Sprintf("%d fraction digits", len(frac)))
	}
	// Strip leading zeros so that the length check below bounds the value
	// cheaply, before any arithmetic on a possibly huge string.
	if t := strings.TrimLeft(intPart, "0"); len(t) > 4 {
		return bad("greater than " + maxRate.String())
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return bad("not a plain decimal number")
	}
	if d.Cmp(maxRate) > 0 {
		return bad("greater than " + maxRate.String())
	}
	return d, nil
}

// isDigits reports whether s is non-empty and consists of ASCII digits only.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
