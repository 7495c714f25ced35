package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// ucpSpecs are where the UCP schemas of each release are kept.
var ucpSpecs = map[string]string{
	"2026-04-08": filepath.Join("..", "..", "testdata", "ucp"),
	"2026-08-25": filepath.Join("..", "..", "testdata", "ucp-2026-08-25"),
}

// ucpLoader loads UCP's schemas of one release by their ids
// (https://ucp.dev/schemas/…, the same in every release) from testdata,
// never from the network.
type ucpLoader struct{ dir string }

func (l ucpLoader) Load(url string) (any, error) {
	rest, ok := strings.CutPrefix(url, "https://ucp.dev/schemas/")
	if !ok {
		return nil, fmt.Errorf("schema %s is not one of UCP's", url)
	}
	switch {
	case rest == "discovery/profile.json":
		rest = "../discovery/profile_schema.json"
	case strings.HasPrefix(rest, "schemas/"): // the profile's ../schemas/ucp.json
		rest = strings.TrimPrefix(rest, "schemas/")
	}
	f, err := os.Open(filepath.Join(l.dir, "schemas", filepath.FromSlash(rest)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return sjs.UnmarshalJSON(f)
}

const ucpSchemas = "https://ucp.dev/schemas/shopping/"

// ucpResultsOf are the schemas of the tools' answers in a release, as its
// mcp.openrpc.json names them, with the extensions the shop implements
// composed in; errorResponse is the release's error_response.json.
func ucpResultsOf(errorResponse, profile string) map[string]string {
	return map[string]string{
		"checkout": `{"oneOf": [{"allOf": [{"$ref": "` + ucpSchemas + `fulfillment.json#/$defs/dev.ucp.shopping.checkout"},
		{"$ref": "` + ucpSchemas + `discount.json#/$defs/dev.ucp.shopping.checkout"}]}, {"$ref": "` + errorResponse + `"}]}`,
		"cart":    `{"oneOf": [{"$ref": "` + ucpSchemas + `discount.json#/$defs/dev.ucp.shopping.cart"}, {"$ref": "` + errorResponse + `"}]}`,
		"order":   `{"oneOf": [{"$ref": "` + ucpSchemas + `order.json"}, {"$ref": "` + errorResponse + `"}]}`,
		"search":  `{"oneOf": [{"$ref": "` + ucpSchemas + `catalog_search.json#/$defs/search_response"}, {"$ref": "` + errorResponse + `"}]}`,
		"lookup":  `{"oneOf": [{"$ref": "` + ucpSchemas + `catalog_lookup.json#/$defs/lookup_response"}, {"$ref": "` + errorResponse + `"}]}`,
		"product": `{"oneOf": [{"$ref": "` + ucpSchemas + `catalog_lookup.json#/$defs/get_product_response"}, {"$ref": "` + errorResponse + `"}]}`,
		"profile": `{"$ref": "` + profile + `"}`,
	}
}

// ucpResults are ucpResultsOf each release.
var ucpResults = map[string]map[string]string{
	"2026-04-08": ucpResultsOf(ucpSchemas+"types/error_response.json", "https://ucp.dev/schemas/discovery/profile.json#/$defs/business_profile"),
	"2026-08-25": ucpResultsOf("https://ucp.dev/schemas/common/types/error_response.json", "https://ucp.dev/schemas/profile.json#/$defs/business_schema"),
}

// ucpToolResult names the result schema of each tool of /ucp/mcp.
var ucpToolResult = map[string]string{
	"create_checkout": "checkout", "get_checkout": "checkout", "update_checkout": "checkout",
	"complete_checkout": "checkout", "cancel_checkout": "checkout",
	"create_cart": "cart", "get_cart": "cart", "update_cart": "cart", "cancel_cart": "cart",
	"get_order": "order", "search_catalog": "search", "lookup_catalog": "lookup", "get_product": "product",
}

var (
	ucpCompileOnce sync.Once
	ucpCompiled    map[string]map[string]*sjs.Schema // by release, then name
	ucpCompileErr  error
)

// ucpSchema is the compiled schema of the named result (a key of
// ucpResultsOf) in release version.
func ucpSchema(t *testing.T, version, name string) *sjs.Schema {
	t.Helper()
	ucpCompileOnce.Do(func() {
		ucpCompiled = map[string]map[string]*sjs.Schema{}
		for version, results := range ucpResults {
			c := sjs.NewCompiler()
			c.UseLoader(ucpLoader{ucpSpecs[version]})
			c.AssertFormat()
			ucpCompiled[version] = map[string]*sjs.Schema{}
			for n, doc := range results {
				v, err := sjs.UnmarshalJSON(strings.NewReader(doc))
				if err == nil {
					err = c.AddResource("mem://"+n+".json", v)
				}
				var s *sjs.Schema
				if err == nil {
					s, err = c.Compile("mem://" + n + ".json")
				}
				if err != nil {
					ucpCompileErr = fmt.Errorf("%s %s: %w", version, n, err)
					return
				}
				ucpCompiled[version][n] = s
			}
		}
	})
	if ucpCompileErr != nil {
		t.Fatal(ucpCompileErr)
	}
	s := ucpCompiled[version][name]
	if s == nil {
		t.Fatalf("no schema of %s in UCP %q", name, version)
	}
	return s
}

// checkUCP validates a JSON document against the named UCP schema of the
// release its ucp.version names.
func checkUCP(t *testing.T, name string, doc []byte) {
	t.Helper()
	v, err := sjs.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Errorf("%s: not JSON: %v", name, err)
		return
	}
	var env struct {
		UCP struct {
			Version string `json:"version"`
		} `json:"ucp"`
	}
	_ = json.Unmarshal(doc, &env)
	if err := ucpSchema(t, env.UCP.Version, name).Validate(v); err != nil {
		t.Errorf("%s does not follow UCP %s's schema: %#v\n%s", name, env.UCP.Version, err, doc)
	}
}

// checkUCPResults is a client middleware that validates the
// structuredContent of every /ucp/mcp tool result against UCP's schema of
// the tool's answer.
func checkUCPResults(t *testing.T) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			r, ok := res.(*mcp.CallToolResult)
			if err != nil || !ok {
				return res, err
			}
			params, _ := req.GetParams().(*mcp.CallToolParams)
			kind := ucpToolResult[params.Name]
			if kind == "" {
				t.Errorf("tool %s has no UCP result schema", params.Name)
				return res, nil
			}
			if r.IsError {
				t.Errorf("%s answered an MCP tool error, not a UCP answer: %+v", params.Name, r.Content)
				return res, nil
			}
			b, _ := json.Marshal(r.StructuredContent)
			checkUCP(t, kind, b)
			return res, nil
		}
	}
}

// agentProfileJSON is an agent's profile declaring every capability the
// shop has, at UCP 2026-04-08 (the shape of ucp-cli's own).
const agentProfileJSON = `{"ucp": {"version": "2026-04-08",
 "services": {"dev.ucp.shopping": [{"version": "2026-04-08", "spec": "https://ucp.dev/2026-04-08/specification/overview",
   "transport": "mcp", "schema": "https://ucp.dev/2026-04-08/services/shopping/mcp.openrpc.json"}]},
 "capabilities": {
  "dev.ucp.shopping.checkout": [{"version": "2026-04-08"}],
  "dev.ucp.shopping.fulfillment": [{"version": "2026-04-08", "extends": ["dev.ucp.shopping.checkout", "dev.ucp.shopping.cart"]}],
  "dev.ucp.shopping.discount": [{"version": "2026-04-08", "extends": ["dev.ucp.shopping.checkout", "dev.ucp.shopping.cart"]}],
  "dev.ucp.shopping.cart": [{"version": "2026-04-08"}],
  "dev.ucp.shopping.order": [{"version": "2026-04-08"}],
  "dev.ucp.shopping.catalog.search": [{"version": "2026-04-08"}],
  "dev.ucp.shopping.catalog.lookup": [{"version": "2026-04-08"}]},
 "payment_handlers": {}}}`

// agentProfiles serves agents' profiles on 127.0.0.1: /agent.json the one
// above, /agent-2026-08-25.json the same at release 2026-08-25, /old.json one of another UCP version, /broken.json no profile,
// /slow.json one that never answers in time. It counts the fetches of each.
type agentProfiles struct {
	*httptest.Server
	mu      sync.Mutex
	fetches map[string]int
}

func serveAgentProfiles(t *testing.T) *agentProfiles {
	a := &agentProfiles{fetches: map[string]int{}}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.fetches[r.URL.Path]++
		a.mu.Unlock()
		w.Header().Set("Cache-Control", "public, max-age=60")
		switch r.URL.Path {
		case "/agent.json":
			w.Write([]byte(agentProfileJSON))
		case "/agent-2026-08-25.json":
			w.Write([]byte(strings.ReplaceAll(agentProfileJSON, "2026-04-08", "2026-08-25")))
		case "/old.json":
			w.Write([]byte(strings.ReplaceAll(agentProfileJSON, "2026-04-08", "2026-01-11")))
		case "/broken.json":
			w.Write([]byte(`<html>not a profile</html>`))
		case "/slow.json":
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *agentProfiles) count(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fetches[path]
}

// connectUCP joins an MCP client to the shop's /ucp/mcp, checking every
// answer against the tool's outputSchema and UCP's schemas.
func connectUCP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	return connectEndpoint(t, url+"/ucp/mcp", checkUCPResults(t))
}
