package catalog

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLineDescription: a checkout line says the first sentence of the
// product's description, at most 200 characters, cut at a word.
func TestLineDescription(t *testing.T) {
	long := strings.Repeat("word ", 60)
	for _, tt := range []struct{ name, in, want string }{
		{"FirstSentence", "A steel mug.  Holds 12 oz. Hand-wash.", "A steel mug."},
		{"One", "  A mug\nfor camp ", "A mug for camp"},
		{"Empty", "", ""},
		{"Long", long, strings.TrimSpace(strings.Repeat("word ", 39)) + " word…"},
		{"LongOneWord", strings.Repeat("é", 250), strings.Repeat("é", 200) + "…"},
		{"NotUTF8", "A mug\xff. Blue.", "A mug\uFFFD."},
		{"Comma", "A mug, steel. Blue.", "A mug, steel."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := lineDescription(tt.in)
			if got != tt.want {
				t.Errorf("lineDescription(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if n := len([]rune(got)); n > 201 {
				t.Errorf("%d characters", n)
			}
		})
	}
}

// TestLineDescriptionSpaces: whatever the white space of a description,
// around the 200th character too, lineDescription says what the rule says
// (describedLine): the short cut it takes for a description single spaced
// where it reads it comes to the same.
func TestLineDescriptionSpaces(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"mug", "é", "Ünïcode", ".", ". ", ", ", " ", " ", " ", "  ", "\n", "\t", "\u00a0", "\u2003", "—", "x.", "steel"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(250) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in := b.String()
		if got, want := lineDescription(in), describedLine(in); got != want {
			t.Fatalf("lineDescription(%q) = %q, want %q", in, got, want)
		}
	}
}

// describedLine is the rule of lineDescription, written plainly: the
// description's words joined by single spaces, to the end of its first
// sentence, and at most 200 characters of that, cut at a word.
func describedLine(d string) string {
	d = strings.Join(strings.Fields(d), " ")
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	if utf8.RuneCountInString(d) <= 200 {
		return d
	}
	r := string([]rune(d)[:200])
	if i := strings.LastIndexByte(r, ' '); i > 0 {
		return r[:i] + "…"
	}
	return r + "…"
}
