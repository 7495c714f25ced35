package server

import (
	"fmt"
	"testing"
	"time"
)

// TestBucketsSwept: buckets left alone long enough to fill up again are
// forgotten (a flood of made-up ids leaves nothing behind), and forgetting
// them changes nothing; a bucket in use keeps its state.
func TestBucketsSwept(t *testing.T) {
	b := newBuckets(20, 150)
	if b.idle != 7500*time.Millisecond {
		t.Fatalf("idle %s; want 7.5s, the time 150 tokens take to come back at 20 a second", b.idle)
	}
	t0 := b.swept
	for i := range 10000 {
		if ok, _, _ := b.allow(fmt.Sprintf("subject:made-up-%d", i), t0); !ok {
			t.Fatalf("a new bucket refused")
		}
	}
	for range 150 {
		b.allow("subject:busy", t0.Add(b.idle))
	}
	if n := b.size(); n != 10001 {
		t.Fatalf("%d buckets; want 10001", n)
	}
	ok, wait, _ := b.allow("subject:busy", t0.Add(b.idle+time.Millisecond))
	if n := b.size(); n != 1 {
		t.Errorf("%d buckets after the made-up ids went idle; want only the busy one", n)
	}
	if ok || wait <= 0 {
		t.Errorf("the busy bucket, emptied a moment ago: allowed %t, wait %s; want refused", ok, wait)
	}
}
