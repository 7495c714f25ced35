package mcptest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/mcptest"
)

// recorder is a T that keeps what is reported.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheckOutputs: a result that follows its tool's outputSchema passes,
// one that breaks it is reported, and so is a tool that declares none.
func TestCheckOutputs(t *testing.T) {
	schema := json.RawMessage(`{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}`)
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	answer := func(sc string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sc}}, StructuredContent: json.RawMessage(sc)}, nil
		}
	}
	empty := json.RawMessage(`{"type": "object"}`)
	srv.AddTool(&mcp.Tool{Name: "good", InputSchema: empty, OutputSchema: schema}, answer(`{"n": 1}`))
	srv.AddTool(&mcp.Tool{Name: "bad", InputSchema: empty, OutputSchema: schema}, answer(`{"n": "one"}`))
	srv.AddTool(&mcp.Tool{Name: "none", InputSchema: empty}, answer(`{}`))

	for _, tc := range []struct {
		tool string
		want []string // what the reports say, in order; none when empty
	}{
		{"good", []string{"tool none: declares no outputSchema"}},
		{"bad", []string{"tool none: declares no outputSchema", `bad (isError false): structuredContent {"n":"one"} does not follow its outputSchema`}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			ctx := context.Background()
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			rec := &recorder{}
			cs, err := mcptest.NewClient(rec, "test", nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool}); err != nil {
				t.Fatal(err)
			}
			if len(rec.errs) != len(tc.want) {
				t.Fatalf("reported %q, want %d reports like %q", rec.errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(rec.errs[i], w) {
					t.Errorf("report %d is %q, want it to say %q", i, rec.errs[i], w)
				}
			}
		})
	}
}
