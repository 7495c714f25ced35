package main

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"shop/database"
	"shop/database/dbtest"
)

// checkOutputs is a client middleware that checks every tool result's
// structuredContent, a success or a refusal, against the outputSchema the
// tool declares in tools/list (listed once per client when a test did not),
// as hosts with the TypeScript SDK do.
func checkOutputs(t *testing.T) mcp.Middleware {
	var (
		mu      sync.Mutex
		schemas map[string]*sjs.Schema
	)
	load := func(tools []*mcp.Tool) {
		mu.Lock()
		defer mu.Unlock()
		schemas = map[string]*sjs.Schema{}
		for _, tool := range tools {
			if tool.OutputSchema == nil {
				t.Errorf("tool %s declares no outputSchema", tool.Name)
				continue
			}
			schemas[tool.Name] = compileSchema(t, tool.Name, tool.OutputSchema)
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
					list, err := req.GetSession().(*mcp.ClientSession).ListTools(ctx, nil)
					if err != nil {
						t.Errorf("tools/list: %v", err)
						return res, nil
					}
					load(list.Tools)
				}
				params, _ := req.GetParams().(*mcp.CallToolParams)
				if params == nil {
					return res, nil
				}
				name := params.Name
				mu.Lock()
				s := schemas[name]
				mu.Unlock()
				if s == nil {
					return res, nil // reported by load, or an unknown tool
				}
				b, _ := json.Marshal(r.StructuredContent)
				inst, err := sjs.UnmarshalJSON(bytes.NewReader(b))
				if err == nil {
					err = s.Validate(inst)
				}
				if err != nil {
					t.Errorf("%s (isError %t): structuredContent %.300s does not follow its outputSchema: %v", name, r.IsError, b, err)
				}
			}
			return res, nil
		}
	}
}

func compileSchema(t *testing.T, name string, schema any) *sjs.Schema {
	t.Helper()
	b, _ := json.Marshal(schema)
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: outputSchema: %v", name, err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource("output.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("output.json")
	if err != nil {
		t.Fatalf("%s: outputSchema does not compile: %v", name, err)
	}
	return s
}

// TestAdminToolsList keeps the admin endpoint's tools/list in a golden file.
func TestAdminToolsList(t *testing.T) {
	shop := startShop(t, dbtest.DSN(t, database.SQLite), map[string]string{"SHOP_ADMIN_TOKENS": "owner:" + ownerToken})
	s := connectAdmin(t, shop.url, ownerToken)
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "admin-tools.json", append(got, '\n'))
}
