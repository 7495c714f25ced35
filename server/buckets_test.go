package server

import (
	"fmt"
	"testing"
	"time"

	"shop"
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

// TestBuyerBuckets: a linked account and a host's user are people, in the
// person buckets; a caller that names nobody is its address, in the
// others; a negative PersonRateLimit leaves people unlimited.
func TestBuyerBuckets(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := s.limiter()
	for _, tc := range []struct {
		buyer shop.Buyer
		want  *buckets
	}{
		{shop.Buyer{AccountID: "acct_1", Address: "192.0.2.1"}, l.persons},
		{shop.Buyer{AccountID: "acct_1", Subject: "u", Address: "192.0.2.1"}, l.persons},
		{shop.Buyer{Subject: "u", Address: "192.0.2.1"}, l.persons},
		{shop.Buyer{Address: "192.0.2.1"}, l.buyers},
	} {
		if got := l.buyerBuckets(tc.buyer); got != tc.want {
			t.Errorf("%+v: the wrong buckets", tc.buyer)
		}
	}
	if l.persons.burst != DefaultPersonRateBurst || l.buyers.burst != DefaultRateBurst {
		t.Errorf("bursts %d and %d; want the defaults", l.persons.burst, l.buyers.burst)
	}
	s, err = New(Options{PersonRateLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	if l := s.limiter(); l.persons != nil || l.buyers == nil {
		t.Errorf("PersonRateLimit -1: persons %v, buyers %v; want only the persons unlimited", l.persons, l.buyers)
	}
}
