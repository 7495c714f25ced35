package server

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
)

// A tool is registered with go-sdk under a lean input schema, and tools/list
// answers its whole schema (fullSchemas).
//
// go-sdk (v1.8.0) reads the input schema of the tool called again on every
// call made in the 2026-07-28 protocol, to find the arguments an HTTP header
// must repeat (x-mcp-header annotations, checked against Mcp-Param-*
// headers): it marshals the whole schema and decodes its properties. With the
// shop's descriptions a schema is 1–2 KB, encoded and decoded again on every
// call. What the check reads of a schema is the properties that carry an
// x-mcp-header, and the type of each; the lean schema keeps exactly those,
// with the levels of properties that lead to them, so the check answers as it
// would on the whole schema. A schema without annotations (all of the shop's
// own) is left as {"type":"object"}. Nothing else of go-sdk reads the schema
// of a tool whose handler is its own (the shop validates its arguments
// itself).

// leanSchema is full with only what go-sdk's per-call header check reads:
// the top level's "type", and the properties with an "x-mcp-header" or
// with nested properties that have one, each with its "type",
// "x-mcp-header" and those properties. A schema it cannot read as a JSON
// object, or none, is answered unchanged.
func leanSchema(full json.RawMessage) json.RawMessage {
	level, _, ok := leanLevel(full)
	if !ok {
		return full // go-sdk refuses a tool without a schema, as it should
	}
	lean, err := json.Marshal(level)
	if err != nil {
		return full
	}
	return lean
}

// leanLevel is one level of leanSchema, whether it carries an x-mcp-header
// or holds a property that does (annotated), and whether it is a JSON
// object at all (ok): a property that is not (true, say) has no
// annotation to keep.
func leanLevel(raw json.RawMessage) (lean map[string]any, annotated, ok bool) {
	var level map[string]json.RawMessage
	if err := json.Unmarshal(raw, &level); err != nil || level == nil {
		return nil, false, false
	}
	lean = map[string]any{}
	for _, key := range []string{"type", "x-mcp-header"} {
		if v, ok := level[key]; ok {
			lean[key] = v
		}
	}
	_, annotated = level["x-mcp-header"]
	var named map[string]json.RawMessage
	if err := json.Unmarshal(level["properties"], &named); err == nil && len(named) > 0 {
		props := map[string]any{}
		for name, p := range named {
			if lp, marked, _ := leanLevel(p); marked {
				props[name] = lp
			}
		}
		if len(props) > 0 {
			lean["properties"], annotated = props, true
		}
	}
	return lean, annotated, true
}

// fullSchemas answers tools/list with each tool's whole input schema in
// place of the lean one it was registered with (leanSchema), and, when
// schemes is set, with each tool's securitySchemes at the top of its
// descriptor (listedTools). The entries are copied, never changed in
// place: the server keeps the registered ones.
func fullSchemas(full map[string]json.RawMessage, schemes map[string][]shop.SecurityScheme) mcp.Middleware {
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
			if schemes != nil {
				return &listedTools{ListToolsResult: &out, schemes: schemes}, nil
			}
			return &out, nil
		}
	}
}

// listedTools is a tools/list result whose tools carry their
// securitySchemes at the top of their descriptors, where OpenAI's Apps SDK
// reads them (go-sdk's Tool has no such field; _meta has them too). It
// embeds the result so that go-sdk still sets its resultType and _meta.
type listedTools struct {
	*mcp.ListToolsResult
	schemes map[string][]shop.SecurityScheme
}

// MarshalJSON is the result's own JSON with each tool's securitySchemes added.
func (l *listedTools) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(l.ListToolsResult)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(fields["tools"], &tools); err != nil {
		return nil, err
	}
	for _, t := range tools {
		var name string
		if err := json.Unmarshal(t["name"], &name); err != nil {
			return nil, err
		}
		if s, ok := l.schemes[name]; ok {
			if t["securitySchemes"], err = json.Marshal(s); err != nil {
				return nil, err
			}
		}
	}
	if fields["tools"], err = json.Marshal(tools); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}
