// Package mcptest holds what the tests' MCP clients share: a client whose
// every tool result is checked against the outputSchema its tool declares,
// with a JSON Schema validator (github.com/santhosh-tekuri/jsonschema/v6),
// as hosts built on the TypeScript SDK check them. Only tests import it.
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// T is the part of *testing.T the checks report to.
type T interface {
	Helper()
	Errorf(format string, args ...any)
}

// NewClient returns an MCP client named name whose tool results are checked
// by CheckOutputs.
func NewClient(t T, name string, opts *mcp.ClientOptions) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
	c.AddSendingMiddleware(CheckOutputs(t))
	return c
}

// CheckOutputs is a client middleware that checks every tool result's
// structuredContent, a success or a refusal, against the outputSchema the
// tool declares in tools/list (listed once per client when the test did
// not), and reports to t each result that breaks it and each tool that
// declares none.
func CheckOutputs(t T) mcp.Middleware {
	var (
		mu      sync.Mutex
		schemas map[string]*sjs.Schema
	)
	load := func(tools []*mcp.Tool) {
		mu.Lock()
		defer mu.Unlock()
		schemas = map[string]*sjs.Schema{}
		for _, tool := range tools {
			s, err := Compile(tool.OutputSchema)
			if err != nil {
				t.Errorf("tool %s: %v", tool.Name, err)
				continue
			}
			schemas[tool.Name] = s
		}
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.ListToolsResult:
				load(r.Tools)
			case *mcp.CallToolResult:
				mu.Lock()
				listed := schemas != nil
				mu.Unlock()
				if !listed {
					// The answer comes back through this middleware, which loads it.
					if _, err := req.GetSession().(*mcp.ClientSession).ListTools(ctx, nil); err != nil {
						t.Errorf("tools/list: %v", err)
						return res, nil
					}
				}
				params, _ := req.GetParams().(*mcp.CallToolParams)
				if params == nil {
					return res, nil
				}
				mu.Lock()
				s := schemas[params.Name]
				mu.Unlock()
				if s == nil {
					return res, nil // reported by load, or an unknown tool
				}
				if err := Validate(s, r.StructuredContent); err != nil {
					t.Helper()
					t.Errorf("%s (isError %t): %v", params.Name, r.IsError, err)
				}
			}
			return res, nil
		}
	}
}

// Compile compiles a tool's outputSchema; a tool without one is an error.
func Compile(schema any) (*sjs.Schema, error) {
	if schema == nil {
		return nil, fmt.Errorf("declares no outputSchema")
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource("output.json", doc); err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	s, err := c.Compile("output.json")
	if err != nil {
		return nil, fmt.Errorf("outputSchema does not compile: %w", err)
	}
	return s, nil
}

// Validate checks structured content (any JSON value, or its encoding)
// against s.
func Validate(s *sjs.Schema, structured any) error {
	b, ok := structured.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(structured); err != nil {
			return fmt.Errorf("structuredContent: %w", err)
		}
	}
	inst, err := sjs.UnmarshalJSON(bytes.NewReader(b))
	if err == nil {
		err = s.Validate(inst)
	}
	if err != nil {
		return fmt.Errorf("structuredContent %.300s does not follow its outputSchema: %w", b, err)
	}
	return nil
}

// JSON returns v as it comes off the wire: encoded and read back by
// encoding/json (maps, []any, float64).
func JSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
