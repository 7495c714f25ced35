package accounts_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shop/accounts"
	"shop/database"
	"shop/database/dbtest"
)

// TestFailingDocumentsFetchedOnce: client metadata documents that fail to
// load are remembered for a while, by URL and, when the host itself fails,
// by host: 150 authorization requests (ten at a time) naming three failing
// documents fetch each once, three URLs of a host that dropped the first
// fetch's connection are not fetched again, and a failure is fetched again once its
// period is over.
func TestFailingDocumentsFetchedOnce(t *testing.T) {
	e := newEnv(t, dbtest.Open(t, database.SQLite))
	var fetches atomic.Int32
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		switch r.URL.Path {
		case "/broken.json":
			io.WriteString(w, "not JSON")
		case "/other.json":
			io.WriteString(w, `{"client_id":"https://elsewhere.example/client.json","redirect_uris":["https://elsewhere.example/cb"]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(docs.Close)
	var drops atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			drops.Add(1)
			c.Close()
		}
	}()
	now := time.Now()
	var mu sync.Mutex
	accounts.SetClock(e.as, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })

	authorize := func(urls []string, n int) {
		t.Helper()
		var wg sync.WaitGroup
		work := make(chan string)
		for range 10 {
			wg.Go(func() {
				for u := range work {
					_, challenge := pkce()
					resp, err := browser().Get(e.authorizeURL(u, "https://elsewhere.example/cb", challenge, e.url+"/mcp"))
					if err != nil {
						t.Error(err)
						continue
					}
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						t.Errorf("authorize with the failing document %s: 200", u)
					}
				}
			})
		}
		for i := range n {
			work <- urls[i%len(urls)]
		}
		close(work)
		wg.Wait()
	}
	failing := []string{docs.URL + "/missing.json", docs.URL + "/broken.json", docs.URL + "/other.json"}
	dropping := "http://" + ln.Addr().String()
	authorize(failing, 150)
	authorize([]string{dropping + "/a.json"}, 1)
	first := drops.Load()
	authorize([]string{dropping + "/a.json", dropping + "/b.json", dropping + "/c.json"}, 30)
	if n := fetches.Load(); n != 3 {
		t.Errorf("150 authorization requests naming 3 failing documents fetched them %d times, want 3", n)
	}
	if n := drops.Load(); first == 0 || n != first {
		t.Errorf("3 URLs of a host that dropped the first fetch's connection: %d connections, want %d (the first fetch's)", n, first)
	}

	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	authorize(failing, 30)
	if n := fetches.Load(); n != 6 {
		t.Errorf("after the failures' period: %d fetches in all, want 6 (each failing document once more)", n)
	}
}
