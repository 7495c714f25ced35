package feed

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestHandlerAcrossReplicas serves the feed from two replicas, each with its
// own connection to one database and its own cache: a change made through
// either (an import, a hold) shows in both at once, and an unchanged
// catalog is served from the cache.
func TestHandlerAcrossReplicas(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.DSN(t, d)
			dbA, dbB := dbtest.OpenDSN(t, dsn), dbtest.OpenDSN(t, dsn)
			feedA, catA := testFeed(t, dbA)
			feedB, catB := testFeed(t, dbB) // the catalog is seeded already: SeedIfEmpty leaves it
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
			byID, _ := lines(t, body)
			if p := byID["brass-candle-holder"]; p.Variants[0].Price.Amount != 3100 {
				t.Errorf("replica B serves the old price: %+v", p.Variants[0].Price)
			}
			etag = resp.Header.Get("ETag")

			// A hold of every unit through replica B: replica A shows it sold out.
			err = database.Transact(ctx, dbB, func(tx *gorm.DB) error {
				_, err := catB.Hold(ctx, tx, "cs_test", []catalog.HoldLine{{VariantID: "brass-candle-holder-default", Quantity: 90}}, time.Now().Add(time.Hour))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
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
