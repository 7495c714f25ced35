package server

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool is registered with go-sdk under a lean input schema, and tools/list
// answers its whole schema (fullSchemas).
//
// go-sdk (v1.8.0) reads the input schema of the tool called again on every
// call made in the 2026-07-28 protocol, to find the arguments an HTTP header
// must repeat (x-mcp-header annotations, checked against Mcp-Param-*
// headers): it marshals the whole schema and decodes its properties. With
// the shop's descriptions a schema is 1–2 KB, and that took 40–60 µs of
// every call, a twentieth of a search (BENCHMARKS.md). What the check reads
// of a schema is each level's type, properties and x-mcp-header; the lean
// schema keeps exactly those, so the check answers as it would on the whole
// schema, and nothing else of go-sdk reads the schema of a tool whose
// handler is its own (the shop validates its arguments itself).

// leanSchema is full with only what go-sdk's per-call header check reads:
// at every level of properties, "type", "properties" and "x-mcp-header".
// A schema it cannot read as JSON objects, or none, is answered unchanged.
func leanSchema(full json.RawMessage) json.RawMessage {
	if len(full) == 0 {
		return full // go-sdk refuses a tool without one, as it should
	}
	lean, err := json.Marshal(leanLevel(full))
	if err != nil {
		return full
	}
	return lean
}

// leanLevel is one level of leanSchema: the raw value itself when it is not
// an object with readable properties.
func leanLevel(raw json.RawMessage) any {
	var level map[string]json.RawMessage
	if err := json.Unmarshal(raw, &level); err != nil {
		return raw
	}
	out := map[string]any{}
	for _, key := range []string{"type", "x-mcp-header"} {
		if v, ok := level[key]; ok {
			out[key] = v
		}
	}
	if props, ok := level["properties"]; ok {
		var named map[string]json.RawMessage
		if err := json.Unmarshal(props, &named); err != nil {
			out["properties"] = props
		} else {
			leanProps := make(map[string]any, len(named))
			for name, p := range named {
				leanProps[name] = leanLevel(p)
			}
			out["properties"] = leanProps
		}
	}
	return out
}

// fullSchemas answers tools/list with each tool's whole input schema in
// place of the lean one it was registered with (leanSchema). The entries
// are copied, never changed in place: the server keeps the registered ones.
func fullSchemas(full map[string]json.RawMessage) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListToolsResult)
			if err != nil || method != "tools/list" || !ok {
				return res, err
			}
			out := *list
			out.Tools = make([]*mcp.Tool, len(list.Tools))
			for i, t := range list.Tools {
				if schema, ok := full[t.Name]; ok {
					c := *t
					c.InputSchema = schema
					t = &c
				}
				out.Tools[i] = t
			}
			return &out, nil
		}
	}
}
