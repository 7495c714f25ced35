package shop_test

import (
	"os/exec"
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
