package mcptest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// PostBearer posts the JSON-RPC message rpc to the MCP endpoint at url, as
// a streamable HTTP client of protocol 2025-06-18 does, with token as its
// bearer token (none when empty), and answers the status, the
// WWW-Authenticate header and the body.
func PostBearer(t testing.TB, url, token, rpc string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(rpc))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), b
}
