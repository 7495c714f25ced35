package catalog

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"Crème Brûlée MUGS, for the café!", []string{"creme", "brulee", "mug", "cafe"}},
		{"glass glasses dress bus", []string{"glass", "dress", "bus"}},
		{"berries boxes dishes benches mugs", []string{"berry", "box", "dish", "bench", "mug"}},
		{"the and of", nil},
		{"XL/navy 100% cotton", []string{"xl", "navy", "100", "cotton"}},
		{strings.Repeat("a", 50), []string{strings.Repeat("a", maxTermLen)}},
		{"日本 mug", []string{"mug"}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, tokenize(tc.in)); diff != "" {
			t.Errorf("tokenize(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	for in, want := range map[string]string{"mug": "muh", "ab9": "aba", "az": "b", "a9z": "aa", "zz": "", "0": "1"} {
		if got := prefixEnd(in); got != want {
			t.Errorf("prefixEnd(%q) = %q, want %q", in, got, want)
		}
	}
	// Every term that starts with a prefix lies in [prefix, prefixEnd); no
	// other term does.
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	r := rand.New(rand.NewPCG(7, 7))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 20_000 {
		prefix, term := word(1+r.IntN(3)), word(1+r.IntN(5))
		if r.IntN(2) == 0 {
			term = prefix + term
		}
		end := prefixEnd(prefix)
		inRange := term >= prefix && (end == "" || term < end)
		if inRange != strings.HasPrefix(term, prefix) {
			t.Fatalf("prefix %q, end %q, term %q: in range %t", prefix, end, term, inRange)
		}
	}
}
