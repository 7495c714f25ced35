package server

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
)

// The JSON-RPC 2.0 error codes that rpcErrors answers.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// rpcMethod is what the MCP server knows of a method it serves.
type rpcMethod struct {
	notification bool // sent without an id, answered with nothing
	params       bool // params required
}

// rpcMethods are the methods go-sdk's MCP server serves (its
// serverMethodInfos), TestRPCMethodsServed keeps the list honest: every
// method here reaches the server. prompts/list and prompts/get are left
// out: no endpoint of the shop declares the prompts capability, so they
// answer -32601 (Method not found) here and on the other endpoints
// (noPrompts), as MCP asks of a capability not declared.
var rpcMethods = map[string]rpcMethod{
	"initialize":                       {params: true},
	"server/discover":                  {},
	"ping":                             {},
	"tools/list":                       {},
	"tools/call":                       {params: true},
	"resources/list":                   {},
	"resources/templates/list":         {},
	"resources/read":                   {params: true},
	"resources/subscribe":              {params: true},
	"resources/unsubscribe":            {params: true},
	"subscriptions/listen":             {params: true},
	"completion/complete":              {params: true},
	"logging/setLevel":                 {params: true},
	"notifications/cancelled":          {notification: true},
	"notifications/initialized":        {notification: true},
	"notifications/roots/list_changed": {notification: true},
	"notifications/progress":           {notification: true, params: true},
}

// rpcErrors answers every request to an MCP endpoint in JSON-RPC, whatever
// MCP-Protocol-Version header came (UCP's agents send none): go-sdk answers
// an unknown method or a malformed call with a plain-text HTTP 400 unless
// the request names protocol 2026-07-28. Before the MCP server sees a POST
// it answers a body that is not JSON with -32700 (Parse error), one that is
// not a JSON-RPC request with -32600 (Invalid Request), an unknown method
// with -32601 (Method not found, HTTP 404) and params that are not an object
// or missing where required with -32602 (Invalid params); any plain-text
// error the MCP server still answers (a protocol version it does not speak,
// a GET) becomes a JSON-RPC -32600 with the same status and text. The body
// is already read and bounded (identify), its depth checked (deeperThan).
func rpcErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				writeRPCError(w, http.StatusBadRequest, nil, codeParseError, "the request body could not be read: send it again")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if status, id, code, msg := checkRPC(body); code != 0 {
				writeRPCError(w, status, id, code, msg)
				return
			} else if status == http.StatusAccepted {
				w.WriteHeader(http.StatusAccepted) // an unknown notification: nothing to answer
				return
			}
		}
		rec := &heldResponse{header: w.Header(), status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if rec.status >= 400 && !isJSON(rec.header.Get("Content-Type")) {
			rec.header.Del("Content-Length")
			writeRPCError(w, rec.status, rpcID(r.Context()), codeInvalidRequest, strings.TrimSpace(rec.body.String()))
			return
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	})
}

// checkRPC checks that body is one JSON-RPC 2.0 request of a method the MCP
// server serves. It returns the error code to answer (0 when none), with its
// HTTP status, the request's id and a message saying what to send; or
// status 202 and no code for a notification of a method nobody serves.
func checkRPC(body []byte) (status int, id json.RawMessage, code int, msg string) {
	if !json.Valid(body) {
		return http.StatusBadRequest, nil, codeParseError, "the request body is not JSON: send one JSON-RPC 2.0 request object"
	}
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		return http.StatusBadRequest, nil, codeInvalidRequest, "the request is not a JSON object: send one JSON-RPC 2.0 request object"
	}
	id, hasID := req["id"]
	if hasID && !validID(id) {
		return http.StatusBadRequest, nil, codeInvalidRequest, `"id" must be a string or a number`
	}
	if string(req["jsonrpc"]) != `"2.0"` {
		return http.StatusBadRequest, id, codeInvalidRequest, `"jsonrpc" must be "2.0"`
	}
	rawMethod, hasMethod := req["method"]
	if !hasMethod {
		if _, ok := req["result"]; ok && hasID {
			return 0, nil, 0, "" // a response to the server: its business
		}
		if _, ok := req["error"]; ok && hasID {
			return 0, nil, 0, ""
		}
		return http.StatusBadRequest, id, codeInvalidRequest, `"method" is missing: name the method to call`
	}
	var method string
	if json.Unmarshal(rawMethod, &method) != nil || method == "" {
		return http.StatusBadRequest, id, codeInvalidRequest, `"method" must be a non-empty string`
	}
	params, hasParams := req["params"]
	if hasParams && (len(params) == 0 || params[0] != '{') && string(params) != "null" {
		return http.StatusBadRequest, id, codeInvalidParams, `"params" must be an object`
	}
	known, ok := rpcMethods[method]
	switch {
	case !ok && !hasID:
		return http.StatusAccepted, nil, 0, ""
	case !ok:
		return http.StatusNotFound, id, codeMethodNotFound, "method " + quote(method) + " is not served here: call tools/list, then tools/call"
	case known.notification && hasID:
		return http.StatusBadRequest, id, codeInvalidRequest, quote(method) + " is a notification: send it without an id"
	case !known.notification && !hasID:
		return http.StatusBadRequest, nil, codeInvalidRequest, quote(method) + " needs an id: send one (a string or a number)"
	case known.params && (!hasParams || string(params) == "null"):
		return http.StatusBadRequest, id, codeInvalidParams, quote(method) + ` needs "params": send them as an object`
	}
	return 0, nil, 0, ""
}

// validID reports whether id is a JSON-RPC id: a string, a number or null.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || '0' <= c && c <= '9' || string(id) == "null"
}

// quote quotes a method's name for a message, bounded: it came from the
// caller.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// isJSON reports whether a Content-Type is JSON's.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// writeRPCError answers a JSON-RPC error with the HTTP status given, its id
// null when the request had none readable.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(out, '\n'))
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
