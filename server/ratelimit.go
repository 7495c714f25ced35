package server

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// clientLimiter keeps a token bucket per client address. It protects one
// process from a noisy client; it is not a correctness mechanism, so it may
// live in memory.
type clientLimiter struct {
	limit rate.Limit
	burst int
	// header, when set, names the request header whose first address is
	// the client's (X-Forwarded-For behind a proxy), instead of the peer.
	header string

	mu      sync.Mutex
	clients map[string]*client
	swept   time.Time
}

type client struct {
	limiter *rate.Limiter
	seen    time.Time
}

const clientIdle = 10 * time.Minute

func newClientLimiter(limit rate.Limit, burst int, header string) *clientLimiter {
	return &clientLimiter{limit: limit, burst: burst, header: header, clients: map[string]*client{}, swept: time.Now()}
}

// client names who sent r: the first address of the configured header when
// it has one, else the connection's peer.
func (l *clientLimiter) client(r *http.Request) string {
	if l.header != "" {
		if first, _, _ := strings.Cut(r.Header.Get(l.header), ","); strings.TrimSpace(first) != "" {
			return strings.TrimSpace(first)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (l *clientLimiter) allow(addr string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > clientIdle {
		for k, c := range l.clients {
			if now.Sub(c.seen) > clientIdle {
				delete(l.clients, k)
			}
		}
		l.swept = now
	}
	c := l.clients[addr]
	if c == nil {
		c = &client{limiter: rate.NewLimiter(l.limit, l.burst)}
		l.clients[addr] = c
	}
	c.seen = now
	r := c.limiter.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

func (l *clientLimiter) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || l.limit < 0 {
			next.ServeHTTP(w, r)
			return
		}
		if ok, wait := l.allow(l.client(r), time.Now()); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait/time.Second)+1))
			http.Error(w, "too many requests: slow down and retry after the Retry-After seconds", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}
