package shop_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"shop"
)

// TestNewID: ids are the prefix, 9 characters of time and 26 of randomness
// (130 bits), all lower-case base32; they never repeat.
func TestNewID(t *testing.T) {
	shape := regexp.MustCompile(`^cs_[a-z2-7]{35}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := shop.NewID("cs_")
		if !shape.MatchString(id) {
			t.Fatalf("NewID = %q; want cs_ and 35 of [a-z2-7]", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
	}
}

// TestNewIDSortsByTime: an id made later sorts after an earlier one as
// text, whatever their random parts, so that the indexes keyed by ids grow
// at their end; ids of the same millisecond share the time part.
func TestNewIDSortsByTime(t *testing.T) {
	timePart := func(id string) string { return strings.TrimPrefix(id, "ord_")[:shop.IDTimeLen] }
	prev := shop.NewID("ord_")
	for range 5 {
		time.Sleep(2 * time.Millisecond)
		next := shop.NewID("ord_")
		if timePart(next) <= timePart(prev) || next <= prev {
			t.Fatalf("NewID %q made after %q sorts before it", next, prev)
		}
		prev = next
	}
	a, b := shop.NewID(""), shop.NewID("")
	if a[:shop.IDTimeLen] > b[:shop.IDTimeLen] {
		t.Fatalf("NewID %q made after %q has an earlier time", b, a)
	}
}
