package server

import (
	"net/http"
)

// batchRefusal is the answer to a JSON-RPC batch: the MCP server would run
// every element of one (thousands of tool calls in one request, answered
// from memory) when the client sends no Mcp-Protocol-Version.
const batchRefusal = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported (MCP 2025-06-18 removed them): send one request per HTTP POST"}}`

// isBatch reports whether body is a JSON-RPC batch: a JSON array, its first
// byte past JSON's whitespace a '['.
func isBatch(body []byte) bool {
	for _, c := range body {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '['
	}
	return false
}

// refuseBatch answers a batch with HTTP 400 and a JSON-RPC Invalid Request
// error, before any element runs.
func refuseBatch(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(batchRefusal + "\n"))
}
