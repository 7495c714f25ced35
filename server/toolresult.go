package server

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool's answer leaves the server encoded once, not twice over.
//
// go-sdk (v1.8.0) encodes a response's result with encoding/json, and
// *mcp.CallToolResult has a MarshalJSON of its own: encoding/json then
// compacts what that method returned, a second pass over every byte, before
// the JSON-RPC envelope compacts the result once more. A session or a page
// of products is a few KB, and that pass was a twentieth of a purchase's
// CPU (BENCHMARKS.md). go-sdk lets a server answer a result type of its own
// (mcp.ResultBase): toolResult has the same fields, in the same order, under
// the same names, and no MarshalJSON, so encoding/json writes it directly.
// flatResults answers it in place of the result a tool's handler returned.
// The JSON sent is go-sdk's, byte for byte, but that <, > and & inside its
// strings go out as they are, as go-sdk's envelope sends the rest of a
// response, where its json.Marshal wrote \u003c, \u003e and \u0026
// (TestToolResultBytes).

// toolResult is an *mcp.CallToolResult as it goes on the wire.
type toolResult struct {
	mcp.ResultBase
	Content           []mcp.Content `json:"content"`
	StructuredContent any           `json:"structuredContent,omitempty"`
	IsError           bool          `json:"isError,omitempty"`
	// ResultType is go-sdk's resultType ("complete" for the protocol
	// versions that have one), which CallToolResult keeps unexported.
	ResultType string `json:"resultType,omitempty"`
}

// flatResults answers tools/call with a toolResult in place of the
// *mcp.CallToolResult the handler gave. It must be the outermost
// middleware, so that go-sdk has finished with the result (its
// resultType) before it is copied. A result asking the client for input
// (multi round-trip), which the shop's tools never give, goes as it is.
func flatResults() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			r, ok := res.(*mcp.CallToolResult)
			if err != nil || !ok || r == nil || r.NeedsInput() || r.InputRequests != nil || r.RequestState != "" {
				return res, err
			}
			out := &toolResult{Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError, ResultType: resultType(req, r)}
			out.Meta = r.Meta
			return out, nil
		}
	}
}

// resultType is r's resultType as go-sdk writes it. go-sdk sets it from
// the protocol version of the caller's session alone, so it is read once
// per version, from the encoding of r without its content (a
// MarshalJSON and a decode: a fiftieth of a search's CPU when done on
// every call), and kept.
func resultType(req mcp.Request, r *mcp.CallToolResult) string {
	version := ""
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		if p := ss.InitializeParams(); p != nil {
			version = p.ProtocolVersion
		}
	}
	if t, ok := resultTypes.Load(version); ok {
		return t.(string)
	}
	bare := *r
	bare.Meta, bare.Content, bare.StructuredContent = nil, nil, nil
	b, err := bare.MarshalJSON()
	if err != nil {
		return ""
	}
	var t struct {
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(b, &t) != nil {
		return ""
	}
	if resultTypesLen.Load() < maxResultTypes {
		if _, had := resultTypes.LoadOrStore(version, t.ResultType); !had {
			resultTypesLen.Add(1)
		}
	}
	return t.ResultType
}

// resultTypes keeps resultType's answer by protocol version, for up to
// maxResultTypes versions (a caller names its own).
var (
	resultTypes    sync.Map // string → string
	resultTypesLen atomic.Int64
)

const maxResultTypes = 64
