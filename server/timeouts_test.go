package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestTimeoutDefaults(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := s.httpServer(context.Background())
	if hs.ReadHeaderTimeout != 10*time.Second || hs.ReadTimeout != 30*time.Second ||
		hs.WriteTimeout != 60*time.Second || hs.IdleTimeout != 2*time.Minute {
		t.Errorf("timeouts: read header %s, read %s, write %s, idle %s; want 10s, 30s, 1m, 2m",
			hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout)
	}

	s, err = New(Options{Timeouts: Timeouts{ReadHeader: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if hs := s.httpServer(context.Background()); hs.ReadHeaderTimeout != time.Second || hs.ReadTimeout != 30*time.Second {
		t.Errorf("read header %s, read %s; want the one set and the other's default", hs.ReadHeaderTimeout, hs.ReadTimeout)
	}
}

// TestSlowHeadersCutOff checks that Serve cuts off a client that sends its
// request headers too slowly (slowloris), however steadily it trickles them,
// while a client that sends them at once is served.
func TestSlowHeadersCutOff(t *testing.T) {
	const readHeader = 300 * time.Millisecond
	s, err := New(Options{Timeouts: Timeouts{ReadHeader: readHeader}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	addr := ln.Addr().String()

	t.Run("Prompt", func(t *testing.T) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("status %d", resp.StatusCode)
		}
	})

	t.Run("Slow", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
			t.Fatal(err)
		}
		// Trickle a header line every 50ms, never ending the headers, until
		// the server hangs up (a write fails) or 5s pass.
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := io.WriteString(conn, "X-Slow: a\r\n"); err != nil {
						return
					}
				}
			}
		}()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		reply, err := io.ReadAll(bufio.NewReader(conn))
		elapsed := time.Since(start)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("still connected after %s: the server did not cut off a slow client", elapsed.Round(time.Millisecond))
		}
		// The connection ends (EOF, or a reset while the client writes)
		// with no response to the request.
		if strings.Contains(string(reply), "200 OK") {
			t.Errorf("served a request whose headers never ended: %q", reply)
		}
		if elapsed < readHeader || elapsed > readHeader+2*time.Second {
			t.Errorf("cut off after %s; want about %s", elapsed.Round(time.Millisecond), readHeader)
		}
	})
}
