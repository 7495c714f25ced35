package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Bounds of a request body, checked before anything parses it.
const (
	// MaxBodyBytes bounds the body of a request that is not an MCP post
	// (the Stripe webhook, the payment pages' forms).
	MaxBodyBytes = 1 << 20
	// MaxMCPBodyBytes bounds the body of a POST to an MCP endpoint (/mcp,
	// /admin/mcp, /acp/mcp, /ucp/mcp). The largest call a tool's schema
	// accepts, a 50-line checkout with every field at its longest and every
	// character escaped as \uXXXX, is about a third of it (94 KB,
	// TestLargestCallsFit).
	MaxMCPBodyBytes = 256 << 10
	// MaxJSONDepth bounds how deeply an MCP post's JSON nests arrays and
	// objects (a tool call nests about 6 deep). A deeper body is refused
	// before any parser reads it: parsers recurse once a level.
	MaxJSONDepth = 64
)

// bodyLimit is the most a request's body may hold.
func bodyLimit(r *http.Request) int64 {
	if isMCPPost(r) || isRESTCall(r) {
		return MaxMCPBodyBytes
	}
	return MaxBodyBytes
}

// limitBody refuses a request whose declared body is over its bound
// (bodyLimit) with 413, and cuts off one that sends more than it declared.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := bodyLimit(r)
		if r.ContentLength > limit {
			tooLarge(w, r, limit)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// tooLarge answers a body over its bound: on an MCP endpoint with a
// JSON-RPC error (Invalid Request, its id null: the body was not parsed),
// on UCP's REST binding with its {code, content}.
func tooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	msg := fmt.Sprintf("request body too large: at most %d bytes", limit)
	switch {
	case isMCPPost(r):
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, msg)
	case isRESTCall(r):
		writeRESTError(w, http.StatusRequestEntityTooLarge, msg)
	default:
		http.Error(w, msg, http.StatusRequestEntityTooLarge)
	}
}

// deeperThan reports whether the JSON text body nests arrays and objects
// more than max deep. It scans the bytes once, keeping no more than a
// counter, and counts the brackets outside strings: however invalid the
// body, no parser that reads it can recurse deeper than the count it
// reaches (a closing bracket with nothing open is not counted).
func deeperThan(body []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range body {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > max {
				return true
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return false
}

// tooDeepCode is the JSON-RPC code of a body refused for its nesting:
// Invalid Request.
const tooDeepCode = -32600

// refuseTooDeep answers an MCP post that nests deeper than MaxJSONDepth with
// HTTP 400 and a JSON-RPC error, its id null: the body was not parsed.
func refuseTooDeep(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":` + strconv.Itoa(tooDeepCode) +
		`,"message":"the request nests arrays and objects more than ` + strconv.Itoa(MaxJSONDepth) +
		` deep: send a flatter request (a tool call nests about 6 deep)"}}` + "\n"))
}

// ucpRESTPrefix is where UCP's REST binding is served.
const ucpRESTPrefix = "/ucp/v1/"

// isRESTCall reports whether r sends a body to UCP's REST binding: bounded
// like an MCP post.
func isRESTCall(r *http.Request) bool {
	return (r.Method == http.MethodPost || r.Method == http.MethodPut) && strings.HasPrefix(r.URL.Path, ucpRESTPrefix)
}

// restBody reads a REST call's body (bounded by limitBody) and refuses one
// nested deeper than MaxJSONDepth, before anything parses it, with 400 and
// UCP's {code, content}.
func restBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isRESTCall(r) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		status, msg := http.StatusBadRequest, ""
		switch {
		case err != nil:
			msg = "the request body could not be read: send it again"
			if tl, ok := errors.AsType[*http.MaxBytesError](err); ok {
				status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large: at most %d bytes", tl.Limit)
			}
		case deeperThan(body, MaxJSONDepth):
			msg = "the request nests arrays and objects more than " + strconv.Itoa(MaxJSONDepth) + " deep: send a flatter request"
		}
		if msg != "" {
			writeRESTError(w, status, msg)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// writeRESTError answers a REST call refused before it is read: its status
// and UCP's {code: invalid_request, content}.
func writeRESTError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"code": "invalid_request", "content": msg})
	_, _ = w.Write(append(b, '\n'))
}
