package catalog

import (
	"strings"
	"testing"
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
