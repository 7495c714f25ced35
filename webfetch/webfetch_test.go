package webfetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestPublic(t *testing.T) {
	cases := []struct {
		addr   string
		public bool
	}{
		{"93.184.216.34", true},
		{"2606:2800:220:1:248:1893:25c8:1946", true},
		{"127.0.0.1", false},
		{"::1", false},
		{"::", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // link-local: cloud metadata
		{"fe80::1", false},
		{"fc00::1", false},
		{"fec0::1", false},
		{"100.64.0.1", false}, // shared address space
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"224.0.0.1", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		{"198.18.0.1", false},
		{"ff02::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:93.184.216.34", true},
		// NAT64, well-known prefix.
		{"64:ff9b::7f00:1", false},
		{"64:ff9b::10.0.0.1", false},
		{"64:ff9b::169.254.169.254", false},
		{"64:ff9b::93.184.216.34", true},
		// NAT64, local-use prefix: every RFC 6052 position is checked.
		{"64:ff9b:1:7f00:1::", false}, // 127.0.0.1 at /48
		{"64:ff9b:1::a00:1", false},   // 10.0.0.1 at /96
		// 93.184.216.34 at /48 reads as 0.0.0.0 at /96: refused, since the
		// translator's prefix length is not known.
		{"64:ff9b:1:5db8:d8:2200::", false},
		{"64:ff9b:1:5d5d:5d:5d5d:5d5d:5d5d", true}, // 93.93.93.93 at every length
		// 6to4.
		{"2002:7f00:1::1", false},
		{"2002:a9fe:a9fe::1", false},
		{"2002:5db8:d822::1", true},
		// IPv4-compatible and -translated.
		{"::127.0.0.1", false},
		{"::10.0.0.1", false},
		{"::93.184.216.34", true},
		{"::ffff:0:10.0.0.1", false},
		// Teredo: the client's address is inverted.
		{"2001:0:5db8:d822::80ff:fffe", false}, // client 127.0.0.1
		{"2001:0:5db8:d822::a247:27dd", true},  // client 93.184.216.34
	}
	for _, c := range cases {
		if got := Public(netip.MustParseAddr(c.addr)); got != c.public {
			t.Errorf("Public(%s) = %v, want %v", c.addr, got, c.public)
		}
	}
}

func TestTTL(t *testing.T) {
	f := New(Options{})
	cases := []struct {
		header string
		want   time.Duration
	}{
		{"", 5 * time.Minute},
		{"public, max-age=300", 300 * time.Second},
		{"public, max-age=5", time.Minute},
		{"max-age=86400, public", time.Hour},
		{"max-age=99999999999999999", time.Hour},
		{"max-age=-5", 5 * time.Minute},
		{"no-store", 5 * time.Minute},
	}
	for _, c := range cases {
		if got := f.TTL(c.header); got != c.want {
			t.Errorf("TTL(%q) = %v, want %v", c.header, got, c.want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	open, strict := New(Options{AllowLoopback: true}), New(Options{})
	cases := []struct {
		f   *Fetcher
		url string
		ok  bool
	}{
		{strict, "https://example.com/a.json#frag", true},
		{strict, "", false},
		{strict, "ftp://example.com/a.json", false},
		{strict, "http://example.com/a.json", false},
		{strict, "https://user:pw@example.com/a.json", false},
		{strict, "/relative.json", false},
		{strict, "https:opaque", false},
		{strict, "https://example.com/" + strings.Repeat("a", 2048), false},
		{strict, "http://127.0.0.1/a.json", false},
		{open, "http://127.0.0.1:8080/a.json", true},
		{open, "http://localhost/a.json", true},
		{open, "http://[::1]/a.json", true},
		{open, "http://example.com/a.json", false},
	}
	for _, c := range cases {
		u, err := c.f.CheckURL(c.url)
		if (err == nil) != c.ok {
			t.Errorf("CheckURL(%q): %v, want ok=%v", c.url, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrBadURL) {
			t.Errorf("CheckURL(%q): %v does not match ErrBadURL", c.url, err)
		}
		if err == nil && u.Fragment != "" {
			t.Errorf("CheckURL(%q) kept the fragment", c.url)
		}
	}
}

func TestGet(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok.json":
			if r.Header.Get("Accept") != "application/json" {
				http.Error(w, "accept", http.StatusNotAcceptable)
				return
			}
			w.Header().Set("Cache-Control", "max-age=120")
			w.Write([]byte(`{"ok": true}`))
		case "/redirect.json":
			http.Redirect(w, r, "/ok.json", http.StatusFound)
		case "/huge.json":
			w.Write([]byte(strings.Repeat("a", 1025)))
		case "/slow.json":
			<-release
		case "/teapot.json":
			w.WriteHeader(http.StatusTeapot)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	defer close(release)
	f := New(Options{AllowLoopback: true, MaxBytes: 1024, HeaderTimeout: 200 * time.Millisecond})
	ctx := context.Background()

	resp, err := f.Get(ctx, srv.URL+"/ok.json", "application/json")
	if err != nil || string(resp.Body) != `{"ok": true}` || resp.TTL != 2*time.Minute {
		t.Fatalf("Get ok.json: %+v, %v", resp, err)
	}
	cases := []struct {
		url  string
		want error
	}{
		{srv.URL + "/redirect.json", ErrStatus},
		{srv.URL + "/missing.json", ErrStatus},
		{srv.URL + "/teapot.json", ErrStatus},
		{srv.URL + "/huge.json", ErrTooLarge},
		{srv.URL + "/slow.json", ErrTimeout},
		{"ftp://example.com/", ErrBadURL},
		{"https://192.168.0.10/p.json", ErrPrivateAddress},
		{"https://[fe80::1]/p.json", ErrPrivateAddress},
		{"https://[64:ff9b::7f00:1]/p.json", ErrPrivateAddress},
		{"https://[::ffff:10.0.0.1]/p.json", ErrPrivateAddress},
	}
	for _, c := range cases {
		start := time.Now()
		_, err := f.Get(ctx, c.url, "application/json")
		if !errors.Is(err, c.want) {
			t.Errorf("Get(%s): %v, want %v", c.url, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "418") {
			t.Errorf("Get(%s): the error %q echoes the server's status", c.url, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Get(%s) took %v", c.url, d)
		}
	}

	strict := New(Options{})
	if _, err := strict.Get(ctx, "https"+strings.TrimPrefix(srv.URL, "http")+"/ok.json", "application/json"); !errors.Is(err, ErrPrivateAddress) {
		t.Errorf("https on loopback without AllowLoopback: %v", err)
	}
}

// TestShares: slow fetches hold only their host's and their address's
// share of the slots: a fetch from another host goes through at once,
// and so does one to another address when the first address is full.
func TestShares(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan string, 16)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.Host
		<-release
		w.Write([]byte("slow"))
	}))
	defer slow.Close()
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("fast")) }))
	defer fast.Close()
	other := httptest.NewUnstartedServer(fast.Config.Handler)
	ln, err := net.Listen("tcp", "127.0.0.2:0") // another loopback address
	if err != nil {
		t.Fatal(err)
	}
	other.Listener = ln
	other.Start()
	defer other.Close()
	port := func(s *httptest.Server) uint16 { return s.Listener.Addr().(*net.TCPAddr).AddrPort().Port() }
	f := New(Options{AllowLoopback: true, PerHost: 2, PerAddress: 3, HeaderTimeout: 10 * time.Second, Timeout: 10 * time.Second})
	ctx := context.Background()
	var wg sync.WaitGroup
	get := func(url string) {
		wg.Go(func() {
			if _, err := f.Get(ctx, url, "*/*"); err != nil {
				t.Errorf("Get(%s): %v", url, err)
			}
		})
	}
	waitArrivals := func(n int) {
		t.Helper()
		for range n {
			select {
			case <-arrived:
			case <-time.After(5 * time.Second):
				t.Fatal("a slow fetch did not arrive")
			}
		}
	}
	quick := func(url string, want bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		_, err := f.Get(ctx, url, "*/*")
		if got := err == nil; got != want || (err != nil && !errors.Is(err, ErrBusy)) {
			t.Errorf("Get(%s) at once: %v, want done=%v (or ErrBusy)", url, err, want)
		}
	}
	slowURL := func(host string, i int) string { return fmt.Sprintf("http://%s:%d/slow/%d", host, port(slow), i) }

	// Host 127.0.0.1 takes its two slots; a third fetch of it waits.
	get(slowURL("127.0.0.1", 1))
	get(slowURL("127.0.0.1", 2))
	waitArrivals(2)
	get(slowURL("127.0.0.1", 3))
	// Another host of the same address goes through (the address has 3).
	quick(fmt.Sprintf("http://localhost:%d/", port(fast)), true)
	// A third host fills the address: a fourth host of it waits ...
	get(slowURL("[::ffff:127.0.0.1]", 4))
	waitArrivals(1)
	quick(fmt.Sprintf("http://[::ffff:7f00:1]:%d/", port(fast)), false)
	// ... while another address does not.
	quick(fmt.Sprintf("http://127.0.0.2:%d/", port(other)), true)
	select {
	case h := <-arrived:
		t.Errorf("a fetch beyond its host's share reached %s", h)
	default:
	}
	close(release)
	wg.Wait()
}

// TestPost: Post sends the body and headers, takes 2xx, and refuses a
// redirect (not followed), another status, a loopback address when not
// allowed and an http URL, as Get does.
func TestPost(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64)
		n, _ := r.Body.Read(b)
		got = r.Method + " " + r.Header.Get("X-Test") + " " + string(b[:n])
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusAccepted)
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusTemporaryRedirect)
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	loop := New(Options{AllowLoopback: true})
	if err := loop.Post(ctx, srv.URL+"/ok", http.Header{"X-Test": {"yes"}}, []byte("hello")); err != nil || got != "POST yes hello" {
		t.Errorf("Post /ok: %v, server saw %q", err, got)
	}
	for _, tc := range []struct {
		f    *Fetcher
		url  string
		want error
	}{
		{loop, srv.URL + "/moved", ErrStatus},
		{loop, srv.URL + "/fail", ErrStatus},
		{New(Options{}), srv.URL + "/ok", ErrBadURL},                                                // http
		{New(Options{}), strings.Replace(srv.URL, "http:", "https:", 1) + "/ok", ErrPrivateAddress}, // loopback
	} {
		if err := tc.f.Post(ctx, tc.url, nil, []byte("x")); !errors.Is(err, tc.want) {
			t.Errorf("Post %s: %v, want %v", tc.url, err, tc.want)
		}
	}
}
