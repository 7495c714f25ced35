package shop_test

import (
	"regexp"
	"testing"

	"shop"
)

// TestNewID: ids are the prefix and 26 lower-case base32 characters (130
// random bits), and never repeat.
func TestNewID(t *testing.T) {
	shape := regexp.MustCompile(`^cs_[a-z2-7]{26}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := shop.NewID("cs_")
		if !shape.MatchString(id) {
			t.Fatalf("NewID = %q; want cs_ and 26 of [a-z2-7]", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
}
