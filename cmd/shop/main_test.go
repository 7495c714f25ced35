package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/database/dbtest"
	"shop/mcptest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// running is a `shop serve` started by a test on a temporary database and port.
type running struct {
	url    string
	logs   *lockedBuffer
	cancel context.CancelFunc
	done   chan error
}

func startShop(t *testing.T, dsn string, env map[string]string, flags ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	logs := &lockedBuffer{}
	m := &Main{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: logs,
		Getenv:  func(k string) string { return env[k] },
		Logger:  slog.New(slog.NewTextHandler(logs, nil)),
		Started: func(addr string) { addrc <- addr },
	}
	r := &running{logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- m.Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dsn}, flags...))
	}()
	select {
	case addr := <-addrc:
		r.url = "http://" + addr
	case err := <-r.done:
		cancel()
		t.Fatalf("shop serve stopped: %v\n%s", err, logs.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("shop serve did not start in 30s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("shop serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("shop serve did not stop in 30s")
		}
	})
	return r
}

func connect(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	return connectEndpoint(t, url+"/mcp")
}

// connectEndpoint joins an MCP client (mcptest's: every tool result checked
// against its outputSchema), with further sending middleware, to an MCP
// endpoint of the shop (its whole URL).
func connectEndpoint(t *testing.T, endpoint string, mw ...mcp.Middleware) *mcp.ClientSession {
	t.Helper()
	client := mcptest.NewClient(t, "shop-test", nil)
	client.AddSendingMiddleware(mw...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func call(t *testing.T, s *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return v
}

// text is a tool result's text content (what shop purchase reads too).
var text = resultText

type summary struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Price struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
		Display  string `json:"display"`
	} `json:"price"`
	ImageURL string `json:"image_url"`
}

type productResult struct {
	Product struct {
		ID       string `json:"id"`
		Variants []struct {
			ID        string `json:"id"`
			Available int64  `json:"available"`
		} `json:"variants"`
	} `json:"product"`
}

type searchResult struct {
	Products   []summary `json:"products"`
	NextCursor string    `json:"next_cursor"`
	Total      int64     `json:"total"`
}

func TestServe(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			shop := startShop(t, dbtest.DSN(t, d), map[string]string{"SHOP_WIDGET_DOMAIN": testWidgetDomain})
			s := connect(t, shop.url)

			t.Run("ToolsList", func(t *testing.T) {
				res, err := s.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.MarshalIndent(res.Tools, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				golden(t, "buyer-tools.json", append(got, '\n'))
			})
			t.Run("ResourcesList", func(t *testing.T) {
				res, err := s.ListResources(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.MarshalIndent(res.Resources, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				// The shop's origin has the port the test got.
				golden(t, "buyer-resources.json", append(bytes.ReplaceAll(got, []byte(shop.url), []byte("http://127.0.0.1:PORT")), '\n'))
			})

			t.Run("SearchMug", func(t *testing.T) {
				res := call(t, s, "search_products", map[string]any{"query": "mug"})
				if res.IsError {
					t.Fatal(text(res))
				}
				page := structured[searchResult](t, res)
				if page.Total < 3 || !strings.Contains(page.Products[0].Title, "Mug") {
					t.Fatalf("search mug: %+v", page)
				}
				p := page.Products[0]
				if p.Price.Currency != "usd" || p.Price.Amount <= 0 || !strings.HasPrefix(p.Price.Display, "$") {
					t.Errorf("price %+v", p.Price)
				}
				if !strings.Contains(text(res), "Mug") {
					t.Errorf("text %q does not list the mugs", text(res))
				}
				// The image is served by the shop itself.
				img, err := http.Get(p.ImageURL)
				if err != nil {
					t.Fatal(err)
				}
				img.Body.Close()
				if img.StatusCode != 200 || img.Header.Get("Content-Type") != "image/svg+xml" {
					t.Errorf("GET %s: %s %s", p.ImageURL, img.Status, img.Header.Get("Content-Type"))
				}
			})

			t.Run("GetProduct", func(t *testing.T) {
				res := call(t, s, "get_product", map[string]any{"product_id": "enamel-camp-mug"})
				if res.IsError {
					t.Fatal(text(res))
				}
				out := structured[productResult](t, res)
				if out.Product.ID != "enamel-camp-mug" || len(out.Product.Variants) == 0 {
					t.Errorf("got %+v", out)
				}
			})

			t.Run("BadInput", func(t *testing.T) {
				cases := []struct {
					name, tool string
					args       any
					param      string
				}{
					{"ErrNegativeLimit", "search_products", map[string]any{"limit": -5}, "$.limit"},
					{"ErrZeroLimit", "search_products", map[string]any{"limit": 0}, "$.limit"},
					{"ErrHugeLimit", "search_products", map[string]any{"limit": 1e12}, "$.limit"},
					{"ErrHugeQuery", "search_products", map[string]any{"query": strings.Repeat("x", 100<<10)}, "$.query"},
					{"ErrGarbageCursor", "search_products", map[string]any{"cursor": "%%%garbage%%%"}, "$.cursor"},
					{"ErrLimitNotANumber", "search_products", map[string]any{"limit": "ten"}, "$.limit"},
					{"ErrQueryNotAString", "search_products", map[string]any{"query": 42}, "$.query"},
					{"ErrInStockNotABool", "search_products", map[string]any{"in_stock_only": "yes"}, "$.in_stock_only"},
					{"ErrUnknownProduct", "get_product", map[string]any{"product_id": "no-such-thing"}, "$.product_id"},
					{"ErrMissingProductID", "get_product", map[string]any{}, "$.product_id"},
					{"ErrProductIDNotAString", "get_product", map[string]any{"product_id": []int{1}}, "$.product_id"},
				}
				for _, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						res := call(t, s, tc.tool, tc.args)
						if !res.IsError {
							t.Fatalf("no error; got %s", text(res))
						}
						msg := text(res)
						if !strings.HasPrefix(msg, tc.param+": ") || len(msg) < len(tc.param)+15 {
							t.Errorf("message %q does not name %s and what to send", msg, tc.param)
						}
						if strings.Contains(strings.ToLower(msg), "sql") {
							t.Errorf("message %q leaks storage details", msg)
						}
					})
				}
				// The server is still up and answering.
				if res := call(t, s, "search_products", map[string]any{"query": "mug"}); res.IsError {
					t.Fatalf("after bad input: %s", text(res))
				}
			})

			t.Run("Health", func(t *testing.T) {
				for _, path := range []string{"/healthz", "/readyz"} {
					resp, err := http.Get(shop.url + path)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != 200 {
						t.Errorf("GET %s: %s", path, resp.Status)
					}
				}
			})
		})
	}
}

// golden compares got with testdata/golden/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/shop -run %s -update to create it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); if the change is intended, run with -update:\n%s", path, diff)
	}
}
