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
// lineDescription says what it says of the description split into words
// and joined with single spaces (the way it takes for most descriptions,
// which are single spaced already, is a short cut to the same).
func TestLineDescriptionSpaces(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"mug", "é", "Ünïcode", ".", ". ", " ", "  ", "\n", "\t", "\u00a0", "\u2003", "—", "steel"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(120) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in := b.String()
		got, want := lineDescription(in), lineDescription(strings.Join(strings.Fields(in), " "))
		if got != want {
			t.Fatalf("lineDescription(%q) = %q; of it single spaced %q", in, got, want)
		}
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > 201 {
			t.Fatalf("lineDescription(%q) = %q", in, got)
		}
	}
}
