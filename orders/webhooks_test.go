package orders

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
	"shop/notify"
)

// platform is an agent's platform's webhook endpoint on 127.0.0.1: it
// counts the POSTs of each event (Webhook-Id) and answers status.
type platform struct {
	*httptest.Server
	mu     sync.Mutex
	tries  map[string]int
	status int
}

func startPlatform(t *testing.T, status int) *platform {
	p := &platform{tries: map[string]int{}, status: status}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.tries[r.Header.Get("Webhook-Id")]++
		p.mu.Unlock()
		w.WriteHeader(p.status)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *platform) counts() (events, posts int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.tries {
		posts += n
	}
	return len(p.tries), posts
}

// poster is a WebhookSender that POSTs the event's id, as ucp's does
// (unsigned: the signature is ucp's business).
type poster struct{}

func (poster) SendWebhook(ctx context.Context, w Webhook) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader([]byte(`{"id":"`+w.OrderID+`"}`)))
	if err != nil {
		return err
	}
	req.Header.Set("Webhook-Id", w.ID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("platform answered %d", res.StatusCode)
	}
	return nil
}

// hookClock is a clock the test moves.
type hookClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *hookClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *hookClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// placeWithWebhooks writes n orders' subscriptions to url and their created
// events, as completion does, at the clock's time.
func placeWithWebhooks(t *testing.T, db *gorm.DB, clk *hookClock, url string, n int) {
	t.Helper()
	ctx := database.WithClock(context.Background(), clk.Now)
	err := database.Transact(ctx, db, func(tx *gorm.DB) error {
		for i := range n {
			session, order := fmt.Sprintf("cs_%d", i), fmt.Sprintf("ord_%d", i)
			if err := tx.Create(&hookRow{SessionID: session, URL: url, CreatedAt: clk.Now()}).Error; err != nil {
				return err
			}
			if err := linkWebhook(tx, session, order); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func hookWorker(db *gorm.DB, clk *hookClock, opts WebhookOptions) *WebhookWorker {
	opts.Now, opts.Logger = clk.Now, slog.New(slog.DiscardHandler)
	return NewWebhookWorker(db, poster{}, &opts)
}

func events(t *testing.T, db *gorm.DB) []eventRow {
	t.Helper()
	var rows []eventRow
	if err := db.Order("order_id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestWebhookWorkersRace: the workers of several replicas share the
// outbox, and each event is POSTed once.
func TestWebhookWorkersRace(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p, clk := startPlatform(t, http.StatusOK), &hookClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
		const n = 24
		placeWithWebhooks(t, db, clk, p.URL, n)
		var wg sync.WaitGroup
		var mu sync.Mutex
		delivered := 0
		for range 4 {
			w := hookWorker(db, clk, WebhookOptions{Batch: n})
			wg.Go(func() {
				k, err := w.Deliver(context.Background())
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				delivered += k
				mu.Unlock()
			})
		}
		wg.Wait()
		if ev, posts := p.counts(); ev != n || posts != n || delivered != n {
			t.Fatalf("%d events in %d POSTs, %d counted delivered; want %d of each", ev, posts, delivered, n)
		}
		for _, r := range events(t, db) {
			if r.Status != notify.Sent || r.Attempts != 1 || r.SentAt == nil || r.Claim != "" {
				t.Errorf("%s: %+v", r.OrderID, r.Delivery)
			}
		}
	})
}

// TestWebhookRetriedThenGivenUp: an event the platform refuses is tried
// again after a back-off that doubles, and given up on after MaxAttempts
// tries; the backlog shows it pending, then failed.
func TestWebhookRetriedThenGivenUp(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		p, clk := startPlatform(t, http.StatusInternalServerError), &hookClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
		placeWithWebhooks(t, db, clk, p.URL, 1)
		o := New(db, &Options{Now: clk.Now})
		w := hookWorker(db, clk, WebhookOptions{Backoff: time.Minute, MaxAttempts: 3})
		pass := func(wantPosts int) eventRow {
			t.Helper()
			if n, err := w.Deliver(ctx); err != nil || n != 0 {
				t.Fatalf("Deliver: %d, %v", n, err)
			}
			if _, posts := p.counts(); posts != wantPosts {
				t.Fatalf("%d POSTs, want %d", posts, wantPosts)
			}
			return events(t, db)[0]
		}
		start := clk.Now()
		r := pass(1)
		if r.Status != notify.Pending || r.Attempts != 1 || !r.NextAt.Equal(start.Add(time.Minute)) || !strings.Contains(r.LastError, "500") {
			t.Fatalf("after the first refusal: %+v", r.Delivery)
		}
		if b, err := o.WebhookBacklog(ctx); err != nil || b.Pending != 1 || b.Failed != 0 || !b.Oldest.Equal(start) {
			t.Fatalf("backlog %+v, %v", b, err)
		}
		clk.Add(59 * time.Second)
		pass(1) // backing off
		clk.Add(time.Second)
		r = pass(2)
		if r.Status != notify.Pending || r.Attempts != 2 || !r.NextAt.Equal(clk.Now().Add(2*time.Minute)) {
			t.Fatalf("after the second refusal (a back-off of 2m): %+v", r.Delivery)
		}
		clk.Add(2*time.Minute - time.Second)
		pass(2)
		clk.Add(time.Second)
		r = pass(3)
		if r.Status != notify.Failed || r.Attempts != 3 || !strings.Contains(r.LastError, "gave up after 3") {
			t.Fatalf("after the third refusal: %+v", r.Delivery)
		}
		for range 3 {
			clk.Add(24 * time.Hour)
			pass(3)
		}
		if b, err := o.WebhookBacklog(ctx); err != nil || b.Pending != 0 || b.Failed != 1 || !b.Oldest.IsZero() {
			t.Fatalf("backlog %+v, %v", b, err)
		}
	})
}

// TestSweepWebhooks: the events that ended more than WebhookRetention ago
// are deleted; those that ended since, and those still to deliver however
// old, stay.
func TestSweepWebhooks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		clk := &hookClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
		placeWithWebhooks(t, db, clk, "https://platform.example/hooks", 6)
		old, recent := clk.Now().Add(-WebhookRetention-time.Hour), clk.Now().Add(-WebhookRetention+time.Hour)
		set := []struct {
			status  notify.Status
			changed time.Time
		}{
			{notify.Sent, old}, {notify.Failed, old}, // ord_0, ord_1: deleted
			{notify.Sent, recent}, {notify.Failed, recent}, {notify.Pending, old}, {notify.Sending, old},
		}
		for i, s := range set {
			err := db.Model(&eventRow{}).Where("order_id = ?", fmt.Sprintf("ord_%d", i)).
				Updates(map[string]any{"status": s.status, "updated_at": s.changed}).Error
			if err != nil {
				t.Fatal(err)
			}
		}
		o := New(db, &Options{Now: clk.Now})
		if n, err := o.SweepWebhooks(ctx); err != nil || n != 2 {
			t.Fatalf("SweepWebhooks deleted %d (%v), want 2", n, err)
		}
		var left []string
		for _, r := range events(t, db) {
			left = append(left, r.OrderID+":"+string(r.Status))
		}
		if got, want := strings.Join(left, " "), "ord_2:sent ord_3:failed ord_4:pending ord_5:sending"; got != want {
			t.Fatalf("left %s, want %s", got, want)
		}
		if n, err := o.SweepWebhooks(ctx); err != nil || n != 0 {
			t.Fatalf("a second sweep deleted %d (%v)", n, err)
		}
	})
}

// TestSweepUnlinkedSubscriptions: a subscription whose session made no
// order is deleted once older than UnlinkedHookRetention; a younger one,
// and one whose session made an order, stay.
func TestSweepUnlinkedSubscriptions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		o := New(db, &Options{Now: func() time.Time { return now }})
		rows := []hookRow{
			{SessionID: "cs_old", URL: "https://platform.example/hooks", CreatedAt: now.Add(-UnlinkedHookRetention - time.Hour)},
			{SessionID: "cs_young", URL: "https://platform.example/hooks", CreatedAt: now.Add(-UnlinkedHookRetention + time.Hour)},
			{SessionID: "cs_paid", OrderID: "ord_paid", URL: "https://platform.example/hooks", CreatedAt: now.Add(-UnlinkedHookRetention - time.Hour)},
		}
		if err := db.Create(&rows).Error; err != nil {
			t.Fatal(err)
		}
		if n, err := o.SweepWebhooks(ctx); err != nil || n != 1 {
			t.Fatalf("SweepWebhooks deleted %d (%v), want 1", n, err)
		}
		var left []string
		if err := db.Model(&hookRow{}).Order("session_id").Pluck("session_id", &left).Error; err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(left, " "); got != "cs_paid cs_young" {
			t.Errorf("left %s, want cs_paid cs_young", got)
		}
	})
}
