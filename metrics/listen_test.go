package metrics

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestServeChecksHost: the metrics' listener answers requests whose Host is
// localhost, an IP address or a name it was given, and refuses any other
// name (a page's own, rebound to the machine) with 403.
func TestServeChecksHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(Sources{}).Serve(ctx, ln, []string{"Shop.Example.com"}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
		{"10.1.2.3:9464", http.StatusOK},
		{"[2001:db8::1]:9464", http.StatusOK},
		{"shop.example.com:" + port, http.StatusOK},
		{"SHOP.EXAMPLE.COM", http.StatusOK},
		{"evil.example:" + port, http.StatusForbidden},
		{"127.0.0.1.evil.example", http.StatusForbidden},
	} {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/metrics", nil)
		req.Host = tc.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q: %s; want %d", tc.host, resp.Status, tc.want)
		}
	}
}

// TestServeTimeouts: the listener bounds reading a request's headers and
// body, writing the answer and keeping an idle connection.
func TestServeTimeouts(t *testing.T) {
	hs := New(Sources{}).httpServer(nil)
	for name, d := range map[string]time.Duration{
		"ReadHeaderTimeout": hs.ReadHeaderTimeout, "ReadTimeout": hs.ReadTimeout,
		"WriteTimeout": hs.WriteTimeout, "IdleTimeout": hs.IdleTimeout,
	} {
		if d <= 0 || d > time.Minute {
			t.Errorf("%s %s; want a bound of at most a minute", name, d)
		}
	}
}
