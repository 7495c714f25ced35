package server

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
)

// acceptJSON lets a client that accepts only application/json reach a
// streamable handler that answers JSON anyway (JSONResponse): UCP's agents
// post one JSON-RPC request and read one JSON answer, as the UCP MCP
// binding has them, and Shopify's ucp-cli sends "Accept: application/json".
// The handler wants text/event-stream named too; this adds it.
func acceptJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			accept := strings.ToLower(strings.Join(r.Header.Values("Accept"), ","))
			if !strings.Contains(accept, "text/event-stream") && !strings.Contains(accept, "*/*") {
				r = r.Clone(r.Context())
				r.Header.Set("Accept", "application/json, text/event-stream")
			}
		}
		next.ServeHTTP(w, r)
	})
}

// statusKey is the context key of a call's HTTP status slot (ucpStatus).
type statusKey struct{}

// ucpStatus answers a POST whose tool call failed with a protocol error
// that names an HTTP status (shop.ProtocolError.Status: UCP's 409 for
// idempotency_conflict and idempotency_in_flight) with that status: over
// streamable HTTP "the HTTP status code is the primary signal" (UCP's
// overview, Error Handling). The tool's edge puts the status in the slot
// this puts in the request's context (setStatus); the answer is never
// read back. The discovery errors (-32001) stay 200, as UCP's table has
// them for MCP.
func ucpStatus(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), statusKey{}, &sw.status)))
	})
}

// setStatus puts a protocol error's HTTP status in the call's slot, when
// its edge has one (ucpStatus).
func setStatus(ctx context.Context, status int) {
	if slot, ok := ctx.Value(statusKey{}).(*atomic.Int64); ok && status != 0 {
		slot.Store(int64(status))
	}
}

// statusWriter answers the status in its slot, when set, for a 200.
type statusWriter struct {
	http.ResponseWriter
	status atomic.Int64
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if s.wrote {
		return
	}
	s.wrote = true
	if st := s.status.Load(); code == http.StatusOK && st != 0 {
		code = int(st)
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	return s.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
