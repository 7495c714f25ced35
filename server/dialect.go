package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// protocolError is an error a dialect answers as a JSON-RPC error rather
// than as a tool result: UCP's failures to fetch or read the agent's
// profile (-32001, with the UCP error in data). Its message is written for
// the caller.
type protocolError interface {
	error
	JSONRPC() (code int64, data any)
}

// rpcError is the JSON-RPC error of err, when err is a protocolError.
func rpcError(err error) (*jsonrpc.Error, bool) {
	var pe protocolError
	if !errors.As(err, &pe) {
		return nil, false
	}
	code, data := pe.JSONRPC()
	out := &jsonrpc.Error{Code: code, Message: pe.Error()}
	if data != nil {
		if b, merr := json.Marshal(data); merr == nil {
			out.Data = b
		}
	}
	return out, true
}

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
