package feed

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/catalog"
	"shop/database"
	"shop/database/dbtest"
)

// get fetches the feed from url, as a crawler without gzip does unless
// gzipped, with If-None-Match etag when set.
func get(t *testing.T, url, etag string, gzipped bool) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	if gzipped {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if gzipped && resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return resp, body
}

// clock is a feed's clock that the tests move.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// withClock gives f a clock the test moves.
func withClock(f *Feed) *clock {
	c := &clock{}
	f.now = c.now
	return c
}

// TestHandlerAcrossReplicas serves the feed from two replicas, each with its
// own connection to one database and its own cache: an import made through
// either shows in both at once, a hold once the feed kept is Refresh old,
// and an unchanged catalog is served from the cache.
func TestHandlerAcrossReplicas(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.DSN(t, d)
			dbA, dbB := dbtest.OpenDSN(t, dsn), dbtest.OpenDSN(t, dsn)
			feedA, catA := testFeed(t, dbA)
			feedB, catB := testFeed(t, dbB) // the catalog is seeded already: SeedIfEmpty leaves it
			clockA := withClock(feedA)
			srvA, srvB := httptest.NewServer(feedA.Handler()), httptest.NewServer(feedB.Handler())
			defer srvA.Close()
			defer srvB.Close()

			respA, bodyA := get(t, srvA.URL, "", false)
			respB, bodyB := get(t, srvB.URL, "", true)
			if respA.StatusCode != 200 || respA.Header.Get("Content-Type") != "application/jsonl; charset=utf-8" {
				t.Fatalf("GET: %s %v", respA.Status, respA.Header)
			}
			if respB.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("a client that takes gzip got Content-Encoding %q", respB.Header.Get("Content-Encoding"))
			}
			etag := respA.Header.Get("ETag")
			if etag == "" || respB.Header.Get("ETag") != etag || !bytes.Equal(bodyA, bodyB) {
				t.Fatalf("the replicas serve different feeds of one catalog: %s, %s", etag, respB.Header.Get("ETag"))
			}
			kept := feedA.cached
			if _, again := get(t, srvA.URL, "", false); !bytes.Equal(again, bodyA) || feedA.cached != kept {
				t.Error("an unchanged catalog was generated again")
			}
			if resp, _ := get(t, srvB.URL, etag, false); resp.StatusCode != http.StatusNotModified {
				t.Errorf("If-None-Match of the current ETag: %s", resp.Status)
			}

			// An import through replica A: replica B serves it at once.
			reprice := strings.NewReader(`{"currency": "usd", "products": [{"id": "brass-candle-holder", "title": "Brass Candle Holder", "category": "Candles",
				"images": [], "variants": [{"id": "brass-candle-holder-default", "title": "Default", "options": {}, "price": 3100, "stock": 90}]}]}`)
			file, err := catalog.ReadFile(reprice)
			if err != nil {
				t.Fatal(err)
			}
			if err := catA.Import(ctx, file, nil); err != nil {
				t.Fatal(err)
			}
			resp, body := get(t, srvB.URL, etag, false)
			if resp.StatusCode != 200 || resp.Header.Get("ETag") == etag {
				t.Fatalf("after an import replica B answers %s with ETag %s", resp.Status, resp.Header.Get("ETag"))
			}
			if again, _ := get(t, srvA.URL, etag, false); again.Header.Get("ETag") != resp.Header.Get("ETag") {
				t.Fatalf("after an import the replicas' ETags are %s and %s", again.Header.Get("ETag"), resp.Header.Get("ETag"))
			}
			byID, _ := lines(t, body)
			if p := byID["brass-candle-holder"]; p.Variants[0].Price.Amount != 3100 {
				t.Errorf("replica B serves the old price: %+v", p.Variants[0].Price)
			}
			etag = resp.Header.Get("ETag")

			// A hold of every unit through replica B: replica A shows it sold
			// out once its feed is Refresh old.
			err = database.Transact(ctx, dbB, func(tx *gorm.DB) error {
				_, err := catB.Hold(ctx, tx, catalog.HoldRequest{Holder: "cs_test", Lines: []catalog.HoldLine{{VariantID: "brass-candle-holder-default", Quantity: 90}}, Until: time.Now().Add(time.Hour)})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp, _ := get(t, srvA.URL, etag, true); resp.StatusCode != http.StatusNotModified {
				t.Errorf("a hold a moment after the feed was read: replica A answers %s; want 304 until Refresh", resp.Status)
			}
			clockA.advance(DefaultRefresh)
			resp, body = get(t, srvA.URL, etag, true)
			if resp.StatusCode != 200 || resp.Header.Get("ETag") == etag {
				t.Fatalf("after a hold replica A answers %s with ETag %s", resp.Status, resp.Header.Get("ETag"))
			}
			byID, _ = lines(t, body)
			if a := byID["brass-candle-holder"].Variants[0].Availability; a.Available || a.Status != "out_of_stock" {
				t.Errorf("replica A serves a held variant as %+v", a)
			}
		})
	}
}

// TestFeedRebuildRate: holding and releasing a variant's last units, which
// any buyer can do, between requests for the feed regenerates it at most
// once a Refresh, however often, and the hold shows a Refresh later; a
// client that takes no gzip gets the JSON Lines inflated once, whatever the
// number of its requests.
func TestFeedRebuildRate(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		f, c := testFeed(t, db)
		clk := withClock(f)
		srv := httptest.NewServer(f.Handler())
		defer srv.Close()
		const variant = "brass-candle-holder-default"
		p, err := c.Product(ctx, "brass-candle-holder")
		if err != nil {
			t.Fatal(err)
		}
		last := p.Variants[0].Available
		flip := func(i int) {
			err := database.Transact(ctx, db, func(tx *gorm.DB) error {
				if i%2 == 1 {
					return c.Release(ctx, tx, "cs_hoarder")
				}
				_, err := c.Hold(ctx, tx, catalog.HoldRequest{Holder: "cs_hoarder", Lines: []catalog.HoldLine{{VariantID: variant, Quantity: last}}, Until: time.Now().Add(time.Hour)})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		_, first := get(t, srv.URL, "", false)
		// Ten Refresh periods of 40 holds and releases, each followed by two
		// GETs: one generation at most in each period.
		for period := range 10 {
			for i := range 40 {
				flip(i)
				get(t, srv.URL, "", i%2 == 0)
				get(t, srv.URL, "", false)
			}
			if got, most := f.builds.Load(), int64(period+1); got > most {
				t.Fatalf("period %d: 40 holds and releases and 80 GETs in each Refresh generated the feed %d times; want at most %d", period, got, most)
			}
			clk.advance(DefaultRefresh)
		}
		// Held, then read once the feed is a Refresh old: shown sold out.
		flip(0)
		clk.advance(DefaultRefresh)
		_, body := get(t, srv.URL, "", false)
		byID, _ := lines(t, body)
		if a := byID["brass-candle-holder"].Variants[0].Availability; a.Available {
			t.Fatalf("a Refresh after the hold of its last units, the variant is %+v", a)
		}
		for range 10 {
			get(t, srv.URL, "", false)
		}
		if n := f.cached.inflation.Load(); n != 1 {
			t.Errorf("11 GETs without gzip inflated the feed %d times; want once", n)
		}
		flip(1)
		clk.advance(DefaultRefresh)
		_, again := get(t, srv.URL, "", false)
		if !bytes.Equal(again, first) {
			t.Error("after the last release, the feed is not the first one")
		}
	})
}
