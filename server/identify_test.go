package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"shop"
)

// TestIdentifySubject: the host user id identify reads of a request's _meta
// (for the rate limiter) is the one the tool's handler reads of it
// (hostSubject, over go-sdk's decoding), escapes, other entries and
// refusals included.
func TestIdentifySubject(t *testing.T) {
	tests := []struct {
		name, meta, want string
	}{
		{"plain", `{"openai/subject":"v1/user-ABC_123"}`, "v1/user-ABC_123"},
		{"escaped", `{"openai/subject":"us\u0065r \"q\" \\ x"}`, `user "q" \ x`},
		{"among nested entries", `{"io.modelcontextprotocol/clientCapabilities":{"x":{"y":[1,2]}},"openai/subject":"abc","openai/locale":"en-US"}`, "abc"},
		{"unicode", `{"openai/subject":"usér-ü"}`, "usér-ü"},
		{"none", `{"openai/locale":"en-US"}`, ""},
		{"not a string", `{"openai/subject":42}`, ""},
		{"null", `{"openai/subject":null}`, ""},
		{"empty", `{"openai/subject":""}`, ""},
		{"too long", `{"openai/subject":"` + strings.Repeat("s", maxSubjectLen+1) + `"}`, ""},
		{"longest", `{"openai/subject":"` + strings.Repeat("s", maxSubjectLen) + `"}`, strings.Repeat("s", maxSubjectLen)},
		{"control character", `{"openai/subject":"user\n2"}`, ""},
		{"escaped control character", `{"openai/subject":"user\u00072"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var meta map[string]any
			if err := json.Unmarshal([]byte(tc.meta), &meta); err != nil {
				t.Fatal(err)
			}
			if got := hostSubject(meta); got != tc.want {
				t.Fatalf("hostSubject = %q, want %q: the table is wrong", got, tc.want)
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":` + tc.meta + `}}`
			var got string
			h := identify(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				got = shop.BuyerFrom(r.Context()).Subject
			}))
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(httptest.NewRecorder(), req)
			if got != tc.want {
				t.Errorf("identify read %q, want %q", got, tc.want)
			}
		})
	}
}
