package shop

import (
	"testing"
	"time"
)

// TestTimePartSorts: the time part of later milliseconds sorts after that of
// earlier ones across every character's 32 values, today and in a thousand
// years.
func TestTimePartSorts(t *testing.T) {
	for _, start := range []time.Time{time.Now(), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		prev := timePart(start)
		for ms := 1; ms < 1<<22; ms += 997 {
			next := timePart(start.Add(time.Duration(ms) * time.Millisecond))
			if len(next) != IDTimeLen || next <= prev {
				t.Fatalf("timePart at +%d ms = %q, not after %q", ms, next, prev)
			}
			prev = next
		}
	}
}
