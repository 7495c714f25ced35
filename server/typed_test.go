package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"shop"
	"shop/server"
)

type countArgs struct {
	N    int    `json:"n" jsonschema:"How many."`
	Note string `json:"note,omitempty"`
}

func (countArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["n"].Minimum = jsonschema.Ptr(1.0)
	s.Properties["note"].MaxLength = jsonschema.Ptr(10)
}

type countResult struct {
	Count int      `json:"count"`
	Tags  []string `json:"tags"`
}

// compile compiles a JSON Schema that tools/list answered.
func compile(t *testing.T, schema any) *sjs.Schema {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("compile %s: %v", b, err)
	}
	return s
}

func validate(t *testing.T, s *sjs.Schema, v any) error {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := sjs.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// TestTypedTool: a tool declared from Go types lists the inferred schemas,
// decodes leniently with field-named errors, and both its success and its
// refusal follow the outputSchema.
func TestTypedTool(t *testing.T) {
	count := shop.NewTool(shop.Tool{Name: "count", ReadOnly: true}, func(_ context.Context, in countArgs) (countResult, string, error) {
		if in.N > 3 {
			return countResult{}, "", shop.Errorf(shop.Invalid, "$.n", "send at most 3")
		}
		return countResult{Count: in.N, Tags: strings.Fields(in.Note)}, "counted", nil
	})
	srv := server.NewMCP(server.MCPOptions{Name: "shop", Version: "test", Tools: []shop.Tool{count}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs := server.ConnectMCP(t, srv)
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != 1 {
		t.Fatalf("tools/list: %v %v", list, err)
	}
	tool := list.Tools[0]
	in, _ := json.Marshal(tool.InputSchema)
	for _, want := range []string{`"description":"How many."`, `"minimum":1`, `"maxLength":10`, `"required":["n"]`} {
		if !strings.Contains(string(in), want) {
			t.Errorf("inputSchema %s lacks %s", in, want)
		}
	}
	if strings.Contains(string(in), "additionalProperties") {
		t.Errorf("inputSchema %s refuses other properties, which the decoding ignores", in)
	}
	if tool.OutputSchema == nil {
		t.Fatal("no outputSchema")
	}
	out := compile(t, tool.OutputSchema)
	for _, tc := range []struct {
		name    string
		args    any
		isError bool
		text    string
	}{
		{"Success", map[string]any{"n": 2, "note": "a b", "unknown": true}, false, "counted"},
		{"Refused", map[string]any{"n": 5}, true, "$.n: send at most 3"},
		{"WrongType", map[string]any{"n": "two"}, true, "$.n: must be an integer, not a JSON string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			var text string
			for _, c := range res.Content {
				text += c.(*mcp.TextContent).Text
			}
			if res.IsError != tc.isError || text != tc.text {
				t.Errorf("isError %t, text %q; want %t, %q", res.IsError, text, tc.isError, tc.text)
			}
			if err := validate(t, out, res.StructuredContent); err != nil {
				t.Errorf("structuredContent %v does not follow the outputSchema: %v", res.StructuredContent, err)
			}
		})
	}
	// The outputSchema is strict: a result of another shape breaks it.
	if err := validate(t, out, map[string]any{"count": "x", "tags": nil}); err == nil {
		t.Error("the outputSchema accepts a string count")
	}
}
