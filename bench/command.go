package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
)

// Env is what `shop bench` takes from the program that runs it.
type Env struct {
	// Stdout receives the report (and the floor's listen line); Stderr the
	// progress of a run.
	Stdout, Stderr io.Writer
	Logger         *slog.Logger
	// Version is the program's, in the MCP initialize requests and the
	// floor's answers.
	Version string
	// MaxBodyBytes is the shop's limit of a request body (FloorServer's).
	MaxBodyBytes int64
	// TuneGC, when set, gives the floor's server process the
	// garbage-collector settings of `shop serve`.
	TuneGC func()
	// Usage reports a command line the command cannot take (problem says
	// why) and returns the error Command answers.
	Usage func(problem string) error
}

// Command is `shop bench`: its flags into Options, the run against the shop
// and the floor (FloorProcess), and the report on env.Stdout, as text or,
// with --json, as JSON; and its two hidden modes, the floor's server
// process (--serve-noop [--addr ADDR]) and the catalog generator
// (--gen-catalog N FILE). A command line it cannot take answers
// env.Usage's error.
func Command(ctx context.Context, args []string, env Env) error {
	o := Options{Version: env.Version}
	fs := flag.NewFlagSet("shop bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.URL, "url", DefaultURL, "the shop's MCP endpoint, or its replicas' separated by commas")
	fs.IntVar(&o.Clients, "clients", DefaultClients, "concurrent MCP clients")
	fs.DurationVar(&o.Duration, "duration", DefaultDuration, "measured time of each phase (at most 60s)")
	fs.DurationVar(&o.Warmup, "warmup", DefaultWarmup, "unmeasured load before each phase")
	fs.StringVar(&o.Scenario, "scenario", ScenarioSearch, "search, purchase, complete, noop or all")
	jsonOut := fs.Bool("json", false, "print a JSON report")
	fs.Func("pid", "the shop's process id, to read its CPU time and RSS (the replicas', separated by commas)", func(v string) error {
		pids, err := parsePIDs(v)
		if err == nil {
			o.PID, o.OtherPIDs = pids[0], pids[1:]
		}
		return err
	})
	fs.StringVar(&o.Pprof, "pprof", "", "the shop's pprof base URL, to count its goroutines")
	fs.IntVar(&o.Items, "items", DefaultItems, "lines per purchase")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the query and cart choices")
	fs.BoolVar(&o.NoFloor, "no-floor", false, "skip the no-op floor")
	// Hidden modes: the floor's server process (answering --answers when
	// given: the echo floor), and the catalog generator.
	serveNoop := fs.Bool("serve-noop", false, "")
	answers := fs.String("answers", "", "")
	addr := fs.String("addr", "127.0.0.1:0", "")
	genCatalog := fs.Int("gen-catalog", 0, "")
	bad := func(format string, a ...any) error { return env.Usage(fmt.Sprintf(format, a...)) }
	if err := fs.Parse(args); err != nil {
		return bad("%v", err)
	}
	if *serveNoop {
		if env.TuneGC != nil {
			env.TuneGC()
		}
		f := FloorServer{Addr: *addr, Out: env.Stdout, Logger: env.Logger, MaxBodyBytes: env.MaxBodyBytes, Version: env.Version}
		if *answers != "" {
			var err error
			if f.Answers, err = readAnswers(*answers); err != nil {
				return err
			}
		}
		return f.Serve(ctx)
	}
	if *genCatalog > 0 {
		if fs.NArg() != 1 {
			return bad("--gen-catalog N FILE: name the file to write")
		}
		if err := GenCatalog(fs.Arg(0), *genCatalog, o.Seed); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "wrote %d products to %s\n", *genCatalog, fs.Arg(0))
		return nil
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if err := o.Validate(); err != nil {
		return bad("%v", err)
	}
	return runAndReport(ctx, o, env, *jsonOut)
}

// runAndReport runs the load and prints its report.
func runAndReport(ctx context.Context, o Options, env Env, jsonOut bool) error {
	rep, err := Run(ctx, o, FloorProcess{}, env.Stderr)
	if err != nil {
		return err
	}
	if !jsonOut {
		rep.Print(env.Stdout)
		return nil
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("bench: write the report: %w", err)
	}
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
