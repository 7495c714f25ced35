package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
)

// TestAccountTools: each tool declares its securitySchemes from its
// shop.AuthRequirement, and an account tool called by a buyer it does not
// allow answers the refusal with the challenge that starts linking, without
// running.
func TestAccountTools(t *testing.T) {
	type out struct {
		Email string `json:"email"`
	}
	ran := map[string]int{}
	tool := func(name string, auth shop.AuthRequirement) shop.Tool {
		return shop.NewTool(shop.Tool{Name: name, Description: name, Auth: auth},
			func(ctx context.Context, _ struct{}) (out, string, error) {
				ran[name]++
				return out{Email: shop.BuyerFrom(ctx).AccountEmail}, "ok", nil
			})
	}
	const challenge = `Bearer resource_metadata="https://shop.example/.well-known/oauth-protected-resource/mcp", scope="orders:read"`
	srv := NewMCP(MCPOptions{Name: "t", Tools: []shop.Tool{
		tool("hello", shop.AuthRequirement{}),
		tool("mine", shop.AuthRequirement{Scopes: []string{shop.ScopeOrdersRead}}),
		tool("both", shop.AuthRequirement{Scopes: []string{shop.ScopeOrdersRead}, Optional: true}),
	}, Challenge: func(scopes []string) string {
		return `Bearer resource_metadata="https://shop.example/.well-known/oauth-protected-resource/mcp", scope="` + strings.Join(scopes, " ") + `"`
	}})
	var buyer shop.Buyer
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			return next(shop.WithBuyer(ctx, buyer), method, req)
		}
	})
	cs := connectMCP(t, srv)
	ctx := context.Background()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemes := map[string]any{}
	for _, tl := range list.Tools {
		b, _ := json.Marshal(tl.Meta["securitySchemes"])
		var v any
		json.Unmarshal(b, &v)
		schemes[tl.Name] = v
	}
	noauth := map[string]any{"type": "noauth"}
	oauth := map[string]any{"type": "oauth2", "scopes": []any{"orders:read"}}
	want := map[string]any{"hello": []any{noauth}, "mine": []any{oauth}, "both": []any{noauth, oauth}}
	if diff := cmp.Diff(want, schemes); diff != "" {
		t.Errorf("securitySchemes (-want +got):\n%s", diff)
	}

	call := func(name string) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	denied := func(who, name string) {
		t.Helper()
		before := ran[name]
		res := call(name)
		text := res.Content[0].(*mcp.TextContent).Text
		ch, _ := json.Marshal(res.Meta["mcp/www_authenticate"])
		if !res.IsError || string(ch) != `["`+strings.ReplaceAll(challenge, `"`, `\"`)+`"]` || !strings.Contains(text, "connect their account") {
			t.Errorf("%s calling %s: isError %v, challenge %s, text %q", who, name, res.IsError, ch, text)
		}
		if ran[name] != before {
			t.Errorf("%s calling %s: the tool ran", who, name)
		}
	}

	buyer = shop.Buyer{Address: "192.0.2.1"}
	denied("a guest", "mine")
	for _, name := range []string{"hello", "both"} {
		if res := call(name); res.IsError {
			t.Errorf("a guest calling %s: %v", name, res.Content)
		}
	}
	buyer = shop.Buyer{AccountID: "acct_1", AccountEmail: "ann@example.com", Scopes: []string{shop.ScopeAccount}}
	denied("a buyer linked without orders:read", "mine")
	buyer.Scopes = []string{shop.ScopeOrdersRead}
	res := call("mine")
	if b, _ := json.Marshal(res.StructuredContent); res.IsError || !strings.Contains(string(b), "ann@example.com") {
		t.Errorf("a linked buyer calling mine: %s", b)
	}
}
