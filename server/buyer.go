package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	sjson "github.com/segmentio/encoding/json"

	"shop"
)

// hostIDs are the _meta entries under which hosts send their anonymous id
// of the user who makes a call, a field each, the first present one (in
// field order) winning. A host that sends one under another key is added
// here, and nowhere else: subjectKeys and identify read the fields.
type hostIDs struct {
	OpenAI json.RawMessage `json:"openai/subject"` // ChatGPT
}

// subjectKeys are hostIDs' keys, in its fields' order.
var subjectKeys = func() []string {
	t := reflect.TypeFor[hostIDs]()
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return keys
}()

// maxSubjectLen bounds a host's user id; a longer one is ignored, as is one
// with control characters.
const maxSubjectLen = 256

// hostSubject returns the host's user id a request's _meta carries, "" when
// it carries none (or none the shop accepts: not a string, empty, longer
// than maxSubjectLen bytes, not UTF-8, or with control characters).
func hostSubject(meta map[string]any) string {
	for _, k := range subjectKeys {
		v, ok := meta[k]
		if !ok {
			continue
		}
		s, _ := v.(string)
		return acceptedSubject(s)
	}
	return ""
}

// rawSubject is hostSubject of the entries of a _meta identify decoded: a
// value that is not a JSON string names nobody. A string without escapes
// (every id seen) is taken as it is, without decoding it again.
func rawSubject(ids *hostIDs) string {
	v := reflect.ValueOf(ids).Elem()
	for i := range v.NumField() {
		raw := v.Field(i).Bytes()
		if raw == nil {
			continue
		}
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
			return ""
		}
		s := string(raw[1 : len(raw)-1])
		if strings.Contains(s, `\`) && json.Unmarshal(raw, &s) != nil { // a " inside is escaped too
			return ""
		}
		return acceptedSubject(s)
	}
	return ""
}

// acceptedSubject is s when the shop accepts it as a host's user id, else "".
func acceptedSubject(s string) string {
	if s == "" || len(s) > maxSubjectLen || !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		return ""
	}
	return s
}

// isMCP reports whether r is for one of the MCP endpoints (/mcp,
// /admin/mcp and the dialects' …/mcp).
func isMCP(r *http.Request) bool {
	return r.URL.Path == "/mcp" || strings.HasSuffix(r.URL.Path, "/mcp")
}

// isMCPPost reports whether r posts JSON-RPC to one of the MCP endpoints.
func isMCPPost(r *http.Request) bool {
	return r.Method == http.MethodPost && isMCP(r)
}

// rpcKey is the context key of the JSON-RPC request being served (its id
// and method), for the rate limits and the errors they answer before the
// MCP server sees it.
type rpcKey struct{}

// rpcRequest is what identify read of a JSON-RPC request.
type rpcRequest struct {
	ID     json.RawMessage
	Method string
}

// rpcFrom returns the JSON-RPC request ctx serves, the zero one when none.
func rpcFrom(ctx context.Context) rpcRequest {
	req, _ := ctx.Value(rpcKey{}).(rpcRequest)
	return req
}

// rpcID returns the JSON-RPC id of the request ctx serves, null when it has
// none (a notification, or a body that is not a JSON-RPC request).
func rpcID(ctx context.Context) json.RawMessage {
	// JSON-RPC ids are strings or numbers; anything else is answered as null.
	if id := rpcFrom(ctx).ID; len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9') {
		return id
	}
	return json.RawMessage("null")
}

// handshake reports whether r only sets up or keeps up an MCP session
// (initialize or server/discover, ping, notifications, the GET of a
// server-sent stream or the DELETE that ends a session) or lists the tools,
// answered from memory: such
// requests count against the address backstop only, not against a buyer.
// Hosts send them without their user's id, which ChatGPT puts on tools/call
// only, and a stateless host may send them before every call of every user
// from one address: the buyer limit of that address would throttle all its
// users as one.
func handshake(r *http.Request) bool {
	if !isMCP(r) {
		return false
	}
	if r.Method != http.MethodPost {
		return true
	}
	method := rpcFrom(r.Context()).Method
	switch method {
	case "initialize", "server/discover", "ping", "tools/list":
		return true
	}
	return strings.HasPrefix(method, "notifications/")
}

// identify puts the caller into the request's context as a shop.Buyer: its
// client address (set by the rate limiter's handler), and on an MCP POST the
// host's user id that the JSON-RPC request's params._meta carries. It reads
// the body (bounded by limitBody) and restores it for the MCP server; it
// refuses a body nested deeper than MaxJSONDepth before anything parses it,
// and a JSON-RPC batch before any of its elements runs.
func identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isMCPPost(r) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			if tl, ok := errors.AsType[*http.MaxBytesError](err); ok {
				tooLarge(w, r, tl.Limit)
				return
			}
			writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "the request body could not be read: send it again")
			return
		}
		// Nothing parses a body before its depth is known: parsers recurse
		// once a level, and a megabyte of [ made one take half a gigabyte.
		if deeperThan(body, MaxJSONDepth) {
			refuseTooDeep(w)
			return
		}
		if isBatch(body) {
			refuseBatch(w)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// Of _meta only the host's user id is read (hostIDs): the rest
		// (nested objects, in newer protocol versions) is skipped, not
		// built.
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta hostIDs `json:"_meta"`
			} `json:"params"`
		}
		// A body that is not a JSON-RPC request names nobody; the MCP
		// server answers it as it should. Decoded by segmentio/encoding,
		// go-sdk's own decoder, with names matched exactly as go-sdk
		// matches them: in half encoding/json's time, on every call.
		if _, err := sjson.Parse(body, &msg, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
			msg.ID, msg.Method, msg.Params.Meta = nil, "", hostIDs{}
		}
		ctx := context.WithValue(r.Context(), rpcKey{}, rpcRequest{ID: msg.ID, Method: msg.Method})
		if s := rawSubject(&msg.Params.Meta); s != "" {
			b := shop.BuyerFrom(ctx)
			b.Subject = s
			ctx = shop.WithBuyer(ctx, b)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
