package money

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of [Currency.ParseDecimal], matched with errors.Is.
var (
	// ErrNotDecimal: the string is not a plain non-negative decimal number.
	ErrNotDecimal = errors.New("not a plain decimal number")
	// ErrFractionDigits: the number has more fraction digits than the
	// currency's minor unit holds.
	ErrFractionDigits = errors.New("more fraction digits than the currency has")
)

// ParseDecimal returns the minor units of a plain decimal number of major
// units, as shop platforms' exports write prices: "12.50" usd is 1250,
// "1200" jpy is 1200, "4.125" kwd is 4125. It accepts ASCII digits with an
// optional '.' and at most Exponent() fraction digits; more are accepted
// only when they are zeros ("1200.00" jpy, "12.500" usd), which change
// nothing. Signs, spaces, exponents, thousands separators and currency
// symbols are refused, as are values beyond the int64 range. No floating
// point is involved.
//
// Errors wrap [ErrNotDecimal] or [ErrFractionDigits].
func (c Currency) ParseDecimal(s string) (int64, error) {
	if c.info == nil {
		return 0, errors.New("money: ParseDecimal called on the zero Currency; use Lookup")
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if !isDigits(intPart) || hasDot && frac != "" && !isDigits(frac) {
		return 0, fmt.Errorf("money: %q: %w", s, ErrNotDecimal)
	}
	exp := c.info.exponent
	if len(frac) > exp {
		if strings.Trim(frac[exp:], "0") != "" {
			return 0, fmt.Errorf("money: %q has %d fraction digits, %s has %d: %w", s, len(strings.TrimRight(frac, "0")), strings.ToUpper(c.info.code), exp, ErrFractionDigits)
		}
		frac = frac[:exp]
	}
	num := intPart
	if frac != "" {
		num += "." + frac
	}
	u, err := parseMagnitude(num, exp)
	if err != nil || u > 1<<63-1 {
		return 0, fmt.Errorf("money: %q is out of the range of amounts: %w", s, ErrNotDecimal)
	}
	return int64(u), nil
}

// Decimal returns amount minor units as a plain decimal number of major
// units with exactly Exponent() fraction digits, as [Currency.ParseDecimal]
// reads it: 1250 usd is "12.50", 1250 jpy "1250", 12500 kwd "12.500".
func (c Currency) Decimal(amount int64) string {
	return decimalString(amount, c.Exponent())
}
