package money

import (
	"errors"
	"testing"
)

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		code, in string
		want     int64
		err      error
	}{
		{"usd", "12.50", 1250, nil},
		{"usd", "12.5", 1250, nil},
		{"usd", "12", 1200, nil},
		{"usd", "12.", 1200, nil},
		{"usd", "0.01", 1, nil},
		{"usd", "12.500", 1250, nil},
		{"usd", "12.505", 0, ErrFractionDigits},
		{"jpy", "1200", 1200, nil},
		{"jpy", "1200.00", 1200, nil},
		{"jpy", "1200.5", 0, ErrFractionDigits},
		{"kwd", "4.125", 4125, nil},
		{"kwd", "4.1255", 0, ErrFractionDigits},
		{"usd", "12.5x", 0, ErrNotDecimal},
		{"usd", "", 0, ErrNotDecimal},
		{"usd", ".50", 0, ErrNotDecimal},
		{"usd", "-1.00", 0, ErrNotDecimal},
		{"usd", "1,200.00", 0, ErrNotDecimal},
		{"usd", "1e3", 0, ErrNotDecimal},
		{"usd", " 12", 0, ErrNotDecimal},
		{"usd", "$12", 0, ErrNotDecimal},
		{"usd", "99999999999999999999", 0, ErrNotDecimal},
	}
	for _, tc := range tests {
		got, err := MustLookup(tc.code).ParseDecimal(tc.in)
		if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) || got != tc.want {
			t.Errorf("%s ParseDecimal(%q) = %d, %v; want %d, %v", tc.code, tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestDecimal(t *testing.T) {
	for _, tc := range []struct {
		code   string
		amount int64
		want   string
	}{{"usd", 1250, "12.50"}, {"jpy", 1250, "1250"}, {"kwd", 12500, "12.500"}, {"usd", 5, "0.05"}} {
		if got := MustLookup(tc.code).Decimal(tc.amount); got != tc.want {
			t.Errorf("%s Decimal(%d) = %q, want %q", tc.code, tc.amount, got, tc.want)
		}
		if back, err := MustLookup(tc.code).ParseDecimal(MustLookup(tc.code).Decimal(tc.amount)); err != nil || back != tc.amount {
			t.Errorf("%s round trip of %d: %d, %v", tc.code, tc.amount, back, err)
		}
	}
}
