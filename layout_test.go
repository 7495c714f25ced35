package shop_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// allowed is docs/architecture.md's table of who may import whom, for the shop's own
// packages. Beside it: the root package shop (errors, tool declarations, the
// demo merchant) and contract (the wire shapes of docs/buying.md), which
// anyone may import and which import no other of ours;
// migrations (embedded SQL); database (opens and migrates, for the wiring;
// the one transaction helper and row locks, for the packages that store);
// and database/dbtest, payments/stripetest (a Stripe emulator) and mcptest
// (the tests' MCP client, checking every tool result against its
// outputSchema), which only tests import. purchase and bench are MCP clients of a running shop: of
// its packages they import only money and the contract's shapes (and bench,
// purchase's reading of tool results). i18n is the catalogs of the shop's
// own pages and emails, which server, accounts and orders render.
var allowed = map[string][]string{
	"shop/cmd/shop":            {"*"},
	"shop/purchase":            {"shop/money"},
	"shop/bench":               {"shop/purchase", "shop/money"},
	"shop/server":              {"shop/widgets", "shop/accounts", "shop/checkout", "shop/orders", "shop/catalog", "shop/payments", "shop/money", "shop/i18n"},
	"shop/widgets":             {"shop/checkout", "shop/catalog", "shop/money"},
	"shop/acp":                 {"shop/checkout", "shop/orders", "shop/money", "shop/idempotency"},
	"shop/ucp":                 {"shop/checkout", "shop/catalog", "shop/orders", "shop/idempotency", "shop/webfetch"},
	"shop/checkout":            {"shop/orders", "shop/catalog", "shop/payments", "shop/money", "shop/database"},
	"shop/accounts":            {"shop/orders", "shop/payments", "shop/notify", "shop/database", "shop/webfetch", "shop/i18n"},
	"shop/orders":              {"shop/catalog", "shop/payments", "shop/notify", "shop/money", "shop/database", "shop/i18n"},
	"shop/catalog":             {"shop/money", "shop/database"},
	"shop/feed":                {"shop/catalog"},
	"shop/payments":            {"shop/money", "shop/database"},
	"shop/notify":              {"shop/database"},
	"shop/notify/smtptest":     {},
	"shop/metrics":             {},
	"shop/money":               {},
	"shop/i18n":                {},
	"shop":                     {},
	"shop/contract":            {},
	"shop/migrations":          {},
	"shop/database":            {"shop/migrations"},
	"shop/database/dbtest":     {"shop/database"},
	"shop/payments/stripetest": {"shop/payments"},
	"shop/idempotency":         {"shop/database"},
	"shop/mcptest":             {},
	"shop/webfetch":            {},
}

// external limits where some third-party modules may be used: the MCP SDK
// only at the edge and in the MCP clients, gorm only where data is stored,
// the HTML sanitiser only where imported descriptions are read.
var external = map[string][]string{
	"github.com/modelcontextprotocol/go-sdk": {"shop/server", "shop/cmd/shop", "shop/purchase", "shop/bench", "shop/mcptest"},
	"gorm.io/":                               {"shop/catalog", "shop/checkout", "shop/orders", "shop/payments", "shop/notify", "shop/database", "shop/database/dbtest", "shop/cmd/shop", "shop/idempotency", "shop/accounts"},
	"github.com/stripe/stripe-go":            {"shop/payments"},
	"github.com/wneessen/go-mail":            {"shop/notify"},
	"github.com/emersion/go-smtp":            {"shop/notify/smtptest"},
	"github.com/prometheus/":                 {"shop/metrics", "shop/cmd/shop"},
	"github.com/microcosm-cc/bluemonday":     {"shop/catalog"},
}

func TestLayout(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.ImportPath}}:{{join .Imports " "}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	direct := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		direct[pkg] = strings.Fields(imports)
	}
	var ours []string
	for pkg := range direct {
		if pkg == "shop" || strings.HasPrefix(pkg, "shop/") {
			ours = append(ours, pkg)
		}
	}
	sort.Strings(ours)
	if len(ours) < 6 {
		t.Fatalf("go list found only %v", ours)
	}
	for _, pkg := range ours {
		rules, known := allowed[pkg]
		if !known {
			t.Errorf("%s is not in docs/architecture.md's table of rooms; add it there and here", pkg)
			continue
		}
		for _, imp := range direct[pkg] {
			if imp == "shop" || imp == "shop/contract" || !(strings.HasPrefix(imp, "shop/")) {
				for prefix, users := range external {
					if strings.HasPrefix(imp, prefix) && !contains(users, pkg) {
						t.Errorf("%s imports %s, which only %v may use", pkg, imp, users)
					}
				}
				continue
			}
			if !contains(rules, "*") && !contains(rules, imp) {
				t.Errorf("%s imports %s: against docs/architecture.md (it may import %v)", pkg, imp, rules)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// homes are the tables that one package alone reads and writes, each with
// that package's directory (docs/architecture.md, "Tables stay home").
var homes = []struct{ table, home string }{
	{"payment_attempts", "checkout/"},
	{"stock_holds", "catalog/"},
}

// TestTablesStayHome: no production file outside a table's home names it
// in SQL (FROM, JOIN, INTO, UPDATE, TABLE) or as a Go string of its own
// (gorm's Table and TableName, database.Insert); tests, migrations and
// testdata may. Its home must still name it, so the pattern is not stale.
func TestTablesStayHome(t *testing.T) {
	files := sourceFiles(t)
	for _, h := range homes {
		use := tableUse(h.table)
		atHome := 0
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := useLines(use, string(data))
			if strings.HasPrefix(filepath.ToSlash(path), h.home) {
				atHome += len(lines)
				continue
			}
			for _, line := range lines {
				t.Errorf("%s:%d names table %s, which only %s reads and writes; use that package's Go API (docs/architecture.md)", path, line, h.table, h.home)
			}
		}
		if atHome == 0 {
			t.Errorf("no file of %s names table %s: is the pattern stale?", h.home, h.table)
		}
	}
}

// sourceFiles are the module's production Go files: not tests, nor under
// migrations, testdata or hidden directories.
func sourceFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (path == "migrations" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d Go files", len(files))
	}
	return files
}

// tableUse matches table after an SQL keyword, or as a whole Go string
// (with the struct tag key before it, if any, in group 1): the metric
// shop_payment_attempts_total or the JSON field "payment_attempts" is no use.
func tableUse(table string) *regexp.Regexp {
	name := regexp.QuoteMeta(table)
	return regexp.MustCompile(`(?i:\b(?:from|join|into|update|table))\s+["` + "`" + `]?` + name + `\b|(\w+:)?["` + "`" + `]` + name + `["` + "`" + `]`)
}

// useLines are the line numbers of src where use matches, but for struct
// tags (json:"payment_attempts" names a field of a tool's output).
func useLines(use *regexp.Regexp, src string) []int {
	var lines []int
	for _, m := range use.FindAllStringSubmatchIndex(src, -1) {
		if m[2] >= 0 {
			continue
		}
		lines = append(lines, 1+strings.Count(src[:m[0]], "\n"))
	}
	return lines
}
