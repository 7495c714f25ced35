package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"shop/server"
)

// TestLargestCallsFit: the largest arguments every buyer and staff tool
// accepts (its tools/list schema, as the golden files hold it: every array
// at maxItems, every string at maxLength, every character escaped as
// \uXXXX, maps at maxProperties) make a call well inside MaxMCPBodyBytes
// and MaxJSONDepth (under half the one, a quarter of the other), and the
// largest of them is served.
func TestLargestCallsFit(t *testing.T) {
	var largest string
	for _, file := range []string{"buyer-tools.json", "admin-tools.json"} {
		b, err := os.ReadFile("../testdata/golden/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		}
		if err := json.Unmarshal(b, &tools); err != nil || len(tools) == 0 {
			t.Fatalf("%s: %d tools, %v", file, len(tools), err)
		}
		for _, tool := range tools {
			args, err := json.Marshal(maximal(tool.InputSchema))
			if err != nil {
				t.Fatal(err)
			}
			args = bytes.ReplaceAll(args, []byte("é"), []byte(`\u00e9`))
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":%s,"_meta":{"openai/subject":"%s"}}}`,
				args, strings.Repeat("s", 256))
			if len(body) > server.MaxMCPBodyBytes/2 || server.DeeperThan([]byte(body), server.MaxJSONDepth/4) {
				t.Errorf("%s's largest call is %d bytes; want it far inside the %d bytes and %d levels of an MCP post", tool.Name, len(body), server.MaxMCPBodyBytes, server.MaxJSONDepth)
			}
			if len(body) > len(largest) {
				largest = body
			}
			t.Logf("%s: %d bytes", tool.Name, len(body))
		}
	}
	h := newHost(t, server.Options{})
	if r, err := h.post("/mcp", largest, nil); err != nil || r.status != http.StatusOK || !strings.Contains(string(r.body), `"result"`) {
		t.Errorf("the largest call (%d bytes): %d %.300s %v; want it served", len(largest), r.status, r.body, err)
	}
}

// maximal is the largest value schema accepts: the largest of its
// alternatives, every property, arrays at maxItems, strings at maxLength
// (64 when unbounded: the dates) of a character JSON escapes in 6 bytes.
func maximal(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	var best any
	bestLen := -1
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, _ := schema[k].([]any)
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				v := maximal(m)
				if b, _ := json.Marshal(v); len(b) > bestLen {
					best, bestLen = v, len(b)
				}
			}
		}
	}
	if bestLen >= 0 {
		return best
	}
	bound := func(key string, def int) int {
		if n, ok := schema[key].(float64); ok {
			return int(n)
		}
		return def
	}
	switch typeOf(schema) {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			if m, ok := p.(map[string]any); ok {
				out[name] = maximal(m)
			}
		}
		if extra, ok := schema["additionalProperties"].(map[string]any); ok {
			for i := range bound("maxProperties", 0) {
				out[fmt.Sprintf("k%039d", i)] = maximal(extra)
			}
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		out := make([]any, bound("maxItems", 1))
		for i := range out {
			out[i] = maximal(items)
		}
		return out
	case "string":
		return strings.Repeat("é", bound("maxLength", 64))
	case "integer", "number":
		return 999999999
	case "boolean":
		return true
	}
	return nil
}

// typeOf is the type of schema that holds the most: object, array, string,
// then the rest.
func typeOf(schema map[string]any) string {
	var types []string
	switch t := schema["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			s, _ := x.(string)
			types = append(types, s)
		}
	}
	for _, want := range []string{"object", "array", "string", "integer", "number", "boolean"} {
		for _, t := range types {
			if t == want {
				return want
			}
		}
	}
	return ""
}
