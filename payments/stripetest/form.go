package stripetest

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// params returns the values of form under prefix: "metadata[k]" → k for
// prefix "metadata". Empty values are left out, as Stripe does on create.
func params(form url.Values, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range form {
		rest, ok := strings.CutPrefix(k, prefix+"[")
		if !ok || !strings.HasSuffix(rest, "]") || strings.ContainsAny(rest[:len(rest)-1], "[]") {
			continue
		}
		if v[0] != "" {
			out[rest[:len(rest)-1]] = v[0]
		}
	}
	return out
}

// hasPrefix reports whether a key of form is prefix or starts with prefix+"[".
func hasPrefix(form url.Values, prefix string) bool {
	for k := range form {
		if k == prefix || strings.HasPrefix(k, prefix+"[") {
			return true
		}
	}
	return false
}

func optional(form url.Values, key string) *string {
	if v := form.Get(key); v != "" {
		return &v
	}
	return nil
}

func integer(form url.Values, key string) (int64, *answer) {
	v := form.Get(key)
	if v == "" {
		a := missing(key)
		return 0, &a
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		a := invalid("parameter_invalid_integer", key, "Invalid integer: %s", v)
		return 0, &a
	}
	return n, nil
}

func positive(form url.Values, key string) (int64, *answer) {
	n, bad := integer(form, key)
	if bad == nil && n < 1 {
		a := invalid("parameter_invalid_integer", key, "This value must be greater than or equal to 1.")
		return 0, &a
	}
	return n, bad
}

func pageLimit(form url.Values) (int, *answer) {
	if !form.Has("limit") {
		return 10, nil
	}
	n, bad := integer(form, "limit")
	if bad == nil && (n < 1 || n > 100) {
		a := invalid("parameter_invalid_integer", "limit", "This value must be between 1 and 100.")
		return 0, &a
	}
	return int(n), bad
}

// money writes an amount as Stripe's refund errors do: $25.99, or 25.99 EUR.
func money(minor int64, currency string) string {
	s := fmt.Sprintf("%d.%02d", minor/100, minor%100)
	if currency == "usd" {
		return "$" + s
	}
	return s + " " + strings.ToUpper(currency)
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

func stringPtr(s string) *string { return &s }
