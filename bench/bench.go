// Package bench is `shop bench`: it loads a running shop with N concurrent
// MCP clients over streamable HTTP, each with its own MCP session, for a
// bounded time, and measures the same load against a no-op go-sdk server it
// starts itself (the framework floor), so that every report carries the
// floor of its own run. It is an MCP client and nothing more: it knows the
// shop only by its answers and imports none of its packages.
//
// How a phase runs is in load.go and phase.go, the scenarios in
// search.go and scenarios.go, the floor in floor.go, the server's CPU and memory readings
// in proc.go, the report in report.go, the catalog generator in
// catalog.go and the command line (Command) in command.go.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Defaults and bounds of `shop bench`.
const (
	DefaultURL         = "http://127.0.0.1:8000/mcp"
	DefaultClients     = 8
	DefaultDuration    = 20 * time.Second
	DefaultWarmup      = 3 * time.Second
	DefaultItems       = 3
	MaxDuration        = 60 * time.Second
	MaxWarmup          = 30 * time.Second
	MaxClients         = 256
	MaxItems           = 20
	benchProgressEvery = 5 * time.Second
)

// Scenarios of `shop bench`.
const (
	ScenarioNoop = "noop"
	// ScenarioFloorFlow is the floor's three-call flow (three no-op calls in
	// a row per flow), the purchase flow's floor: it runs on the floor when
	// a purchase does.
	ScenarioFloorFlow = "noop-flow"
	ScenarioSearch    = "search"
	ScenarioPurchase  = "purchase"
	ScenarioComplete  = "complete"
	ScenarioAll       = "all"
)

// Options are the flags of `shop bench`.
type Options struct {
	// URL is the shop's MCP endpoint, or several replicas' endpoints
	// separated by commas: the clients take them in turn (client i the
	// (i mod n)-th), so that the replicas are loaded together.
	URL      string
	Clients  int
	Duration time.Duration
	Warmup   time.Duration
	Scenario string
	// PID is the shop's process, whose CPU time and RSS the bench reads
	// from /proc; 0 reads nothing. OtherPIDs are the other replicas'
	// processes: the server CPU reported is the sum over all of them, the
	// RSS PID's.
	PID       int
	OtherPIDs []int
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
	// Version is the clients' version in their MCP initialize requests.
	Version string
}

// scenarios is the list of scenarios a --scenario value runs, floor excluded.
func (o Options) scenarios() []string {
	switch o.Scenario {
	case ScenarioAll:
		return []string{ScenarioSearch, ScenarioPurchase, ScenarioComplete}
	case ScenarioNoop:
		return nil
	}
	return []string{o.Scenario}
}

// Validate checks the options a command line gave, saying what to send
// instead.
func (o Options) Validate() error {
	switch {
	case o.Clients < 1 || o.Clients > MaxClients:
		return fmt.Errorf("--clients %d: send 1 to %d", o.Clients, MaxClients)
	case o.Duration <= 0 || o.Duration > MaxDuration:
		return fmt.Errorf("--duration %s: send a duration up to %s", o.Duration, MaxDuration)
	case o.Warmup < 0 || o.Warmup > MaxWarmup:
		return fmt.Errorf("--warmup %s: send 0 to %s", o.Warmup, MaxWarmup)
	case o.Items < 1 || o.Items > MaxItems:
		return fmt.Errorf("--items %d: send 1 to %d", o.Items, MaxItems)
	case o.PID < 0 || slices.ContainsFunc(o.OtherPIDs, func(p int) bool { return p <= 0 }):
		return fmt.Errorf("--pid %d: send the shop's process id (or the replicas', separated by commas)", o.PID)
	}
	for _, u := range o.urls() {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("--url %q: send the shop's MCP endpoint, such as %s (or the replicas', separated by commas)", u, DefaultURL)
		}
	}
	switch o.Scenario {
	case ScenarioNoop, ScenarioSearch, ScenarioPurchase, ScenarioComplete, ScenarioAll:
	default:
		return fmt.Errorf("--scenario %q: send search, purchase, complete, noop or all", o.Scenario)
	}
	if o.Scenario == ScenarioNoop && o.NoFloor {
		return errors.New("--scenario noop measures the floor: drop --no-floor")
	}
	return nil
}

// urls are the endpoints o.URL names.
func (o Options) urls() []string { return strings.Split(o.URL, ",") }

// pids are the shop's processes o names, nil when none.
func (o Options) pids() []int {
	if o.PID == 0 {
		return nil
	}
	return append([]int{o.PID}, o.OtherPIDs...)
}

// wantsFloorFlow reports whether a scenario of the run counts flows of
// three calls, whose floor is the floor's three-call flow.
func (o Options) wantsFloorFlow() bool {
	return slices.Contains(o.scenarios(), ScenarioPurchase)
}

// Floor starts the floor's server and says where it listens; the bench
// starts it as a child process (FloorProcess), so that its CPU time is read
// from /proc like the shop's. answers, when not "", is a file of answers for
// its tool to give (the echo floor: see echo.go).
type Floor interface {
	Start(ctx context.Context, answers string) (url string, pid int, stop func(), err error)
}

// Run runs the floor, then each scenario, each followed by its echo floor
// (unless o.NoFloor), and returns the report.
// Progress lines go to progress.
func Run(ctx context.Context, o Options, floor Floor, progress io.Writer) (*Report, error) {
	rep := &Report{
		URL: o.URL, Scenario: o.Scenario, Clients: o.Clients,
		Duration: o.Duration.String(), Warmup: o.Warmup.String(),
		Started: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), ShopPID: o.PID, Seed: o.Seed,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rep.Module = bi.Main.Path
	}
	if !o.NoFloor {
		url, pid, stop, err := floor.Start(ctx, "")
		if err != nil {
			return nil, fmt.Errorf("bench: start the floor: %w", err)
		}
		err = rep.runFloor(ctx, o, url, pid, progress)
		stop()
		if err != nil {
			return nil, err
		}
	}
	for _, sc := range o.scenarios() {
		var log *answerLog
		if !o.NoFloor {
			log = newAnswerLog()
		}
		phase, err := runLoggedPhase(ctx, o, sc, newScenario(sc, o), o.urls(), o.pids(), o.Pprof, progress, log)
		if err != nil {
			return nil, err
		}
		phase.ratios(rep.Floor, rep.FloorFlow)
		if log != nil {
			if phase.Echo, err = runEcho(ctx, o, floor, phase, log, progress); err != nil {
				return nil, err
			}
			phase.echoRatios(rep.Floor, rep.FloorFlow)
		}
		rep.Phases = append(rep.Phases, phase)
	}
	return rep, nil
}

// runFloor measures the floor at url (its process pid): its one call and,
// when the run has a purchase, its three-call flow.
func (rep *Report) runFloor(ctx context.Context, o Options, url string, pid int, progress io.Writer) error {
	phase, err := runPhase(ctx, o, ScenarioNoop, []string{url}, []int{pid}, "", progress)
	if err != nil {
		return err
	}
	rep.Floor = phase
	if !o.wantsFloorFlow() {
		return nil
	}
	rep.FloorFlow, err = runPhase(ctx, o, ScenarioFloorFlow, []string{url}, []int{pid}, "", progress)
	return err
}

// errNoWork is a scenario that found nothing to do in the shop (no product,
// no stock).
var errNoWork = errors.New("bench: nothing to run against")
