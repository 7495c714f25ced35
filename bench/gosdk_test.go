package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk's own cost of a tool call, for reports upstream: the floor's
// server (one tool answering "ok") called over streamable HTTP (stateless,
// JSON responses, as the shop serves), in the protocol versions before
// 2026-07-28 and in 2026-07-28, with the tool registered under a bare
// input schema and under one the size of the shop's (about 1.5 KB of
// properties and descriptions). Run with -benchmem, and -memprofile or
// -cpuprofile to see where it goes.
//
//	go test -run '^$' -bench GoSDKCall -benchmem -memprofile /tmp/mem.out ./bench/
//	go tool pprof -sample_index=alloc_space -top bench.test /tmp/mem.out

// fullSchema is an input schema of the size of the shop's tools'.
func fullSchema() map[string]any {
	props := map[string]any{}
	for i := range 12 {
		props[fmt.Sprintf("field_%d", i)] = map[string]any{
			"type":        "string",
			"maxLength":   200,
			"description": strings.Repeat("What the caller sends here and why, bounded. ", 2),
		}
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

func BenchmarkGoSDKCall(b *testing.B) {
	for _, schema := range []struct {
		name   string
		schema map[string]any
	}{{"bare", map[string]any{"type": "object"}}, {"full", fullSchema()}} {
		srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "test"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
		srv.AddTool(&mcp.Tool{Name: noopTool, InputSchema: schema.schema}, FloorServer{}.answer)
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true}))
		b.Cleanup(ts.Close)
		for _, version := range []string{"2025-06-18", "2026-07-28"} {
			meta := ""
			if version == "2026-07-28" {
				meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			}
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"noop","arguments":{"field_1":"a"}` + meta + `}}`
			b.Run(schema.name+"/"+version, func(b *testing.B) {
				client := ts.Client()
				for b.Loop() {
					req, err := http.NewRequestWithContext(context.Background(), "POST", ts.URL, strings.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("Mcp-Protocol-Version", version)
					req.Header.Set("Mcp-Method", "tools/call")
					req.Header.Set("Mcp-Name", noopTool)
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					var out struct {
						Result *struct{ Content []any } `json:"result"`
					}
					err = json.NewDecoder(resp.Body).Decode(&out)
					resp.Body.Close()
					if err != nil || out.Result == nil || len(out.Result.Content) != 1 {
						b.Fatalf("HTTP %d: %+v, %v", resp.StatusCode, out, err)
					}
				}
			})
		}
	}
}
