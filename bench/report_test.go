package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestQuantile: nearest rank, clamped to the sample.
func TestQuantile(t *testing.T) {
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.5, 5}, {0.9, 9}, {0.99, 10}, {1, 10}} {
		if got := quantile(ds, c.q); got != c.want {
			t.Errorf("quantile(%v) = %d, want %d", c.q, got, c.want)
		}
	}
	if got := quantile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("one sample: %d", got)
	}
}

// TestSummarize: the clients' recorders merge into one phase: ops and
// latencies added up, steps in the order a flow makes them, errors counted
// by kind, most frequent first; and the ratios against the floor.
func TestSummarize(t *testing.T) {
	a, b := newRecorder(nil), newRecorder(nil)
	for i := range 4 {
		a.observe("complete_checkout", time.Duration(i+1)*time.Millisecond)
		b.observe("create_checkout_session", time.Millisecond)
		a.done()
	}
	b.observe("flow", 10*time.Millisecond)
	b.done()
	a.fail("timeout", "complete_checkout", "slow")
	b.fail("timeout", "complete_checkout", "slow too")
	b.fail("transport", "create_checkout_session", strings.Repeat("x", 400))
	ph := &PhaseReport{Scenario: ScenarioPurchase, Unit: "flows", CallsPerOp: 3}
	ph.summarize([]*recorder{a, b}, 2*time.Second)

	if ph.Ops != 5 || ph.OpsPerSec != 2.5 || ph.ErrorTotal != 3 {
		t.Errorf("ops %d, %.2f/s, %d errors", ph.Ops, ph.OpsPerSec, ph.ErrorTotal)
	}
	var names []string
	for _, s := range ph.Steps {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"create_checkout_session", "complete_checkout", "flow"}, names); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if s := ph.Step("complete_checkout"); s == nil || s.Count != 4 || s.P50 != 2 || s.P99 != 4 || s.Max != 4 {
		t.Errorf("complete_checkout: %+v", s)
	}
	if e := ph.Errors[0]; e.Kind != "timeout" || e.Count != 2 || e.Step != "complete_checkout" {
		t.Errorf("the most frequent error first: %+v", ph.Errors)
	}
	if e := ph.Errors[1]; len(e.Example) != 300+len("…") {
		t.Errorf("an example of %d bytes, want it cut at 300", len(e.Example))
	}

	floor := &PhaseReport{Scenario: ScenarioNoop, OpsPerSec: 10, Steps: []*StepStats{{Name: noopTool, P99: 0.5}}}
	ph.ratios(floor, nil)
	if r := ph.Ratios; r == nil || r.Throughput != 0.25 || r.P99Step != "flow" || r.P99 != 20 {
		t.Errorf("ratios %+v", ph.Ratios)
	}
	// Against the floor's three-call flow: flows/s, CPU per flow and p99.
	ph.ServerCPU = &CPUReport{PerOpMicros: 3000, PerCallMicros: 1000}
	floor.ServerCPU = &CPUReport{PerOpMicros: 250, PerCallMicros: 250}
	flow := &PhaseReport{Scenario: ScenarioFloorFlow, Unit: "flows", CallsPerOp: 3, OpsPerSec: 5,
		Steps: []*StepStats{{Name: "flow", P99: 2}}, ServerCPU: &CPUReport{PerOpMicros: 750, PerCallMicros: 250}}
	ph.ratios(floor, flow)
	if r := ph.Ratios; r.FlowThroughput != 0.5 || r.FlowCPU != 4 || r.FlowP99 != 5 || r.CPUPerCall != 4 {
		t.Errorf("ratios to the floor flow %+v", r)
	}
	var text bytes.Buffer
	(&Report{Phases: []*PhaseReport{ph}}).Print(&text)
	for _, want := range []string{"purchase: 5 flows in 2.0s = 2.5 flows/s (7.5 calls/s)", "errors: 3", "vs floor: throughput ×0.250, p99 (flow) ×20.000",
		"vs floor flow: flows/s ×0.500, CPU per flow ×4.000, p99 (flow) ×5.000"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
}
