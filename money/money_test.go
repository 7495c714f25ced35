package money

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bojanz/currency"
	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestLookup(t *testing.T) {
	tests := []struct {
		name     string
		code     string
		wantCode string
		wantErr  bool
	}{
		{name: "OK", code: "usd", wantCode: "usd"},
		{name: "OKUpperCase", code: "USD", wantCode: "usd"},
		{name: "OKMixedCase", code: "Jpy", wantCode: "jpy"},
		{name: "OKThreeDecimals", code: "kwd", wantCode: "kwd"},
		{name: "ErrUnknownCode", code: "xyz", wantErr: true},
		{name: "ErrUnsupportedCode", code: "iqd", wantErr: true},
		{name: "ErrEmpty", code: "", wantErr: true},
		{name: "ErrWhitespace", code: " usd", wantErr: true},
		{name: "ErrSymbol", code: "$", wantErr: true},
		{name: "ErrKelvinSign", code: "\u212aWD", wantErr: true}, // lower-cases to "kwd" in Unicode
		{name: "ErrFullwidth", code: "ＵＳＤ", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Lookup(tt.code)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Lookup(%q) = %v, want error", tt.code, c.Code())
				}
				msg := err.Error()
				for _, want := range []string{fmt.Sprintf("%q", tt.code), "aed, aud, bhd", "usd", "jpy", "kwd"} {
					if !strings.Contains(msg, want) {
						t.Errorf("Lookup(%q) error %q does not contain %q", tt.code, msg, want)
					}
				}
				if diff := cmp.Diff("", c.Code()); diff != "" {
					t.Errorf("Lookup(%q) on error returned non-zero Currency (-want +got):\n%s", tt.code, diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lookup(%q): %v", tt.code, err)
			}
			if diff := cmp.Diff(tt.wantCode, c.Code()); diff != "" {
				t.Errorf("Lookup(%q).Code() (-want +got):\n%s", tt.code, diff)
			}
			if c != MustLookup(tt.wantCode) {
				t.Errorf("Lookup(%q) != MustLookup(%q)", tt.code, tt.wantCode)
			}
		})
	}
}

func TestMustLookup(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		if diff := cmp.Diff("eur", MustLookup("EUR").Code()); diff != "" {
			t.Errorf("MustLookup(EUR).Code() (-want +got):\n%s", diff)
		}
	})
	t.Run("ErrUnknownCode", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("MustLookup(xyz) did not panic")
			}
		}()
		MustLookup("xyz")
	})
}

func TestExponent(t *testing.T) {
	// ISO 4217 minor units, written down independently of the table.
	want := map[string]int{
		"usd": 2, "eur": 2, "gbp": 2, "cad": 2, "aud": 2, "chf": 2,
		"jpy": 0, "kwd": 3,
		"nzd": 2, "sek": 2, "nok": 2, "dkk": 2, "pln": 2, "czk": 2, "mxn": 2,
		"brl": 2, "sgd": 2, "hkd": 2, "inr": 2,
		"krw": 0, "bhd": 3, "jod": 3, "omr": 3,
		"aed": 2, "cny": 2, "huf": 2, "idr": 2, "ils": 2, "myr": 2, "php": 2,
		"ron": 2, "rsd": 2, "sar": 2, "thb": 2, "try": 2, "twd": 2, "zar": 2,
		"clp": 0, "isk": 0, "vnd": 0, "tnd": 3,
	}
	got := map[string]int{}
	for _, c := range Supported() {
		got[c.Code()] = c.Exponent()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exponents of Supported() (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		code string
		want int
	}{{"usd", 2}, {"eur", 2}, {"gbp", 2}, {"chf", 2}, {"jpy", 0}, {"krw", 0}, {"kwd", 3}, {"bhd", 3}} {
		t.Run("OK_"+tt.code, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, MustLookup(tt.code).Exponent()); diff != "" {
				t.Errorf("Exponent() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExponentVersusLibrary reports where the table differs from the
// digits github.com/bojanz/currency would use by default (CLDR data). The
// table stays the authority either way (see TestFormatUsesTableExponent);
// a difference appearing here is worth a look at which one is right.
func TestExponentVersusLibrary(t *testing.T) {
	var differ []string
	for _, c := range Supported() {
		d, ok := currency.GetDigits(strings.ToUpper(c.Code()))
		if !ok {
			t.Errorf("%s: unknown to github.com/bojanz/currency", c.Code())
			continue
		}
		if int(d) != c.Exponent() {
			differ = append(differ, fmt.Sprintf("%s table=%d library=%d", c.Code(), c.Exponent(), d))
		}
	}
	if diff := cmp.Diff([]string(nil), differ); diff != "" {
		t.Errorf("currencies whose exponent differs from the library's digits (-want +got):\n%s", diff)
	}
}

// TestFormatUsesTableExponent checks that formatting follows the exponent
// given to it, not the library's digits for the code.
func TestFormatUsesTableExponent(t *testing.T) {
	tests := []struct {
		name     string
		code     string
		exponent int
		amount   int64
		want     string
	}{
		{"OKMoreThanLibrary", "usd", 3, 12345, "$12.345"},
		{"OKFewerThanLibrary", "usd", 0, 12345, "$12,345"},
		{"OKZeroDecimalGetsTwo", "jpy", 2, 12345, "¥123.45"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newDisplayFormat(tt.code, tt.exponent).format(tt.amount)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("format(%d) of %s with exponent %d (-want +got):\n%s", tt.amount, tt.code, tt.exponent, diff)
			}
		})
	}
}

func TestSupported(t *testing.T) {
	all := Supported()
	var codes []string
	for _, c := range all {
		codes = append(codes, c.Code())
		if len(c.Code()) != 3 || strings.ToLower(c.Code()) != c.Code() {
			t.Errorf("code %q is not a lower-case three-letter code", c.Code())
		}
		if got, err := Lookup(c.Code()); err != nil || got != c {
			t.Errorf("Lookup(%q) = %v, %v; want the same currency", c.Code(), got.Code(), err)
		}
	}
	if !slices.IsSorted(codes) {
		t.Errorf("Supported() not sorted: %v", codes)
	}
	if diff := cmp.Diff(len(codes), len(slices.Compact(slices.Clone(codes)))); diff != "" {
		t.Errorf("Supported() has duplicates (-want +got):\n%s", diff)
	}
	// The caller owns the returned slice.
	all[0] = Currency{}
	if Supported()[0].Code() == "" {
		t.Error("modifying the result of Supported() changed later results")
	}
}

func TestZeroCurrency(t *testing.T) {
	var c Currency
	if diff := cmp.Diff("", c.Code()); diff != "" {
		t.Errorf("Code() (-want +got):\n%s", diff)
	}
	if _, err := c.Parse("$1.00"); err == nil {
		t.Error("Parse on the zero Currency succeeded")
	}
	defer func() {
		if recover() == nil {
			t.Error("Format on the zero Currency did not panic")
		}
	}()
	c.Format(1)
}

func TestPrice(t *testing.T) {
	p := MustLookup("usd").Price(1250)
	if diff := cmp.Diff(Price{Amount: 1250, Currency: "usd", Display: "$12.50"}, p); diff != "" {
		t.Errorf("Price (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(MustLookup("jpy").Price(1200))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"amount":1200,"currency":"jpy","display":"¥1,200"}`, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

func TestApplyRate(t *testing.T) {
	tests := []struct {
		name   string
		amount int64
		rate   decimal.Decimal
		want   int64
	}{
		{"OK", 1000, dec("0.0725"), 73}, // 72.5 rounds up
		{"OKNegativeHalfAwayFromZero", -1000, dec("0.0725"), -73},
		{"OKHalfRoundsUp", 1, dec("0.5"), 1},
		{"OKHalfRoundsDownForNegative", -1, dec("0.5"), -1},
		{"OKThreeHalves", 3, dec("0.5"), 2},
		{"OKJustBelowHalf", 1, dec("0.4999999"), 0},
		{"OKJustAboveHalf", 1, dec("0.5000001"), 1},
		{"OKNegativeRate", 100, dec("-0.005"), -1},
		{"OKZeroAmount", 0, dec("0.0725"), 0},
		{"OKZeroRate", 123456, dec("0"), 0},
		{"OKOne", 123456, dec("1"), 123456},
		{"OKIntegerRate", 7, dec("3"), 21},
		{"OKPositiveExponent", 7, dec("3E2"), 2100},
		{"OKTinyRate", 999_999_999_999_999, decimal.New(1, -1000000), 0},
		{"OKSmallestExponent", 999_999_999_999_999, decimal.New(math.MaxInt64, math.MinInt32), 0},
		{"OKLargeAmount", 999_999_999_999_999, dec("0.0725"), 72_500_000_000_000}, // 72499999999999.9275
		{"OKLargeAmountNegative", -999_999_999_999_999, dec("0.0725"), -72_500_000_000_000},
		{"OKLargeRate", 999_999_999_999_999, dec("1000"), 999_999_999_999_999_000},
		{"OKLargestRateThatFits", 999_999_999_999_999, dec("9223"), 9_222_999_999_999_990_777},
		{"OKManyRateDigits", 3, dec("0.1666666666666666666666666666667"), 1}, // 0.5000000000000000000000000000001
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ApplyRate(tt.amount, tt.rate)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ApplyRate(%d, %s) (-want +got):\n%s", tt.amount, tt.rate, diff)
			}
		})
	}
}

func TestPercent(t *testing.T) {
	tests := []struct {
		name    string
		amount  int64
		percent string
		want    int64
	}{
		{"OK", 1000, "7.25", 73}, // 72.5 rounds up
		{"OKHalfOfOne", 1, "50", 1},
		{"OKHalfOfThree", 3, "50", 2},
		{"OKTenPercentOfFive", 5, "10", 1},
		{"OKTwelveAndAHalfPercentOfFour", 4, "12.5", 1},
		{"OKNegative", -1000, "7.25", -73},
		{"OKNegativeHalf", -5, "10", -1},
		{"OKJustBelowHalf", 1, "49.999999", 0},
		{"OKZeroAmount", 0, "7.25", 0},
		{"OKZeroPercent", 1000, "0", 0},
		{"OKHundred", 12345, "100", 12345},
		{"OKSmallestPercent", 12345, "0.000001", 0},
		{"OKSmallestPercentOfLarge", 999_999_999_999_999, "0.000001", 10_000_000}, // 9999999.99999999
		{"OKLargeAmount", 999_999_999_999_999, "1000", 9_999_999_999_999_990},
		{"OKLargeAmountNegative", -999_999_999_999_999, "7.25", -72_500_000_000_000},
		{"OKSmallestExponent", 999_999_999_999_999, "", 0}, // percent set below: 1E-2147483648
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decimal.New(1, math.MinInt32)
			if tt.percent != "" {
				p = dec(tt.percent)
			}
			got := Percent(tt.amount, p)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Percent(%d, %s) (-want +got):\n%s", tt.amount, tt.percent, diff)
			}
		})
	}
}

func TestApplyRatePanics(t *testing.T) {
	tests := []struct {
		name   string
		fn     func(int64, decimal.Decimal) int64
		amount int64
		rate   decimal.Decimal
	}{
		{"ErrAmountAtBound", ApplyRate, 1_000_000_000_000_000, dec("0")},
		{"ErrNegativeAmountAtBound", ApplyRate, -1_000_000_000_000_000, dec("1")},
		{"ErrMaxInt64", ApplyRate, math.MaxInt64, dec("0.01")},
		{"ErrMinInt64", ApplyRate, math.MinInt64, dec("0.01")},
		{"ErrResultOverflow", ApplyRate, 999_999_999_999_999, dec("9224")},
		{"ErrResultOverflowNegative", ApplyRate, -999_999_999_999_999, dec("9224")},
		{"ErrHugeExponent", ApplyRate, 1, decimal.New(1, 1000000)},
		{"ErrPercentAmountAtBound", Percent, 1_000_000_000_000_000, dec("1")},
		{"ErrPercentResultOverflow", Percent, 999_999_999_999_999, dec("922400")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil {
					t.Fatalf("no panic for amount %d, rate %s", tt.amount, tt.rate)
				}
				if msg := fmt.Sprint(r); !strings.Contains(msg, fmt.Sprint(tt.amount)) {
					t.Errorf("panic message %q does not name the amount", msg)
				}
			}()
			tt.fn(tt.amount, tt.rate)
		})
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{name: "OK", in: "7.25", want: "7.25"},
		{name: "OKInteger", in: "20", want: "20"},
		{name: "OKZero", in: "0", want: "0"},
		{name: "OKFraction", in: "0.0725", want: "0.0725"},
		{name: "OKSixFractionDigits", in: "0.000001", want: "0.000001"},
		{name: "OKMax", in: "1000", want: "1000"},
		{name: "OKMaxWithZeros", in: "1000.000000", want: "1000"},
		{name: "OKLeadingZeros", in: "007.5", want: "7.5"},
		{name: "ErrEmpty", in: "", wantErr: true},
		{name: "ErrNegative", in: "-1", wantErr: true},
		{name: "ErrPlusSign", in: "+1", wantErr: true},
		{name: "ErrExponent", in: "1e2", wantErr: true},
		{name: "ErrLeadingSpace", in: " 7", wantErr: true},
		{name: "ErrTrailingSpace", in: "7.25 ", wantErr: true},
		{name: "ErrComma", in: "7,25", wantErr: true},
		{name: "ErrPercentSign", in: "7.25%", wantErr: true},
		{name: "ErrTooLarge", in: "1000.000001", wantErr: true},
		{name: "ErrTooLargeInteger", in: "1001", wantErr: true},
		{name: "ErrHuge", in: "99999999999999999999999999", wantErr: true},
		{name: "ErrSevenFractionDigits", in: "0.0000001", wantErr: true},
		{name: "ErrSevenFractionDigitsZeros", in: "1.0000000", wantErr: true},
		{name: "ErrLeadingDot", in: ".5", wantErr: true},
		{name: "ErrTrailingDot", in: "5.", wantErr: true},
		{name: "ErrTwoDots", in: "1.2.3", wantErr: true},
		{name: "ErrNaN", in: "NaN", wantErr: true},
		{name: "ErrInf", in: "Inf", wantErr: true},
		{name: "ErrUnderscore", in: "1_000", wantErr: true},
		{name: "ErrArabicDigit", in: "\u0661", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRate(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseRate(%q) = %s, want error", tt.in, got)
				}
				for _, want := range []string{fmt.Sprintf("%q", tt.in), "non-negative", "6 fraction digits", "1000"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("ParseRate(%q) error %q does not contain %q", tt.in, err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRate(%q): %v", tt.in, err)
			}
			if !got.Equal(dec(tt.want)) {
				t.Errorf("ParseRate(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// Property tests. They use a fixed seed so that failures reproduce.

const propertyIterations = 20000

func newRand(t *testing.T) *rand.Rand {
	t.Helper()
	return rand.New(rand.NewPCG(20240601, uint64(len(t.Name()))))
}

// randomAmount returns an amount with |amount| < 1e15, often small.
func randomAmount(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return r.Int64N(2001) - 1000
	case 1:
		return r.Int64N(2_000_001) - 1_000_000
	case 2:
		// Near a power of ten.
		p := int64(1)
		for range r.IntN(15) {
			p *= 10
		}
		return (p + r.Int64N(11) - 5) * (1 - 2*r.Int64N(2)) % maxAmount
	default:
		return r.Int64N(2*maxAmount-1) - (maxAmount - 1)
	}
}

// randomRate returns a rate coeff × 10^exp with |rate| ≤ 1000, both as a
// decimal and as an exact rational built without the decimal package.
func randomRate(r *rand.Rand, allowNegative bool) (decimal.Decimal, *big.Rat) {
	exp := int32(r.IntN(15)) - 12 // 10^-12 … 10^2
	limit := int64(1000)          // |coeff × 10^exp| ≤ 1000
	for i := exp; i < 0; i++ {
		limit *= 10
	}
	for i := int32(0); i < exp; i++ {
		limit /= 10
	}
	var coeff int64
	switch r.IntN(3) {
	case 0: // few significant digits, which makes exact halves common
		coeff = r.Int64N(min(limit, 100) + 1)
	default:
		coeff = r.Int64N(limit + 1)
	}
	if allowNegative && r.IntN(2) == 0 {
		coeff = -coeff
	}
	rat := new(big.Rat).SetInt64(coeff)
	pow := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(exp))), nil))
	if exp < 0 {
		rat.Quo(rat, pow)
	} else {
		rat.Mul(rat, pow)
	}
	return decimal.New(coeff, exp), rat
}

// randomCase returns an amount and a rate (as a decimal and as an exact
// rational). A quarter of the cases are constructed so that
// amount × rate × 10^-shift is exactly halfway between two integers.
func randomCase(r *rand.Rand, allowNegative bool, shift int) (int64, decimal.Decimal, *big.Rat) {
	if r.IntN(4) != 0 {
		amount := randomAmount(r)
		rate, rat := randomRate(r, allowNegative)
		return amount, rate, rat
	}
	// amount = 5 × 10^(k+shift-1) × odd, rate = c × 10^-k with c odd and
	// not a multiple of 5: amount × rate × 10^-shift = odd × c / 2.
	k := 1 + r.IntN(6)
	unit := int64(5)
	for range k + shift - 1 {
		unit *= 10
	}
	maxOdd := (maxAmount - 1) / unit
	amount := unit * (2*r.Int64N((maxOdd+1)/2) + 1)
	limit := int64(1000)
	for range k {
		limit *= 10
	}
	coeff := r.Int64N(limit/10)*10 + []int64{1, 3, 7, 9}[r.IntN(4)]
	if r.IntN(2) == 0 {
		amount = -amount
	}
	if allowNegative && r.IntN(2) == 0 {
		coeff = -coeff
	}
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
	return amount, decimal.New(coeff, -int32(k)), new(big.Rat).SetFrac(big.NewInt(coeff), pow)
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// roundHalfAwayFromZero rounds x to an integer, ties away from zero, using
// only math/big.
func roundHalfAwayFromZero(x *big.Rat) (result *big.Int, tie bool) {
	num := new(big.Int).Abs(x.Num())
	den := x.Denom() // positive
	// floor((2|num| + den) / (2 den)) = floor(|x| + 1/2)
	twoNum := new(big.Int).Lsh(num, 1)
	twoDen := new(big.Int).Lsh(den, 1)
	q := new(big.Int).Quo(twoNum.Add(twoNum, den), twoDen)
	if x.Sign() < 0 {
		q.Neg(q)
	}
	return q, den.Cmp(big.NewInt(2)) == 0
}

func TestApplyRateMatchesRational(t *testing.T) {
	r := newRand(t)
	ties := 0
	for range propertyIterations {
		amount, rate, rat := randomCase(r, true, 0)
		exact := new(big.Rat).Mul(new(big.Rat).SetInt64(amount), rat)
		want, tie := roundHalfAwayFromZero(exact)
		if tie {
			ties++
		}
		got := ApplyRate(amount, rate)
		if !want.IsInt64() || got != want.Int64() {
			t.Fatalf("ApplyRate(%d, %s) = %d, want %s (exact %s)", amount, rate, got, want, exact.RatString())
		}
	}
	if ties < propertyIterations/10 {
		t.Errorf("only %d exact halves tested, want at least %d", ties, propertyIterations/10)
	}
}

func TestPercentMatchesRational(t *testing.T) {
	r := newRand(t)
	ties := 0
	for range propertyIterations {
		amount, percent, rat := randomCase(r, true, 2)
		exact := new(big.Rat).Mul(new(big.Rat).SetInt64(amount), rat)
		exact.Quo(exact, big.NewRat(100, 1))
		want, tie := roundHalfAwayFromZero(exact)
		if tie {
			ties++
		}
		got := Percent(amount, percent)
		if !want.IsInt64() || got != want.Int64() {
			t.Fatalf("Percent(%d, %s) = %d, want %s (exact %s)", amount, percent, got, want, exact.RatString())
		}
	}
	if ties < propertyIterations/10 {
		t.Errorf("only %d exact halves tested, want at least %d", ties, propertyIterations/10)
	}
}

func TestApplyRateMonotonic(t *testing.T) {
	r := newRand(t)
	for range propertyIterations {
		a, b := randomAmount(r), randomAmount(r)
		if a > b {
			a, b = b, a
		}
		if r.IntN(4) == 0 && a < maxAmount-1 {
			b = a + 1 // neighbours catch off-by-one rounding
		}
		rate, _ := randomRate(r, false)
		if ra, rb := ApplyRate(a, rate), ApplyRate(b, rate); ra > rb {
			t.Fatalf("ApplyRate(%d, %s) = %d > ApplyRate(%d, %s) = %d", a, rate, ra, b, rate, rb)
		}
		if pa, pb := Percent(a, rate), Percent(b, rate); pa > pb {
			t.Fatalf("Percent(%d, %s) = %d > Percent(%d, %s) = %d", a, rate, pa, b, rate, pb)
		}
	}
}

// ParseRate output works with both functions and keeps its meaning.
func TestParseRateThenPercent(t *testing.T) {
	r := newRand(t)
	for range propertyIterations / 10 {
		whole := r.Int64N(1000)
		frac := r.Int64N(1_000_000)
		s := fmt.Sprintf("%d.%06d", whole, frac)
		p, err := ParseRate(s)
		if err != nil {
			t.Fatalf("ParseRate(%q): %v", s, err)
		}
		amount := randomAmount(r)
		exact, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot parse %q", s)
		}
		exact.Mul(exact, new(big.Rat).SetInt64(amount))
		exact.Quo(exact, big.NewRat(100, 1))
		want, _ := roundHalfAwayFromZero(exact)
		if got := Percent(amount, p); got != want.Int64() {
			t.Fatalf("Percent(%d, %s) = %d, want %s", amount, s, got, want)
		}
	}
}
