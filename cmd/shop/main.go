// Command shop runs a merchant's shop as an MCP server: buyers' hosts
// (ChatGPT, Claude, …) search the catalog and check out through its tools.
//
// Usage:
//
//	shop [serve] [--addr 127.0.0.1:8000] [--db shop.db|postgres://…] [--config policy.yaml]
//	shop stdio    [--db …] [--config …]     buyer tools over stdio
//	shop admin    [--db …] [--config …]     staff tools over stdio (owner role)
//	shop migrate  [--db …]                  apply migrations, print the schema version
//	shop catalog import FILE [--db …] [--config …]   the shop's JSON, or a Shopify or WooCommerce product CSV export
//	shop feed export [--format jsonl|json] [--out FILE] [--db …] [--config …]
//	shop purchase [--url http://127.0.0.1:8000/mcp] [--items N] [--promo CODE] [--decline] [--json] [--timeout 60s] [--address JSON] [--live]
//	                                        a whole test-mode purchase against a running shop
//
// Secrets come from the environment (STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET,
// SHOP_ADMIN_TOKENS, SHOP_RECEIPT_KEY, SHOP_SMTP_URL); SHOP_PUBLIC_URL is the shop's base URL.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Logger: logger}
	if err := m.Run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}

// errUsage reports a command line that could not be understood; the usage
// has already been printed.
var errUsage = errors.New("usage")

// Main is the program, with its surroundings injected so that tests can run
// it on a temporary database and port.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Logger         *slog.Logger
	// Started, when set, is called by serve with the address it listens on.
	Started func(addr string)
}

const usage = `Usage:
  shop [serve] [flags]            serve the shop over HTTP (MCP at /mcp)
  shop stdio [flags]              serve the buyer tools over stdio
  shop admin [flags]              serve the staff's tools over stdio, as the owner
  shop migrate [flags]            apply database migrations and print the schema version
  shop catalog import FILE [flags]
                                  import products from the shop's JSON catalog file, or from
                                  a Shopify or WooCommerce product CSV export
  shop feed export [--format jsonl|json] [--out FILE] [flags]
                                  write the catalog as an ACP product feed (default JSON Lines,
                                  to stdout); shop serve serves it at /feeds/products.jsonl
  shop purchase [purchase flags]  make a whole test-mode purchase against a running shop,
                                  as a host does, and check every answer; exit 0 if all held
  shop bench [bench flags]        load a running shop and a no-op floor; see BENCHMARKS.md

Flags:
  --addr ADDR     listen address (serve; default 127.0.0.1:8000)
  --db DSN        SQLite file path or postgres:// URL (default shop.db)
  --config FILE   merchant policy YAML (default: the built-in demo merchant)
  --session-ttl D how long a checkout session holds its stock after its last change (default 30m)
  --metrics-addr A where serve answers /metrics (default 127.0.0.1 and the port after --addr's; off: none)

Purchase flags:
  --url URL       the shop's MCP endpoint (default http://127.0.0.1:8000/mcp)
  --items N       lines to buy, 1 to 20 (default 1)
  --promo CODE    apply a promotion code
  --decline       pay with a declined card first, then with a good one
  --link          pay on create_payment_link's page (the sandbox's), as in a host without a payment sheet
  --json          print a JSON report instead of a line per step
  --timeout D     time limit of the whole run (default 60s)
  --address JSON  ship there, e.g. '{"name":"A B","line_one":"1 Main St","city":"Albany","state":"NY","country":"US","postal_code":"12207"}'
                  (default: an address in San Francisco)
  --live          run against a live-mode shop (it stops at payment: no money moves)

Bench flags:
  --url URL       the shop's MCP endpoint (default http://127.0.0.1:8000/mcp); start it with --rate-limit -1
  --clients N     concurrent MCP clients (default 8)
  --duration D    measured time of each phase, at most 60s (default 20s); --warmup D before (default 3s)
  --scenario S    search, purchase, complete, noop or all (default search); the noop floor runs every time
  --pid PID       the shop's process: report its CPU time and RSS; --pprof URL: its goroutines
  --json          print a JSON report

Environment:
  SHOP_PUBLIC_URL        the shop's base URL (default http://ADDR)
  STRIPE_SECRET_KEY      sk_test_… for Stripe test mode; unset: sandbox payments
  SHOP_ADMIN_TOKENS      role:token pairs for /admin/mcp (owner:…,viewer:…)
  STRIPE_WEBHOOK_SECRET, SHOP_RECEIPT_KEY, STRIPE_API_BASE
  STRIPE_SPT_PARAM, STRIPE_SPT_VERSION   where Stripe takes shared payment tokens (its preview API)
  SHOP_PPROF             a loopback host:port serving Go's profiles (serve)
  GOGC, GOMEMLIMIT       the garbage collector (serve default: GOGC=400, 512 MiB soft limit)
  (purchase: with STRIPE_SECRET_KEY=sk_test_…, it pays with Stripe test shared payment tokens)
`

// Run runs the subcommand named by args.
func (m *Main) Run(ctx context.Context, args []string) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return m.serve(ctx, args)
	case "stdio":
		return m.stdio(ctx, args)
	case "admin":
		return m.adminStdio(ctx, args)
	case "migrate":
		return m.migrate(ctx, args)
	case "purchase":
		return m.purchase(ctx, args)
	case "bench":
		return m.bench(ctx, args)
	case "catalog":
		if len(args) == 0 || args[0] != "import" {
			fmt.Fprint(m.Stderr, "shop catalog: the subcommand is `import FILE`\n\n"+usage)
			return errUsage
		}
		return m.importCatalog(ctx, args[1:])
	case "feed":
		if len(args) == 0 || args[0] != "export" {
			fmt.Fprint(m.Stderr, "shop feed: the subcommand is `export [--format jsonl|json] [--out FILE]`\n\n"+usage)
			return errUsage
		}
		return m.feedExport(ctx, args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(m.Stdout, usage)
		return nil
	default:
		fmt.Fprintf(m.Stderr, "shop: unknown command %q\n\n%s", cmd, usage)
		return errUsage
	}
}
