package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"shop/bench"
	"shop/server"
)

// bench is `shop bench`: its flags into bench.Options, the run against the
// shop and the floor, and the report; and its two hidden modes, the floor's
// server process (--serve-noop) and the catalog generator (--gen-catalog N
// FILE).
func (m *Main) bench(ctx context.Context, args []string) error {
	o := bench.Options{Version: version()}
	fs := flag.NewFlagSet("shop bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.URL, "url", bench.DefaultURL, "the shop's MCP endpoint, or its replicas' separated by commas")
	fs.IntVar(&o.Clients, "clients", bench.DefaultClients, "concurrent MCP clients")
	fs.DurationVar(&o.Duration, "duration", bench.DefaultDuration, "measured time of each phase (at most 60s)")
	fs.DurationVar(&o.Warmup, "warmup", bench.DefaultWarmup, "unmeasured load before each phase")
	fs.StringVar(&o.Scenario, "scenario", bench.ScenarioSearch, "search, purchase, complete, noop or all")
	jsonOut := fs.Bool("json", false, "print a JSON report")
	fs.Func("pid", "the shop's process id, to read its CPU time and RSS (the replicas', separated by commas)", func(v string) error {
		pids, err := parsePIDs(v)
		if err == nil {
			o.PID, o.OtherPIDs = pids[0], pids[1:]
		}
		return err
	})
	fs.StringVar(&o.Pprof, "pprof", "", "the shop's pprof base URL, to count its goroutines")
	fs.IntVar(&o.Items, "items", bench.DefaultItems, "lines per purchase")
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
		// The floor runs with the garbage-collector settings `shop serve` takes.
		tuneGC(m.Getenv, m.Logger)
		return bench.FloorServer{Addr: *addr, Out: m.Stdout, Logger: m.Logger, MaxBodyBytes: server.MaxBodyBytes, Version: version()}.Serve(ctx)
	}
	if *genCatalog > 0 {
		if fs.NArg() != 1 {
			return bad("--gen-catalog N FILE: name the file to write")
		}
		return m.genCatalog(*genCatalog, o.Seed, fs.Arg(0))
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if err := o.Validate(); err != nil {
		return bad("%v", err)
	}
	rep, err := bench.Run(ctx, o, bench.FloorProcess{}, m.Stderr)
	if err != nil {
		return err
	}
	if !*jsonOut {
		rep.Print(m.Stdout)
		return nil
	}
	enc := json.NewEncoder(m.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("bench: write the report: %w", err)
	}
	return nil
}

// genCatalog is `shop bench --gen-catalog N FILE`: a catalog of n generated
// products in the import format, the same file for the same n and seed.
func (m *Main) genCatalog(n int, seed uint64, path string) error {
	if err := bench.GenCatalog(path, n, seed); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "wrote %d products to %s\n", n, path)
	return nil
}

// parsePIDs reads --pid: process ids separated by commas.
func parsePIDs(v string) ([]int, error) {
	var pids []int
	for f := range strings.SplitSeq(v, ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("%q is not a process id: send the shop's (or its replicas', separated by commas)", f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}
