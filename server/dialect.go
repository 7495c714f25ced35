package server

import (
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
