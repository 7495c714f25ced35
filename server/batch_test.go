package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop/server"
)

// TestBatchRefused: a JSON-RPC batch (here 500 tools/call, sent without
// Mcp-Protocol-Version, which the MCP SDK would run one by one) is refused
// on both MCP endpoints with one JSON-RPC error, before any element runs.
func TestBatchRefused(t *testing.T) {
	h := newHost(t, server.Options{})
	calls := make([]string, 500)
	for i := range calls {
		calls[i] = toolCall(i+1, "batcher")
	}
	batch := "[" + strings.Join(calls, ",") + "]"
	want := map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
		"code":    float64(-32600),
		"message": "JSON-RPC batches are not supported (MCP 2025-06-18 removed them): send one request per HTTP POST",
	}}
	for _, tc := range []struct {
		name, path, body string
		hdr              map[string]string
	}{
		{"MCP", "/mcp", batch, nil},
		{"Spaces", "/mcp", " \r\n\t" + batch, nil},
		{"One", "/mcp", "[" + calls[0] + "]", nil},
		{"Admin", "/admin/mcp", batch, map[string]string{"Authorization": "Bearer " + ownerToken}},
		{"AdminNoToken", "/admin/mcp", batch, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{"Mcp-Protocol-Version": ""}
			for k, v := range tc.hdr {
				hdr[k] = v
			}
			r, err := h.post(tc.path, tc.body, hdr)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(r.body, &got); err != nil || r.status != http.StatusBadRequest || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("HTTP %d %s %.300s… (%v); want 400 and a JSON-RPC error", r.status, r.header.Get("Content-Type"), r.body, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if n := h.calls.Load(); n != 0 {
				t.Fatalf("%d calls of the batch ran; want none", n)
			}
		})
	}
	// One request per POST is served, on both endpoints.
	if r, err := h.post("/mcp", calls[0], map[string]string{"Mcp-Protocol-Version": ""}); err != nil || r.status != http.StatusOK {
		t.Errorf("one call: %d %s %v", r.status, r.body, err)
	}
	if r, err := h.post("/admin/mcp", calls[0], map[string]string{"Authorization": "Bearer " + ownerToken}); err != nil || r.status != http.StatusOK {
		t.Errorf("one admin call: %d %s %v", r.status, r.body, err)
	}
	if n := h.calls.Load(); n != 2 {
		t.Errorf("%d calls ran; want 2", n)
	}
}
