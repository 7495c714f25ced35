package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shop/bench"
)

// TestMain lets the test binary stand in for the shop binary when the bench
// re-executes itself as the floor's server (`bench --serve-noop`).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "bench" && os.Args[2] == "--serve-noop" {
		logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
		m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Logger: logger}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		err := m.Run(ctx, os.Args[1:])
		stop()
		if err != nil {
			logger.Error("bench floor", "err", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestBench runs each scenario for a second with two clients against a shop
// on the demo catalog, with the floor, and checks that the report is sane:
// work done, no errors, a floor with its CPU time, each phase's echo floor
// (the floor giving its answers), ratios, and the shop's CPU time and RSS
// read from /proc (the shop runs in this process).
func TestBench(t *testing.T) {
	url := startShopArgs(t, nil, "--db", filepath.Join(t.TempDir(), "shop.db"), "--rate-limit", "-1")
	o := bench.Options{
		URL: url + "/mcp", Clients: 2, Duration: time.Second, Warmup: 200 * time.Millisecond,
		Scenario: bench.ScenarioAll, Items: 2, Seed: 1, PID: os.Getpid(),
	}
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := bench.Run(ctx, o, bench.FloorProcess{}, &progress)
	if err != nil {
		t.Fatalf("runBench: %v\n%s", err, progress.String())
	}
	if rep.Floor == nil || rep.Floor.Ops == 0 || rep.Floor.ServerCPU == nil || rep.Floor.ServerCPU.PID == os.Getpid() {
		t.Fatalf("floor %+v: want calls measured in a process of its own", rep.Floor)
	}
	if f := rep.FloorFlow; f == nil || f.Ops == 0 || f.CallsPerOp != 3 || f.Step("flow") == nil || f.Step("noop").Count < 3*int(f.Ops) || f.ServerCPU == nil {
		t.Fatalf("floor flow %+v: want three-call flows measured on the floor", f)
	}
	if len(rep.Phases) != 3 {
		t.Fatalf("%d phases, want search, purchase, complete", len(rep.Phases))
	}
	wantSteps := map[string][]string{
		bench.ScenarioSearch:   {"search_products"},
		bench.ScenarioPurchase: {"create_checkout_session", "update_checkout_session", "complete_checkout", "flow"},
		bench.ScenarioComplete: {"complete_checkout", "prepare: create_checkout_session", "prepare: update_checkout_session"},
	}
	for _, ph := range append([]*bench.PhaseReport{rep.Floor}, rep.Phases...) {
		if ph.Ops == 0 || ph.OpsPerSec <= 0 || ph.ErrorTotal != 0 || ph.RateLimited != 0 {
			t.Errorf("%s: %d %s at %.1f/s, errors %d %v", ph.Scenario, ph.Ops, ph.Unit, ph.OpsPerSec, ph.ErrorTotal, errorKinds(ph))
		}
		for _, name := range wantSteps[ph.Scenario] {
			s := ph.Step(name)
			if s == nil || s.Count == 0 || s.P50 <= 0 || s.P50 > s.P90 || s.P90 > s.P99 || s.P99 > s.Max {
				t.Errorf("%s: step %s: %+v", ph.Scenario, name, s)
			}
		}
		if ph.ServerCPU == nil || ph.ServerCPU.Seconds < 0 || ph.Memory == nil || ph.Memory.StartKiB <= 0 {
			t.Errorf("%s: server CPU %+v, memory %+v", ph.Scenario, ph.ServerCPU, ph.Memory)
		}
		if ph != rep.Floor && (ph.Ratios == nil || ph.Ratios.Throughput <= 0 || ph.Ratios.P99 <= 0) {
			t.Errorf("%s: ratios %+v", ph.Scenario, ph.Ratios)
		}
	}
	if p := rep.Phases[1]; p.Ratios == nil || p.Ratios.FlowThroughput <= 0 || p.Ratios.FlowCPU <= 0 {
		t.Errorf("purchase: ratios to the floor flow %+v", p.Ratios)
	}
	for _, ph := range rep.Phases {
		e := ph.Echo
		if e == nil || e.Ops == 0 || e.ErrorTotal != 0 || e.CallsPerOp != ph.CallsPerOp || e.ServerCPU == nil || e.ServerCPU.PID == os.Getpid() {
			t.Errorf("%s: echo floor %+v: want the phase's answers given by a floor process, without errors", ph.Scenario, e)
			continue
		}
		if r := ph.Ratios; r == nil || r.EchoThroughput <= 0 || r.EchoCPU <= 0 || r.EchoFloorThroughput <= 0 || r.EchoFloorCPU <= 0 {
			t.Errorf("%s: ratios to the echo floor %+v", ph.Scenario, ph.Ratios)
		}
	}
	if p := rep.Phases[1]; p.Step("flow").Count != int(p.Ops) || p.Step("complete_checkout").Count < int(p.Ops) {
		t.Errorf("purchase: %d flows, steps %+v", p.Ops, p.Steps)
	}
	if !strings.Contains(progress.String(), "done:") {
		t.Errorf("no progress lines:\n%s", progress.String())
	}

	// Both forms of the report.
	var text bytes.Buffer
	rep.Print(&text)
	for _, want := range []string{"floor (no-op go-sdk tool, same run)", "search:", "purchase:", "vs floor: throughput ×", "echo floor of purchase", "vs its echo floor: flows/s ×", "errors: none"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back bench.Report
	if err := json.Unmarshal(b, &back); err != nil || back.Floor == nil || len(back.Phases) != 3 {
		t.Errorf("JSON report: %v, %s", err, b)
	}
}

func errorKinds(ph *bench.PhaseReport) []string {
	var out []string
	for _, e := range ph.Errors {
		out = append(out, e.Step+": "+e.Kind+": "+e.Example)
	}
	return out
}

// TestBenchFlags checks the refusals of the command line.
func TestBenchFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--duration", "61s"},
		{"--duration", "0s"},
		{"--clients", "0"},
		{"--scenario", "browse"},
		{"--url", "127.0.0.1:8000"},
		{"--scenario", "noop", "--no-floor"},
	} {
		m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }, Logger: slog.New(slog.DiscardHandler)}
		if err := m.Run(context.Background(), append([]string{"bench"}, args...)); err != errUsage {
			t.Errorf("%v: %v, want the usage", args, err)
		}
	}
}
