package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
	"shop/notify/smtptest"
)

// clock is a clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func testEmail(key string) Email {
	return Email{Key: key, Ref: "ord_1", Kind: "confirmation", To: "ada@example.com", ReplyTo: "help@northwind.example",
		Subject: "Your order", Text: "Thank you.\n", HTML: "<p>Thank you.</p>"}
}

func enqueue(t *testing.T, db *gorm.DB, clk *clock, emails ...Email) {
	t.Helper()
	ctx := database.WithClock(context.Background(), clk.Now)
	err := database.Transact(ctx, db, func(tx *gorm.DB) error {
		for _, e := range emails {
			if err := Enqueue(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func worker(t *testing.T, db *gorm.DB, srv *smtptest.Server, clk *clock, opts WorkerOptions) *Worker {
	t.Helper()
	s, err := ParseSMTPURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	opts.Now = clk.Now
	opts.Logger = slog.New(slog.DiscardHandler)
	return NewWorker(db, s, "Northwind Goods <orders@northwind.example>", &opts)
}

func records(t *testing.T, db *gorm.DB) []Record {
	t.Helper()
	got, err := List(context.Background(), db, "ord_1")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func deliver(t *testing.T, w *Worker, want int) {
	t.Helper()
	n, err := w.Deliver(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("Deliver sent %d, want %d", n, want)
	}
}

func TestDeliver(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv, clk := smtptest.Start(t), newClock()
		enqueue(t, db, clk, testEmail("ord_1/confirmation"))
		enqueue(t, db, clk, testEmail("ord_1/confirmation")) // the same key: nothing more
		w := worker(t, db, srv, clk, WorkerOptions{})
		deliver(t, w, 1)
		deliver(t, w, 0)
		got := srv.Messages()
		if len(got) != 1 {
			t.Fatalf("the server got %d messages, want 1", len(got))
		}
		if got[0].From != "orders@northwind.example" || strings.Join(got[0].To, ",") != "ada@example.com" {
			t.Errorf("envelope from %q to %v", got[0].From, got[0].To)
		}
		p, err := got[0].Parse()
		if err != nil {
			t.Fatal(err)
		}
		recs := records(t, db)
		for k, want := range map[string]string{
			"Subject": "Your order", "Reply-To": "<help@northwind.example>", "To": "<ada@example.com>",
			"From": `"Northwind Goods" <orders@northwind.example>`, "Message-Id": "<" + recs[0].ID + "@northwind.example>",
		} {
			if g := p.Header.Get(k); g != want {
				t.Errorf("%s: %q, want %q", k, g, want)
			}
		}
		if p.Parts["text/plain"] != "Thank you.\n" || p.Parts["text/html"] != "<p>Thank you.</p>" {
			t.Errorf("parts %q", p.Parts)
		}
		if len(recs) != 1 || recs[0].Status != Sent || recs[0].Attempts != 1 || recs[0].SentAt == nil {
			t.Errorf("records %+v", recs)
		}
	})
}

func TestRolledBack(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		boom := errors.New("the order's transaction fails")
		err := database.Transact(ctx, db, func(tx *gorm.DB) error {
			if err := Enqueue(ctx, tx, testEmail("ord_1/confirmation")); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if got := records(t, db); len(got) != 0 {
			t.Fatalf("a rolled-back transaction left %+v", got)
		}
	})
}

func TestTemporaryThenAccepted(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv, clk := smtptest.Start(t), newClock()
		srv.Refuse(451)
		enqueue(t, db, clk, testEmail("ord_1/confirmation"))
		w := worker(t, db, srv, clk, WorkerOptions{Backoff: time.Minute})
		deliver(t, w, 0)
		rec := records(t, db)[0]
		if rec.Status != Pending || rec.Attempts != 1 || !strings.Contains(rec.LastError, "451") {
			t.Fatalf("after a 451: %+v", rec)
		}
		deliver(t, w, 0) // backing off
		clk.Add(time.Minute)
		deliver(t, w, 1)
		clk.Add(time.Hour)
		deliver(t, w, 0)
		if n, tries := len(srv.Messages()), srv.Tries(); n != 1 || tries != 2 {
			t.Fatalf("the server accepted %d of %d tries, want 1 of 2", n, tries)
		}
		if rec := records(t, db)[0]; rec.Status != Sent || rec.Attempts != 2 || rec.LastError != "" {
			t.Fatalf("after the 250: %+v", rec)
		}
	})
}

func TestPermanentRefusal(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv, clk := smtptest.Start(t), newClock()
		srv.Refuse(550)
		enqueue(t, db, clk, testEmail("ord_1/confirmation"))
		w := worker(t, db, srv, clk, WorkerOptions{Backoff: time.Minute})
		deliver(t, w, 0)
		for range 5 {
			clk.Add(24 * time.Hour)
			deliver(t, w, 0)
		}
		if tries := srv.Tries(); tries != 1 {
			t.Fatalf("the server was offered the message %d times, want 1", tries)
		}
		rec := records(t, db)[0]
		if rec.Status != Failed || rec.Attempts != 1 || !strings.Contains(rec.LastError, "550") {
			t.Fatalf("after a 550: %+v", rec)
		}
		b, err := Stand(context.Background(), db)
		if err != nil || b.Failed != 1 || b.Pending != 0 {
			t.Fatalf("backlog %+v, %v", b, err)
		}
	})
}

func TestGiveUp(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv, clk := smtptest.Start(t), newClock()
		srv.Refuse(421, 452, 451)
		enqueue(t, db, clk, testEmail("ord_1/confirmation"))
		w := worker(t, db, srv, clk, WorkerOptions{Backoff: time.Minute, MaxAttempts: 3})
		for range 6 {
			deliver(t, w, 0)
			clk.Add(time.Hour)
		}
		rec := records(t, db)[0]
		if rec.Status != Failed || rec.Attempts != 3 || !strings.Contains(rec.LastError, "gave up after 3 temporary failures") {
			t.Fatalf("%+v", rec)
		}
		if srv.Tries() != 3 {
			t.Fatalf("%d tries, want 3", srv.Tries())
		}
	})
}

// A worker that ends holding a claim (its process died) does not keep the
// email: once the lease runs out another sends it, and the first, should it
// come back, records nothing over it.
func TestLeaseRunsOut(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv, clk := smtptest.Start(t), newClock()
		enqueue(t, db, clk, testEmail("ord_1/confirmation"))
		dead := worker(t, db, srv, clk, WorkerOptions{Lease: time.Minute})
		r, err := dead.claim(context.Background(), records(t, db)[0].ID)
		if err != nil || r == nil {
			t.Fatalf("claim: %v, %v", r, err)
		}
		w := worker(t, db, srv, clk, WorkerOptions{Lease: time.Minute})
		deliver(t, w, 0) // claimed and leased
		clk.Add(time.Minute)
		deliver(t, w, 1)
		if _, err := dead.send(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if rec := records(t, db)[0]; rec.Status != Sent || rec.Attempts != 2 {
			t.Fatalf("%+v", rec)
		}
	})
}

// Workers of several replicas share the outbox: each email goes out once.
func TestWorkersShareOutbox(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv, clk := smtptest.Start(t), newClock()
		const n = 30
		var emails []Email
		for i := range n {
			e := testEmail(fmt.Sprintf("ord_1/%d", i))
			e.Subject = fmt.Sprintf("email %d", i)
			emails = append(emails, e)
		}
		enqueue(t, db, clk, emails...)
		var wg sync.WaitGroup
		for range 4 {
			w := worker(t, db, srv, clk, WorkerOptions{Batch: n})
			wg.Go(func() {
				if _, err := w.Deliver(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		seen := srv.Subjects(t)
		if len(seen) != n || srv.Tries() != n {
			t.Fatalf("%d distinct of %d tries, want %d of %d", len(seen), srv.Tries(), n, n)
		}
		for s, c := range seen {
			if c != 1 {
				t.Errorf("%s sent %d times", s, c)
			}
		}
	})
}

func TestParseSMTPURL(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{"smtp://mail.example.com", "smtp://mail.example.com:587", ""},
		{"smtp://user:p%40ss@mail.example.com:2525", "smtp://user@mail.example.com:2525", ""},
		{"smtps://user:pass@mail.example.com", "smtps://user@mail.example.com:465", ""},
		{"smtp://127.0.0.1:1025?tls=none", "smtp://127.0.0.1:1025?tls=none", ""},
		{"smtp://localhost:1025?tls=none", "smtp://localhost:1025?tls=none", ""},
		{"smtp://mail.example.com:25?tls=none", "", "only to this machine"},
		{"smtps://127.0.0.1?tls=none", "", "goes with smtp://"},
		{"smtp://127.0.0.1?tls=off", "", "the one value is none"},
		{"smtp://127.0.0.1?ssl=1", "", "unknown parameter"},
		{"http://mail.example.com", "", "scheme"},
		{"smtp://", "", "no host"},
		{"smtp://mail.example.com:99999", "", "port"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseSMTPURL(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.String() != tt.want {
				t.Fatalf("%s, want %s", s, tt.want)
			}
		})
	}
}
