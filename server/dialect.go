package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
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

// ucpStatuses are the HTTP statuses UCP gives the JSON-RPC errors of its
// protocol errors, by the UCP code in the error's data: over streamable
// HTTP "the HTTP status code is the primary signal" (UCP's overview, Error
// Handling). The discovery errors (-32001) stay 200, as their table has
// them for MCP.
var ucpStatuses = map[string]int{
	"idempotency_conflict":  http.StatusConflict,
	"idempotency_in_flight": http.StatusConflict,
}

// ucpStatus answers a POST whose answer is such a JSON-RPC error with its
// HTTP status. The MCP handler answers one JSON document (JSONResponse),
// bounded like every tool result, which this holds until it is complete.
func ucpStatus(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		rec := &heldResponse{header: w.Header(), status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if rec.status == http.StatusOK {
			var msg struct {
				Error *struct {
					Data struct {
						Code string `json:"code"`
					} `json:"data"`
				} `json:"error"`
			}
			if json.Unmarshal(rec.body.Bytes(), &msg) == nil && msg.Error != nil {
				if s, ok := ucpStatuses[msg.Error.Data.Code]; ok {
					rec.status = s
				}
			}
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	})
}

// heldResponse holds a response until its handler is done.
type heldResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header         { return h.header }
func (h *heldResponse) WriteHeader(status int)      { h.status = status }
func (h *heldResponse) Write(b []byte) (int, error) { return h.body.Write(b) }
