package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"shop/server"
)

// TestRESTBodyBounds: UCP's REST binding is bounded like the MCP
// endpoints: a body over MaxMCPBodyBytes is 413, one nested deeper than
// MaxJSONDepth 400, both with UCP's {code, content} and before the binding
// reads them; a body within both reaches it.
func TestRESTBodyBounds(t *testing.T) {
	var reached atomic.Int64
	h := newHost(t, server.Options{UCPREST: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})})
	deep := `{"line_items":` + strings.Repeat("[", server.MaxJSONDepth) + strings.Repeat("]", server.MaxJSONDepth) + `}`
	flat := `{"line_items":[{"item":{"id":"` + strings.Repeat("a", server.MaxMCPBodyBytes/2) + `"},"quantity":1}]}`
	for _, tc := range []struct {
		name, method, body string
		status             int
	}{
		{"TooLarge", "POST", `{"a":"` + strings.Repeat("a", server.MaxMCPBodyBytes) + `"}`, 413},
		{"TooDeep", "PUT", deep, 400},
		{"Within", "POST", flat, 204},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := reached.Load()
			req, _ := http.NewRequest(tc.method, h.url+"/ucp/v1/carts", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("HTTP %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status == 204 {
				if reached.Load() != before+1 {
					t.Error("the binding was not reached")
				}
				return
			}
			var e struct{ Code, Content string }
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Code != "invalid_request" || e.Content == "" || reached.Load() != before {
				t.Errorf("%+v %v (reached %d→%d), want {code: invalid_request, content} before the binding", e, err, before, reached.Load())
			}
		})
	}
}
