// Command shop runs a merchant's shop as an MCP server: buyers' hosts
// (ChatGPT, Claude, …) search the catalog and check out through its tools,
// and staff run orders through the admin tools. `shop help` prints every
// subcommand and flag (usage.txt); secrets come from the environment
// (README.md, "Commands and configuration").
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"shop/bench"
	"shop/payments"
	"shop/purchase"
	"shop/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	level, err := logLevel(os.Getenv("SHOP_LOG_LEVEL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Logger: logger}
	if err := m.Run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "shop:", err)
		os.Exit(1)
	}
}

// logLevel is the level of the lines the shop logs, as SHOP_LOG_LEVEL
// names it (debug, info, warn or error, in any case); info when unset.
func logLevel(name string) (slog.Level, error) {
	var l slog.Level
	if name == "" {
		return slog.LevelInfo, nil
	}
	if err := l.UnmarshalText([]byte(name)); err != nil {
		return 0, fmt.Errorf("SHOP_LOG_LEVEL %q: send debug, info, warn or error", name)
	}
	return l, nil
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

// usage is the text of `shop help`.
//
//go:embed usage.txt
var usage string

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
		return purchase.Command(ctx, args, m.purchaseEnv())
	case "bench":
		return bench.Command(ctx, args, m.benchEnv())
	case "catalog":
		if len(args) == 0 || args[0] != "import" {
			return m.usageError("catalog", "the subcommand is `import FILE`")
		}
		return m.importCatalog(ctx, args[1:])
	case "feed":
		if len(args) == 0 || args[0] != "export" {
			return m.usageError("feed", "the subcommand is `export [--format jsonl|json] [--out FILE]`")
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

// usageError prints, for a command line the named subcommand cannot take,
// what is wrong with it and the usage; it returns errUsage.
func (m *Main) usageError(cmd, problem string) error {
	fmt.Fprintf(m.Stderr, "shop %s: %s\n\n%s", cmd, problem, usage)
	return errUsage
}

// purchaseEnv is what `shop purchase` takes from the program.
func (m *Main) purchaseEnv() purchase.Env {
	return purchase.Env{Stdout: m.Stdout, Getenv: m.Getenv, Version: version(), SPTVersion: payments.DefaultSPTVersion,
		Usage: func(problem string) error { return m.usageError("purchase", problem) }}
}

// benchEnv is what `shop bench` takes from the program.
func (m *Main) benchEnv() bench.Env {
	return bench.Env{Stdout: m.Stdout, Stderr: m.Stderr, Logger: m.Logger, Version: version(), MaxBodyBytes: server.MaxMCPBodyBytes,
		TuneGC: func() { server.TuneGC(m.Getenv, m.Logger) },
		Usage:  func(problem string) error { return m.usageError("bench", problem) }}
}
