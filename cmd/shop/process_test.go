package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"shop"
	"shop/catalog"
	"shop/migrations"
)

// buildShop builds the shop binary once per test binary run.
func buildShop(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shop")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestProcess runs the real binary as a merchant would: serve on a fresh
// SQLite file, answer MCP over HTTP, stop cleanly on SIGTERM; migrate and
// import from the command line.
func TestProcess(t *testing.T) {
	bin := buildShop(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "shop.db")

	t.Run("ServeAndSIGTERM", func(t *testing.T) {
		p := runShop(t, bin, db, nil)
		cmd, addr, startLine := p.cmd, p.addr, p.startLine
		for _, want := range []string{fmt.Sprintf("schema_version=%d", latestMigration(t)), "payments=", "database=" + db} {
			if !strings.Contains(startLine, want) {
				t.Errorf("start line %q lacks %q", startLine, want)
			}
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_products","arguments":{"query":"mug"}}}`
		req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rpc struct {
			Result struct {
				StructuredContent catalog.Page `json:"structuredContent"`
			} `json:"result"`
		}
		err = json.NewDecoder(resp.Body).Decode(&rpc)
		resp.Body.Close()
		if err != nil || rpc.Result.StructuredContent.Total < 3 {
			t.Fatalf("search over raw HTTP: %v %+v", err, rpc)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("exit after SIGTERM: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no exit 30s after SIGTERM")
		}
	})

	t.Run("ServeAndSIGINT", func(t *testing.T) {
		// Ctrl-C in a terminal: the same graceful shutdown as SIGTERM.
		p := runShop(t, bin, db, nil)
		resp, err := http.Get("http://" + p.addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz: %s", resp.Status)
		}
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("exit after SIGINT: %v; want status 0", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no exit 30s after SIGINT")
		}
	})

	t.Run("ErrBadPolicyNamesKey", func(t *testing.T) {
		demo, err := fs.ReadFile(shop.Demo, "policy.yaml")
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name   string
			edit   func(policy string) string
			wantIn string // in the output: the key, and what is wrong
		}{
			{"MissingLink", func(p string) string { return dropLine(t, p, "privacy_policy:") },
				"bad.yaml: links.privacy_policy: missing"},
			{"MissingCurrency", func(p string) string { return dropLine(t, p, "currency:") },
				"bad.yaml: currency: missing"},
			{"MalformedPrice", func(p string) string { return replaceOnce(t, p, "price: 500 ", `price: "4.99" `) },
				`bad.yaml: shipping.zones[0].rates[0].price: must be a whole number of minor units`},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				policy := filepath.Join(dir, "bad.yaml")
				if err := os.WriteFile(policy, []byte(tc.edit(string(demo))), 0o644); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "shop.db"), "--config", policy)
				cmd.Env = append(os.Environ(), "STRIPE_SECRET_KEY=", "SHOP_TEST_FAULT=")
				out, err := cmd.CombinedOutput()
				if ctx.Err() != nil {
					t.Fatalf("still running after 30s with a bad policy:\n%s", out)
				}
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
					t.Fatalf("exit %v with a bad policy, want a non-zero status:\n%s", err, out)
				}
				if !strings.Contains(string(out), tc.wantIn) {
					t.Errorf("output lacks %q:\n%s", tc.wantIn, out)
				}
				if strings.Contains(string(out), "listen=") {
					t.Errorf("the shop listened with a bad policy:\n%s", out)
				}
			})
		}
	})

	t.Run("Migrate", func(t *testing.T) {
		out, err := exec.Command(bin, "migrate", "--db", filepath.Join(dir, "other.db")).CombinedOutput()
		if err != nil || !strings.Contains(string(out), fmt.Sprintf("schema version %d", latestMigration(t))) {
			t.Fatalf("shop migrate: %v\n%s", err, out)
		}
	})

	t.Run("ImportWithProgress", func(t *testing.T) {
		file := filepath.Join(dir, "big.json")
		writeCatalog(t, file, 2500, "")
		out, err := exec.Command(bin, "catalog", "import", file, "--db", db).CombinedOutput()
		if err != nil {
			t.Fatalf("import: %v\n%s", err, out)
		}
		for _, want := range []string{"imported 500/2500 products (20%)", "imported 2500/2500 products (100%)", "imported 2500 products (2500 variants)"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("ErrImportNamesRecordAndField", func(t *testing.T) {
		file := filepath.Join(dir, "bad.json")
		writeCatalog(t, file, 3, `"price": -5`)
		out, err := exec.Command(bin, "catalog", "import", file, "--db", db).CombinedOutput()
		if err == nil {
			t.Fatalf("a bad file was imported:\n%s", out)
		}
		want := `products[0] (id "gen-0").variants[0].price: must be from 0`
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}

		// An error of decoding, as much as of validation.
		writeCatalog(t, file, 3, `"price": "12.50"`)
		out, err = exec.Command(bin, "catalog", "import", file, "--db", db).CombinedOutput()
		if err == nil {
			t.Fatalf("a bad file was imported:\n%s", out)
		}
		want = `bad.json: products[0] (id "gen-0").variants[0].price: send an integer number of minor units (1250 for 12.50), got a string`
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	})

	t.Run("ErrUnknownCommand", func(t *testing.T) {
		out, err := exec.Command(bin, "sell-everything").CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "Usage:") {
			t.Errorf("unknown command: %v\n%s", err, out)
		}
	})
}

// process is a shop binary serving on a port of its choosing.
type process struct {
	cmd       *exec.Cmd
	addr      string
	startLine string
	done      chan error // the process's exit
}

// runShop starts `shop serve` on db with extra environment and flags, and
// waits for its start line. The process is killed when the test ends.
func runShop(t *testing.T, bin, db string, env []string, flags ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, flags...)...)
	cmd.Env = append(append(os.Environ(), "STRIPE_SECRET_KEY=", "SHOP_TEST_FAULT=", "SHOP_SMTP_URL="), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	listen := regexp.MustCompile(`listen=http://(\S+)`)
	var logged []string
	for lines.Scan() {
		logged = append(logged, lines.Text())
		if m := listen.FindStringSubmatch(lines.Text()); m != nil {
			p.addr, p.startLine = m[1], lines.Text()
			break
		}
	}
	if p.addr == "" {
		t.Fatalf("no listen line in:\n%s", strings.Join(logged, "\n"))
	}
	go func() {
		for lines.Scan() {
		}
		p.done <- cmd.Wait()
	}()
	return p
}

// writeCatalog writes a catalog of n one-variant products; priceField, when
// set, replaces every variant's price field.
func writeCatalog(t *testing.T, path string, n int, priceField string) {
	t.Helper()
	if priceField == "" {
		priceField = `"price": 1250`
	}
	var sb strings.Builder
	sb.WriteString(`{"currency": "usd", "products": [`)
	for i := range n {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"id": "gen-%d", "title": "Generated mug %d", "category": "Kitchen", "description": "A mug.",
			"images": ["/static/products/enamel-camp-mug.svg"],
			"variants": [{"id": "gen-%d-default", "title": "Default", "options": {}, %s, "stock": 3}]}`, i, i, i, priceField)
	}
	sb.WriteString("]}")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropLine returns text without the first line that starts, after its
// indentation, with key.
func dropLine(t *testing.T, text, key string) string {
	t.Helper()
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), key) {
			return strings.Join(append(lines[:i:i], lines[i+1:]...), "")
		}
	}
	t.Fatalf("no line %q", key)
	return ""
}

// replaceOnce replaces the first old in text with new, which must be there.
func replaceOnce(t *testing.T, text, old, new string) string {
	t.Helper()
	if !strings.Contains(text, old) {
		t.Fatalf("no %q", old)
	}
	return strings.Replace(text, old, new, 1)
}

// latestMigration is the version of the newest migration file.
func latestMigration(t *testing.T) int {
	t.Helper()
	files, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	var v int
	if _, err := fmt.Sscanf(files[len(files)-1], "%05d_", &v); err != nil {
		t.Fatalf("migration %s: %v", files[len(files)-1], err)
	}
	return v
}
