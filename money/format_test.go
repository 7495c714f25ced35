package money

import (
	"math"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// nbsp is the no-break space CLDR puts between a letter symbol and the number.
const nbsp = "\u00a0"

func TestFormat(t *testing.T) {
	tests := []struct {
		name   string
		code   string
		amount int64
		want   string
	}{
		{"OK", "usd", 1250, "$12.50"},
		{"OKZero", "usd", 0, "$0.00"},
		{"OKOneCent", "usd", 1, "$0.01"},
		{"OKNegative", "usd", -1250, "-$12.50"},
		{"OKGrouping", "usd", 123456789, "$1,234,567.89"},
		{"OKMaxInt64", "usd", math.MaxInt64, "$92,233,720,368,547,758.07"},
		{"OKMinInt64", "usd", math.MinInt64, "-$92,233,720,368,547,758.08"},
		{"OKEUR", "eur", 1999, "€19.99"},
		{"OKEURNegative", "eur", -5, "-€0.05"},
		{"OKGBP", "gbp", 5, "£0.05"},
		{"OKGBPLarge", "gbp", 100000000, "£1,000,000.00"},
		{"OKJPY", "jpy", 1200, "¥1,200"},
		{"OKJPYZero", "jpy", 0, "¥0"},
		{"OKJPYNegative", "jpy", -5, "-¥5"},
		{"OKKWD", "kwd", 1234, "KWD" + nbsp + "1.234"},
		{"OKKWDOneFils", "kwd", 1, "KWD" + nbsp + "0.001"},
		{"OKKWDNegative", "kwd", -1000, "-KWD" + nbsp + "1.000"},
		{"OKCHF", "chf", 100, "CHF" + nbsp + "1.00"},
		{"OKCHFNegative", "chf", -123456, "-CHF" + nbsp + "1,234.56"},
		{"OKRSD", "rsd", 12345, "RSD" + nbsp + "123.45"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MustLookup(tt.code).Format(tt.amount)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Format(%d %s) (-want +got):\n%s", tt.amount, tt.code, diff)
			}
		})
	}
}

// TestFormatEverySupported pins the display string of every supported
// currency, so that a change of table or of CLDR data is noticed.
func TestFormatEverySupported(t *testing.T) {
	want := map[string]string{
		"aed": "AED" + nbsp + "1,234.56",
		"aud": "A$1,234.56",
		"bhd": "BHD" + nbsp + "123.456",
		"brl": "R$1,234.56",
		"cad": "CA$1,234.56",
		"chf": "CHF" + nbsp + "1,234.56",
		"clp": "CLP" + nbsp + "123,456",
		"cny": "CN¥1,234.56",
		"czk": "CZK" + nbsp + "1,234.56",
		"dkk": "DKK" + nbsp + "1,234.56",
		"eur": "€1,234.56",
		"gbp": "£1,234.56",
		"hkd": "HK$1,234.56",
		"huf": "HUF" + nbsp + "1,234.56",
		"idr": "IDR" + nbsp + "1,234.56",
		"ils": "₪1,234.56",
		"inr": "₹1,234.56",
		"isk": "ISK" + nbsp + "123,456",
		"jod": "JOD" + nbsp + "123.456",
		"jpy": "¥123,456",
		"krw": "₩123,456",
		"kwd": "KWD" + nbsp + "123.456",
		"mxn": "MX$1,234.56",
		"myr": "MYR" + nbsp + "1,234.56",
		"nok": "NOK" + nbsp + "1,234.56",
		"nzd": "NZ$1,234.56",
		"omr": "OMR" + nbsp + "123.456",
		"php": "₱1,234.56",
		"pln": "PLN" + nbsp + "1,234.56",
		"ron": "RON" + nbsp + "1,234.56",
		"rsd": "RSD" + nbsp + "1,234.56",
		"sar": "SAR" + nbsp + "1,234.56",
		"sek": "SEK" + nbsp + "1,234.56",
		"sgd": "SGD" + nbsp + "1,234.56",
		"thb": "THB" + nbsp + "1,234.56",
		"tnd": "TND" + nbsp + "123.456",
		"try": "TRY" + nbsp + "1,234.56",
		"twd": "NT$1,234.56",
		"usd": "$1,234.56",
		"vnd": "₫123,456",
		"zar": "ZAR" + nbsp + "1,234.56",
	}
	got := map[string]string{}
	gotNeg := map[string]string{}
	wantNeg := map[string]string{}
	for _, c := range Supported() {
		got[c.Code()] = c.Format(123456)
		gotNeg[c.Code()] = c.Format(-123456)
		wantNeg[c.Code()] = "-" + want[c.Code()]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Format(123456) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantNeg, gotNeg); diff != "" {
		t.Errorf("Format(-123456) (-want +got):\n%s", diff)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		code    string
		in      string
		want    int64
		wantErr bool
	}{
		{name: "OK", code: "usd", in: "$12.50", want: 1250},
		{name: "OKNegative", code: "usd", in: "-$12.50", want: -1250},
		{name: "OKZero", code: "usd", in: "$0.00", want: 0},
		{name: "OKNegativeZero", code: "usd", in: "-$0.00", want: 0},
		{name: "OKGrouping", code: "usd", in: "$1,234,567.89", want: 123456789},
		{name: "OKNoGrouping", code: "usd", in: "$1234567.89", want: 123456789},
		{name: "OKFewerFractionDigits", code: "usd", in: "$12.5", want: 1250},
		{name: "OKNoFraction", code: "usd", in: "$12", want: 1200},
		{name: "OKBareNumber", code: "usd", in: "12.50", want: 1250},
		{name: "OKBareNegative", code: "usd", in: "-12.50", want: -1250},
		{name: "OKMaxInt64", code: "usd", in: "$92,233,720,368,547,758.07", want: math.MaxInt64},
		{name: "OKMinInt64", code: "usd", in: "-$92,233,720,368,547,758.08", want: math.MinInt64},
		{name: "OKJPY", code: "jpy", in: "¥1,200", want: 1200},
		{name: "OKKWD", code: "kwd", in: "KWD" + nbsp + "1.234", want: 1234},
		{name: "OKKWDPlainSpace", code: "kwd", in: "KWD 1.234", want: 1234},
		{name: "OKKWDNegative", code: "kwd", in: "-KWD" + nbsp + "0.001", want: -1},
		{name: "OKCHF", code: "chf", in: "CHF" + nbsp + "1.00", want: 100},
		{name: "ErrEmpty", code: "usd", in: "", wantErr: true},
		{name: "ErrSymbolOnly", code: "usd", in: "$", wantErr: true},
		{name: "ErrMinusOnly", code: "usd", in: "-", wantErr: true},
		{name: "ErrTooManyFractionDigits", code: "usd", in: "$12.505", wantErr: true},
		{name: "ErrTooManyFractionDigitsZero", code: "usd", in: "$12.500", wantErr: true},
		{name: "ErrFractionForJPY", code: "jpy", in: "¥12.5", wantErr: true},
		{name: "ErrFractionZeroForJPY", code: "jpy", in: "¥12.0", wantErr: true},
		{name: "ErrTooManyFractionDigitsKWD", code: "kwd", in: "KWD 1.2345", wantErr: true},
		{name: "ErrOtherCurrencySymbol", code: "usd", in: "€12.50", wantErr: true},
		{name: "ErrOtherDollar", code: "cad", in: "$12.50", wantErr: true},
		{name: "ErrCodeInsteadOfSymbol", code: "usd", in: "USD 12.50", wantErr: true},
		{name: "ErrSymbolAfter", code: "usd", in: "12.50$", wantErr: true},
		{name: "ErrMinusAfterSymbol", code: "usd", in: "$-12.50", wantErr: true},
		{name: "ErrDoubleMinus", code: "usd", in: "--12.50", wantErr: true},
		{name: "ErrPlus", code: "usd", in: "+$12.50", wantErr: true},
		{name: "ErrLeadingSpace", code: "usd", in: " $12.50", wantErr: true},
		{name: "ErrTrailingSpace", code: "usd", in: "$12.50 ", wantErr: true},
		{name: "ErrBadGroupingShort", code: "usd", in: "$1,23.00", wantErr: true},
		{name: "ErrBadGroupingLong", code: "usd", in: "$1234,567.00", wantErr: true},
		{name: "ErrBadGroupingSecond", code: "usd", in: "$12,12.00", wantErr: true},
		{name: "ErrBadGroupingEmpty", code: "usd", in: "$1,,234.00", wantErr: true},
		{name: "ErrLeadingComma", code: "usd", in: "$,123.00", wantErr: true},
		{name: "ErrCommaInFraction", code: "usd", in: "$1.2,3", wantErr: true},
		{name: "ErrTrailingDot", code: "usd", in: "$12.", wantErr: true},
		{name: "ErrLeadingDot", code: "usd", in: "$.50", wantErr: true},
		{name: "ErrTwoDots", code: "usd", in: "$1.2.3", wantErr: true},
		{name: "ErrExponent", code: "usd", in: "1e3", wantErr: true},
		{name: "ErrNaN", code: "usd", in: "NaN", wantErr: true},
		{name: "ErrInfinity", code: "usd", in: "-Infinity", wantErr: true},
		{name: "ErrOverflow", code: "usd", in: "$92,233,720,368,547,758.08", wantErr: true},
		{name: "ErrUnderflow", code: "usd", in: "-$92,233,720,368,547,758.09", wantErr: true},
		{name: "ErrHuge", code: "usd", in: "$" + strings.Repeat("9", 100), wantErr: true},
		{name: "ErrArabicDigits", code: "usd", in: "$\u0661\u0662", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := MustLookup(tt.code)
			got, err := c.Parse(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Parse(%q) as %s = %d, want error", tt.in, tt.code, got)
				}
				if !strings.Contains(err.Error(), tt.code) {
					t.Errorf("Parse(%q) error %q does not name the currency", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) as %s: %v", tt.in, tt.code, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) as %s (-want +got):\n%s", tt.in, tt.code, diff)
			}
		})
	}
}

// randomDisplayAmount returns an amount with |x| ≤ 1<<53, often small,
// sometimes at the extremes.
func randomDisplayAmount(i int, next func(int64) int64) int64 {
	const bound = 1 << 53
	switch i % 4 {
	case 0:
		return next(2001) - 1000
	case 1:
		return next(2*bound+1) - bound
	case 2:
		return []int64{0, 1, -1, 999, 1000, -1000, bound, -bound, bound - 1, -bound + 1}[next(10)]
	default:
		return next(2_000_000_001) - 1_000_000_000
	}
}

func TestParseFormatRoundTrip(t *testing.T) {
	r := newRand(t)
	for _, c := range Supported() {
		for i := range 3000 {
			x := randomDisplayAmount(i, r.Int64N)
			s := c.Format(x)
			got, err := c.Parse(s)
			if err != nil {
				t.Fatalf("%s: Parse(Format(%d) = %q): %v", c.Code(), x, s, err)
			}
			if got != x {
				t.Fatalf("%s: Parse(Format(%d) = %q) = %d", c.Code(), x, s, got)
			}
		}
		for _, x := range []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1} {
			if got, err := c.Parse(c.Format(x)); err != nil || got != x {
				t.Errorf("%s: Parse(Format(%d) = %q) = %d, %v", c.Code(), x, c.Format(x), got, err)
			}
		}
	}
}

// fractionDigits returns the number of digits after the decimal point in a
// display string, and whether it has a decimal point at all.
func fractionDigits(s string) (int, bool) {
	_, frac, ok := strings.Cut(s, ".")
	n := 0
	for _, r := range frac {
		if !unicode.IsDigit(r) {
			break
		}
		n++
	}
	return n, ok
}

func TestFormatFractionDigits(t *testing.T) {
	r := newRand(t)
	for _, c := range Supported() {
		for i := range 3000 {
			x := randomDisplayAmount(i, r.Int64N)
			s := c.Format(x)
			n, hasDot := fractionDigits(s)
			if n > c.Exponent() {
				t.Fatalf("%s: Format(%d) = %q has %d fraction digits, more than the exponent %d", c.Code(), x, s, n, c.Exponent())
			}
			// In fact exactly Exponent(): no rounding, no stripped zeros.
			if n != c.Exponent() || hasDot != (c.Exponent() > 0) {
				t.Fatalf("%s: Format(%d) = %q has %d fraction digits, want exactly %d", c.Code(), x, s, n, c.Exponent())
			}
			if strings.Count(s, ".") > 1 {
				t.Fatalf("%s: Format(%d) = %q has more than one '.'", c.Code(), x, s)
			}
			if (x < 0) != strings.HasPrefix(s, "-") {
				t.Fatalf("%s: Format(%d) = %q: minus sign wrong", c.Code(), x, s)
			}
		}
	}
}

func TestFormatConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for _, c := range Supported() {
		wg.Go(func() {
			for x := range int64(200) {
				if got, err := c.Parse(c.Format(x * 7919)); err != nil || got != x*7919 {
					t.Errorf("%s: round trip of %d: %d, %v", c.Code(), x*7919, got, err)
				}
			}
		})
	}
	wg.Wait()
}

func FuzzParse(f *testing.F) {
	for _, c := range Supported() {
		for _, x := range []int64{0, 1, -1, 1250, -123456789, math.MaxInt64, math.MinInt64} {
			f.Add(c.Format(x))
		}
	}
	for _, s := range []string{"", "$", "-", "12.50", "1,2,3", "$1,234.5", "1e9", "NaN", "KWD 1.2345", "¥1.0", "\u00a0", "$9999999999999999999999"} {
		f.Add(s)
	}
	all := Supported()
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range all {
			x, err := c.Parse(s)
			if err != nil {
				continue
			}
			again := c.Format(x)
			y, err := c.Parse(again)
			if err != nil {
				t.Fatalf("%s: Parse(%q) = %d but Parse(Format(%d) = %q): %v", c.Code(), s, x, x, again, err)
			}
			if y != x {
				t.Fatalf("%s: Parse(%q) = %d but Parse(Format(%d) = %q) = %d", c.Code(), s, x, x, again, y)
			}
		}
	})
}
