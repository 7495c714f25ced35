package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"shop/purchase"
)

// `shop bench` loads a running shop with N concurrent MCP clients over
// streamable HTTP, each with its own MCP session, for a bounded time, and
// measures the same load against a no-op go-sdk server it starts itself (the
// framework floor), so that every report carries the floor of its own run.
// The scenarios are in bench_load.go, the floor in bench_floor.go, the
// server's CPU and memory readings in bench_proc.go, the report in
// bench_report.go and the catalog generator in bench_catalog.go.

// Defaults and bounds of `shop bench`.
const (
	DefaultBenchClients  = 8
	DefaultBenchDuration = 20 * time.Second
	DefaultBenchWarmup   = 3 * time.Second
	DefaultBenchItems    = 3
	maxBenchDuration     = 60 * time.Second
	maxBenchWarmup       = 30 * time.Second
	maxBenchClients      = 256
	benchProgressEvery   = 5 * time.Second
)

// Scenarios of `shop bench`.
const (
	scenarioNoop     = "noop"
	scenarioSearch   = "search"
	scenarioPurchase = "purchase"
	scenarioComplete = "complete"
	scenarioAll      = "all"
)

// benchOptions are the flags of `shop bench`.
type benchOptions struct {
	URL      string
	Clients  int
	Duration time.Duration
	Warmup   time.Duration
	Scenario string
	JSON     bool
	// PID is the shop's process, whose CPU time and RSS the bench reads
	// from /proc; 0 reads nothing.
	PID int
	// Pprof is the shop's net/http/pprof base URL; when set, the bench
	// reads the shop's goroutine count before and after each phase.
	Pprof string
	// Items is the number of lines of each purchase.
	Items int
	// Seed makes the query and cart choices reproducible.
	Seed uint64
	// NoFloor skips the floor (for a run whose floor is known); the report
	// then carries no ratios.
	NoFloor bool
}

// scenarios is the list of scenarios a --scenario value runs, floor excluded.
func (o benchOptions) scenarios() []string {
	switch o.Scenario {
	case scenarioAll:
		return []string{scenarioSearch, scenarioPurchase, scenarioComplete}
	case scenarioNoop:
		return nil
	}
	return []string{o.Scenario}
}

func (m *Main) bench(ctx context.Context, args []string) error {
	o := benchOptions{}
	fs := flag.NewFlagSet("shop bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.URL, "url", purchase.DefaultURL, "the shop's MCP endpoint")
	fs.IntVar(&o.Clients, "clients", DefaultBenchClients, "concurrent MCP clients")
	fs.DurationVar(&o.Duration, "duration", DefaultBenchDuration, "measured time of each phase (at most 60s)")
	fs.DurationVar(&o.Warmup, "warmup", DefaultBenchWarmup, "unmeasured load before each phase")
	fs.StringVar(&o.Scenario, "scenario", scenarioSearch, "search, purchase, complete, noop or all")
	fs.BoolVar(&o.JSON, "json", false, "print a JSON report")
	fs.IntVar(&o.PID, "pid", 0, "the shop's process id, to read its CPU time and RSS")
	fs.StringVar(&o.Pprof, "pprof", "", "the shop's pprof base URL, to count its goroutines")
	fs.IntVar(&o.Items, "items", DefaultBenchItems, "lines per purchase")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the query and cart choices")
	fs.BoolVar(&o.NoFloor, "no-floor", false, "skip the no-op floor")
	// Hidden modes: the floor's server process, and the catalog generator.
	serveNoop := fs.Bool("serve-noop", false, "")
	addr := fs.String("addr", "127.0.0.1:0", "")
	genCatalog := fs.Int("gen-catalog", 0, "")
	bad := func(format string, a ...any) error {
		fmt.Fprintf(m.Stderr, "shop bench: "+format+"\n\n%s", append(a, usage)...)
		return errUsage
	}
	if err := fs.Parse(args); err != nil {
		return bad("%v", err)
	}
	if *serveNoop {
		return m.serveNoop(ctx, *addr)
	}
	if *genCatalog > 0 {
		if fs.NArg() != 1 {
			return bad("--gen-catalog N FILE: name the file to write")
		}
		return m.genCatalog(*genCatalog, o.Seed, fs.Arg(0))
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected argument %q", fs.Arg(0))
	case o.Clients < 1 || o.Clients > maxBenchClients:
		return bad("--clients %d: send 1 to %d", o.Clients, maxBenchClients)
	case o.Duration <= 0 || o.Duration > maxBenchDuration:
		return bad("--duration %s: send a duration up to %s", o.Duration, maxBenchDuration)
	case o.Warmup < 0 || o.Warmup > maxBenchWarmup:
		return bad("--warmup %s: send 0 to %s", o.Warmup, maxBenchWarmup)
	case o.Items < 1 || o.Items > purchase.MaxItems:
		return bad("--items %d: send 1 to %d", o.Items, purchase.MaxItems)
	case o.PID < 0:
		return bad("--pid %d: send the shop's process id", o.PID)
	case !strings.HasPrefix(o.URL, "http://") && !strings.HasPrefix(o.URL, "https://"):
		return bad("--url %q: send the shop's MCP endpoint, such as %s", o.URL, purchase.DefaultURL)
	}
	switch o.Scenario {
	case scenarioNoop, scenarioSearch, scenarioPurchase, scenarioComplete, scenarioAll:
	default:
		return bad("--scenario %q: send search, purchase, complete, noop or all", o.Scenario)
	}
	if o.Scenario == scenarioNoop && o.NoFloor {
		return bad("--scenario noop measures the floor: drop --no-floor")
	}
	var progress io.Writer = m.Stderr
	rep, err := runBench(ctx, o, &floorProcess{}, progress)
	if err != nil {
		return err
	}
	if o.JSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("bench: write the report: %w", err)
		}
	} else {
		rep.print(m.Stdout)
	}
	return nil
}

// floorStarter starts the floor's server and says where it listens; the
// bench starts it as a child process (floorProcess), so that its CPU time is
// read from /proc like the shop's.
type floorStarter interface {
	start(ctx context.Context) (url string, pid int, stop func(), err error)
}

// runBench runs the floor, then each scenario, and returns the report.
// Progress lines go to progress.
func runBench(ctx context.Context, o benchOptions, floor floorStarter, progress io.Writer) (*BenchReport, error) {
	rep := &BenchReport{
		URL: o.URL, Scenario: o.Scenario, Clients: o.Clients,
		Duration: o.Duration.String(), Warmup: o.Warmup.String(),
		Started: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), ShopPID: o.PID, Seed: o.Seed,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rep.Module = bi.Main.Path
	}
	if !o.NoFloor {
		url, pid, stop, err := floor.start(ctx)
		if err != nil {
			return nil, fmt.Errorf("bench: start the floor: %w", err)
		}
		phase, err := runPhase(ctx, o, scenarioNoop, url, pid, "", progress)
		stop()
		if err != nil {
			return nil, err
		}
		rep.Floor = phase
	}
	for _, sc := range o.scenarios() {
		phase, err := runPhase(ctx, o, sc, o.URL, o.PID, o.Pprof, progress)
		if err != nil {
			return nil, err
		}
		phase.ratios(rep.Floor)
		rep.Phases = append(rep.Phases, phase)
	}
	return rep, nil
}

// errNoWork is a scenario that found nothing to do in the shop (no product,
// no stock).
var errNoWork = errors.New("bench: nothing to run against")
