package server

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHostLocale: ChatGPT's _meta["openai/locale"] first, else the first
// language of the request's Accept-Language.
func TestHostLocale(t *testing.T) {
	h := http.Header{"Accept-Language": {"fr-CH, fr;q=0.9, en;q=0.8"}}
	for _, tt := range []struct {
		meta  map[string]any
		extra *mcp.RequestExtra
		want  string
	}{
		{map[string]any{"openai/locale": "de-DE"}, &mcp.RequestExtra{Header: h}, "de-DE"},
		{nil, &mcp.RequestExtra{Header: h}, "fr-CH"},
		{map[string]any{"openai/locale": 42}, nil, ""},
		{nil, nil, ""},
	} {
		if got := hostLocale(tt.meta, tt.extra); got != tt.want {
			t.Errorf("hostLocale(%v) = %q, want %q", tt.meta, got, tt.want)
		}
	}
}
