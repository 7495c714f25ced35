package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/database/dbtest"
	"shop/idempotency"
)

func fp(t *testing.T, payload string) []byte {
	t.Helper()
	f, err := idempotency.Fingerprint([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// counted returns an fn that answers answer, counting its runs.
func counted(n *atomic.Int32, answer string, keep bool, err error) func(context.Context) ([]byte, bool, error) {
	return func(context.Context) ([]byte, bool, error) {
		n.Add(1)
		return []byte(answer), keep, err
	}
}

// fixture is a Store on a test database, its clock and the first request.
type fixture struct {
	s       *idempotency.Store
	clock   func() time.Time
	advance func(time.Duration)
	req     idempotency.Request
}

// TestStore runs each rule of Do and Sweep, in order on one database, on
// SQLite and PostgreSQL.
func TestStore(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		now := time.Date(2026, 4, 17, 12, 0, 0, 0, time.UTC)
		var mu sync.Mutex
		f := &fixture{
			clock:   func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
			advance: func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() },
			req:     idempotency.Request{Scope: "acp|agent|create_checkout_session", Key: "k1", Fingerprint: fp(t, `{"a":1}`)},
		}
		f.s = idempotency.New(db).WithClock(f.clock)
		for _, tc := range []struct {
			name string
			run  func(*testing.T, *fixture)
		}{
			{"ReplayReturnsStoredAnswer", testReplayReturnsStoredAnswer},
			{"EquivalentPayloadReplays", testEquivalentPayloadReplays},
			{"ErrConflict", testErrConflict},
			{"ScopedByToolAndAgent", testScopedByToolAndAgent},
			{"NotKeptIsRetried", testNotKeptIsRetried},
			{"ErrInFlight", testErrInFlight},
			{"CrashedCallTakenOverAfterLease", testCrashedCallTakenOverAfterLease},
			{"KeptAtLeastRetentionThenNew", testKeptAtLeastRetentionThenNew},
			{"Sweep", testSweep},
			{"ConcurrentCallersRunOnce", testConcurrentCallersRunOnce},
		} {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, f) })
		}
	})
}

func testReplayReturnsStoredAnswer(t *testing.T, f *fixture) {
	var n atomic.Int32
	for i := range 3 {
		got, err := f.s.Do(t.Context(), f.req, counted(&n, "answer-1", true, nil))
		if err != nil || string(got) != "answer-1" {
			t.Fatalf("call %d: %q, %v", i, got, err)
		}
	}
	if n.Load() != 1 {
		t.Errorf("fn ran %d times, want 1", n.Load())
	}
}

func testEquivalentPayloadReplays(t *testing.T, f *fixture) {
	var n atomic.Int32
	same := f.req
	same.Fingerprint = fp(t, ` { "a" : 1.0 } `)
	got, err := f.s.Do(t.Context(), same, counted(&n, "other", true, nil))
	if err != nil || string(got) != "answer-1" || n.Load() != 0 {
		t.Fatalf("got %q, %v, ran %d", got, err, n.Load())
	}
}

func testErrConflict(t *testing.T, f *fixture) {
	var n atomic.Int32
	other := f.req
	other.Fingerprint = fp(t, `{"a":2}`)
	_, err := f.s.Do(t.Context(), other, counted(&n, "x", true, nil))
	if !errors.Is(err, idempotency.ErrConflict) || n.Load() != 0 {
		t.Fatalf("err %v, ran %d; want ErrConflict and no run", err, n.Load())
	}
}

func testScopedByToolAndAgent(t *testing.T, f *fixture) {
	var n atomic.Int32
	for _, scope := range []string{"acp|agent|update_checkout_session", "acp|agent2|create_checkout_session", "ucp|agent|create_checkout_session"} {
		r := f.req
		r.Scope = scope
		r.Fingerprint = fp(t, `{"b":1}`)
		if got, err := f.s.Do(t.Context(), r, counted(&n, scope, true, nil)); err != nil || string(got) != scope {
			t.Fatalf("%s: %q, %v", scope, got, err)
		}
	}
	if n.Load() != 3 {
		t.Errorf("ran %d times, want 3", n.Load())
	}
}

func testNotKeptIsRetried(t *testing.T, f *fixture) {
	var n atomic.Int32
	r := idempotency.Request{Scope: "s", Key: "not-kept", Fingerprint: fp(t, `1`)}
	if _, err := f.s.Do(t.Context(), r, counted(&n, "processing error", false, nil)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := f.s.Do(t.Context(), r, counted(&n, "", true, boom)); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if got, err := f.s.Do(t.Context(), r, counted(&n, "ok", true, nil)); err != nil || string(got) != "ok" {
		t.Fatalf("%q, %v", got, err)
	}
	if n.Load() != 3 {
		t.Errorf("ran %d times, want 3", n.Load())
	}
}

func testErrInFlight(t *testing.T, f *fixture) {
	r := idempotency.Request{Scope: "s", Key: "in-flight", Fingerprint: fp(t, `1`)}
	started, finish := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := f.s.Do(t.Context(), r, func(context.Context) ([]byte, bool, error) {
			close(started)
			<-finish
			return []byte("first"), true, nil
		})
		first <- err
	}()
	<-started
	var n atomic.Int32
	if _, err := f.s.Do(t.Context(), r, counted(&n, "second", true, nil)); !errors.Is(err, idempotency.ErrInFlight) {
		t.Errorf("err %v, want ErrInFlight", err)
	}
	close(finish)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got, err := f.s.Do(t.Context(), r, counted(&n, "third", true, nil)); err != nil || string(got) != "first" || n.Load() != 0 {
		t.Fatalf("after: %q, %v, ran %d", got, err, n.Load())
	}
}

func testCrashedCallTakenOverAfterLease(t *testing.T, f *fixture) {
	r := idempotency.Request{Scope: "s", Key: "crashed", Fingerprint: fp(t, `1`)}
	// A caller that never returns stands for one that crashed.
	started := make(chan struct{})
	go func() {
		_, _ = f.s.Do(t.Context(), r, func(ctx context.Context) ([]byte, bool, error) {
			close(started)
			select {}
		})
	}()
	<-started
	var n atomic.Int32
	if _, err := f.s.Do(t.Context(), r, counted(&n, "x", true, nil)); !errors.Is(err, idempotency.ErrInFlight) {
		t.Fatalf("within the lease: %v, want ErrInFlight", err)
	}
	f.advance(idempotency.Lease + time.Second)
	if got, err := f.s.Do(t.Context(), r, counted(&n, "retried", true, nil)); err != nil || string(got) != "retried" {
		t.Fatalf("after the lease: %q, %v", got, err)
	}
}

func testKeptAtLeastRetentionThenNew(t *testing.T, f *fixture) {
	var n atomic.Int32
	r := idempotency.Request{Scope: "s", Key: "retention", Fingerprint: fp(t, `1`)}
	if _, err := f.s.Do(t.Context(), r, counted(&n, "old", true, nil)); err != nil {
		t.Fatal(err)
	}
	f.advance(idempotency.Retention - time.Minute)
	if got, _ := f.s.Do(t.Context(), r, counted(&n, "new", true, nil)); string(got) != "old" {
		t.Fatalf("within retention got %q, want the stored answer", got)
	}
	f.advance(2 * time.Minute)
	other := r
	other.Fingerprint = fp(t, `2`)
	if got, err := f.s.Do(t.Context(), other, counted(&n, "new", true, nil)); err != nil || string(got) != "new" {
		t.Fatalf("past retention: %q, %v; want a new request", got, err)
	}
}

func testSweep(t *testing.T, f *fixture) {
	var n atomic.Int32
	r := idempotency.Request{Scope: "s", Key: "swept", Fingerprint: fp(t, `1`)}
	if _, err := f.s.Do(t.Context(), r, counted(&n, "a", true, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Sweep(t.Context(), f.clock().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.s.Do(t.Context(), r, counted(&n, "b", true, nil)); string(got) != "a" {
		t.Fatalf("after a sweep of older answers got %q, want the stored one", got)
	}
	deleted, err := f.s.Sweep(t.Context(), f.clock().Add(time.Second))
	if err != nil || deleted == 0 {
		t.Fatalf("sweep: %d, %v", deleted, err)
	}
	if got, _ := f.s.Do(t.Context(), r, counted(&n, "b", true, nil)); string(got) != "b" {
		t.Fatalf("after sweep got %q, want a new run", got)
	}
}

func testConcurrentCallersRunOnce(t *testing.T, f *fixture) {
	var n atomic.Int32
	r := idempotency.Request{Scope: "s", Key: "race", Fingerprint: fp(t, `1`)}
	var wg sync.WaitGroup
	var answered, inFlight atomic.Int32
	for range 16 {
		wg.Go(func() {
			got, err := f.s.Do(t.Context(), r, func(context.Context) ([]byte, bool, error) {
				n.Add(1)
				time.Sleep(20 * time.Millisecond)
				return []byte("once"), true, nil
			})
			switch {
			case errors.Is(err, idempotency.ErrInFlight):
				inFlight.Add(1)
			case err != nil:
				t.Error(err)
			case string(got) == "once":
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	if n.Load() != 1 || answered.Load()+inFlight.Load() != 16 {
		t.Fatalf("ran %d, answered %d, in flight %d", n.Load(), answered.Load(), inFlight.Load())
	}
}

func TestFingerprint(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
		{`{"q":1}`, `{"q":1.0}`, true},
		{`{"q":1}`, `{"q":1e0}`, true},
		{`{"q":null}`, `{}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"s":"x"}`, `{"s":"y"}`, false},
		{``, `null`, true},
	}
	for _, tt := range tests {
		fa, err := idempotency.Fingerprint([]byte(tt.a))
		if err != nil {
			t.Fatal(err)
		}
		fb, err := idempotency.Fingerprint([]byte(tt.b))
		if err != nil {
			t.Fatal(err)
		}
		if same := string(fa) == string(fb); same != tt.same {
			t.Errorf("%s vs %s: same=%v, want %v", tt.a, tt.b, same, tt.same)
		}
	}
	if _, err := idempotency.Fingerprint([]byte(`{"a":`)); err == nil {
		t.Error("broken JSON: no error")
	}
}

// TestReleasedWhileClaiming has callers of one key claim it while others
// release it (answers that are not kept): a key that goes between a
// caller's insert and its read is claimed again, so every caller either
// runs or is told the first is in flight, never handed an error of the
// store's own.
func TestReleasedWhileClaiming(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := idempotency.New(db)
		req := idempotency.Request{Scope: "ucp|agent|complete_checkout", Key: "k", Fingerprint: fp(t, `{"a":1}`)}
		var wg sync.WaitGroup
		errs := make(chan error, 8*25)
		for range 8 {
			wg.Go(func() {
				for range 25 {
					_, err := s.Do(t.Context(), req, func(context.Context) ([]byte, bool, error) {
						return []byte(`{"status":"complete_in_progress"}`), false, nil
					})
					if err != nil && !errors.Is(err, idempotency.ErrInFlight) {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// TestScopeStoredAsHash: however long a caller makes a scope, its row keeps
// the scope's 64-character hash, and the scope still tells keys apart.
func TestScopeStoredAsHash(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := idempotency.New(db)
		long := "acp|agent|update_checkout_session|" + strings.Repeat("x", 100<<10)
		var n atomic.Int32
		for range 2 {
			r := idempotency.Request{Scope: long, Key: "k", Fingerprint: fp(t, `1`)}
			if got, err := s.Do(t.Context(), r, counted(&n, "answer", true, nil)); err != nil || string(got) != "answer" {
				t.Fatalf("Do: %q, %v", got, err)
			}
		}
		other := idempotency.Request{Scope: long + "y", Key: "k", Fingerprint: fp(t, `1`)}
		if _, err := s.Do(t.Context(), other, counted(&n, "other", true, nil)); err != nil {
			t.Fatal(err)
		}
		if n.Load() != 2 {
			t.Errorf("ran %d times, want 2 (a replay, then another scope)", n.Load())
		}
		var longest int64
		if err := db.Raw("SELECT MAX(LENGTH(scope)) FROM idempotency_keys").Scan(&longest).Error; err != nil {
			t.Fatal(err)
		}
		if longest != 64 {
			t.Errorf("longest stored scope %d characters, want 64 (a SHA-256 in hex)", longest)
		}
	})
}
