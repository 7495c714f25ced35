package bench

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Report is what `shop bench --json` prints.
type Report struct {
	URL       string `json:"url"`
	Scenario  string `json:"scenario"`
	Clients   int    `json:"clients"`
	Duration  string `json:"duration"`
	Warmup    string `json:"warmup"`
	Started   string `json:"started"`
	GoVersion string `json:"go_version"`
	CPUs      int    `json:"cpus"`
	Module    string `json:"module,omitempty"`
	ShopPID   int    `json:"shop_pid,omitempty"`
	Seed      uint64 `json:"seed"`
	// Floor is the no-op server's phase of this run; FloorFlow its
	// three-call flow, measured when the run has a purchase.
	Floor     *PhaseReport   `json:"floor,omitempty"`
	FloorFlow *PhaseReport   `json:"floor_flow,omitempty"`
	Phases    []*PhaseReport `json:"phases"`
}

// PhaseReport is the measurement of one scenario.
type PhaseReport struct {
	Scenario string `json:"scenario"`
	URL      string `json:"url"`
	Clients  int    `json:"clients"`
	// Unit is what Ops counts: "calls" or "flows" of CallsPerOp tool calls.
	Unit       string  `json:"unit"`
	CallsPerOp int     `json:"calls_per_op"`
	Ops        int64   `json:"ops"`
	Seconds    float64 `json:"seconds"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	// Steps are the latencies per tool (and "flow", a whole purchase).
	Steps       []*StepStats  `json:"steps"`
	Errors      []*ErrorCount `json:"errors"`
	ErrorTotal  int64         `json:"error_total"`
	RateLimited int64         `json:"rate_limited_429"`
	// ServerCPU is read from /proc when the server's process is known.
	ServerCPU        *CPUReport       `json:"server_cpu,omitempty"`
	ClientCPUSeconds float64          `json:"client_cpu_seconds"`
	Memory           *MemoryReport    `json:"memory,omitempty"`
	Goroutines       *GoroutineCounts `json:"goroutines,omitempty"`
	// Ratios compare the phase with the floor of the same run.
	Ratios *Ratios `json:"ratios,omitempty"`
	// Echo is the echo floor of the phase: the floor answering the
	// phase's own answers (echo.go).
	Echo *PhaseReport `json:"echo_floor,omitempty"`
}

// StepStats are the latencies of one step, in milliseconds.
type StepStats struct {
	Name  string  `json:"name"`
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// ErrorCount counts the failures of one kind at one step, with an example.
type ErrorCount struct {
	Step    string `json:"step"`
	Kind    string `json:"kind"`
	Count   int64  `json:"count"`
	Example string `json:"example"`
}

// CPUReport is the server's CPU time over the measured window: the sum
// over its processes (replicas), PID the first's.
type CPUReport struct {
	PID     int     `json:"pid"`
	PIDs    []int   `json:"pids,omitempty"`
	Seconds float64 `json:"seconds"`
	// Cores is the CPU time over the wall time: 2.0 is two cores busy.
	Cores float64 `json:"cores"`
	// PerOpMicros is CPU time per call or flow; PerCallMicros per tool call.
	PerOpMicros   float64 `json:"per_op_us"`
	PerCallMicros float64 `json:"per_call_us"`
}

// MemoryReport is the server's RSS sampled every second of the window.
type MemoryReport struct {
	StartKiB  int64   `json:"start_kib"`
	EndKiB    int64   `json:"end_kib"`
	MinKiB    int64   `json:"min_kib"`
	MaxKiB    int64   `json:"max_kib"`
	ChangePct float64 `json:"change_pct"`
	// HalvesChangePct compares the mean RSS of the window's second half with its first's.
	HalvesChangePct float64 `json:"halves_change_pct"`
	Samples         int     `json:"samples"`
	Error           string  `json:"error,omitempty"`
}

// GoroutineCounts are the server's goroutines before the phase's clients
// connected and after they closed.
type GoroutineCounts struct {
	Before int `json:"before"`
	After  int `json:"after"`
}

// Ratios compare a phase with the floor of the same run.
type Ratios struct {
	// Throughput is ops/s over the floor's calls/s.
	Throughput float64 `json:"throughput"`
	// P99 is the p99 of the phase's main step (the tool; "flow" for the
	// purchase) over the floor's p99.
	P99     float64 `json:"p99"`
	P99Step string  `json:"p99_step"`
	// CPUPerCall is server CPU per tool call over the floor's; CPUOverFloorMicros
	// is per op minus the floor's per call.
	CPUPerCall         float64 `json:"cpu_per_call,omitempty"`
	CPUOverFloorMicros float64 `json:"cpu_over_floor_us,omitempty"`
	// For a phase of flows, against the floor's three-call flow of the same
	// run: flows/s over its flows/s, server CPU per flow over its CPU per
	// flow, and the flow's p99 over its.
	FlowThroughput float64 `json:"flow_throughput,omitempty"`
	FlowCPU        float64 `json:"flow_cpu,omitempty"`
	FlowP99        float64 `json:"flow_p99,omitempty"`
	// Against the phase's echo floor: its ops/s over the echo floor's,
	// its server CPU per op over the echo floor's; and the echo floor's
	// own against the floor (the floor flow for flows): what a shop whose
	// tools cost nothing would score.
	EchoThroughput      float64 `json:"echo_throughput,omitempty"`
	EchoCPU             float64 `json:"echo_cpu,omitempty"`
	EchoFloorThroughput float64 `json:"echo_floor_throughput,omitempty"`
	EchoFloorCPU        float64 `json:"echo_floor_cpu,omitempty"`
}

// summarize merges the clients' recorders.
func (ph *PhaseReport) summarize(recs []*recorder, elapsed time.Duration) {
	lat := map[string][]time.Duration{}
	errs := map[string]*ErrorCount{}
	for _, r := range recs {
		ph.Ops += r.ops
		for step, ds := range r.lat {
			lat[step] = append(lat[step], ds...)
		}
		for key, e := range r.errs {
			if have := errs[key]; have != nil {
				have.Count += e.Count
			} else {
				c := *e
				errs[key] = &c
			}
		}
	}
	ph.Seconds = elapsed.Seconds()
	ph.OpsPerSec = float64(ph.Ops) / ph.Seconds
	for name, ds := range lat {
		slices.Sort(ds)
		ph.Steps = append(ph.Steps, &StepStats{
			Name: name, Count: len(ds),
			P50: ms(quantile(ds, 0.50)), P90: ms(quantile(ds, 0.90)), P99: ms(quantile(ds, 0.99)), Max: ms(ds[len(ds)-1]),
		})
	}
	slices.SortFunc(ph.Steps, func(a, b *StepStats) int { return cmp.Compare(stepOrder(a.Name), stepOrder(b.Name)) })
	for _, e := range errs {
		ph.Errors = append(ph.Errors, e)
		ph.ErrorTotal += e.Count
	}
	slices.SortFunc(ph.Errors, func(a, b *ErrorCount) int { return cmp.Compare(b.Count, a.Count) })
}

// stepOrder lists the steps in the order a flow makes them.
func stepOrder(name string) string {
	for i, s := range []string{"prepare: create_checkout_session", "prepare: update_checkout_session", noopTool, "search_products", "create_checkout_session", "update_checkout_session", "complete_checkout", "flow"} {
		if s == name {
			return fmt.Sprintf("%02d", i)
		}
	}
	return "99" + name
}

// quantile is the q-quantile of sorted ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

func (ph *PhaseReport) setCPU(pids []int, cpu, elapsed time.Duration) {
	c := &CPUReport{PID: pids[0], Seconds: cpu.Seconds(), Cores: cpu.Seconds() / elapsed.Seconds()}
	if len(pids) > 1 {
		c.PIDs = pids
	}
	if ph.Ops > 0 {
		c.PerOpMicros = math.Round(float64(cpu.Microseconds()) / float64(ph.Ops))
		c.PerCallMicros = math.Round(c.PerOpMicros / float64(ph.CallsPerOp))
	}
	ph.ServerCPU = c
}

// step is the named step's statistics, or nil.
func (ph *PhaseReport) Step(name string) *StepStats {
	for _, s := range ph.Steps {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// mainStep is the step whose p99 the ratios compare.
func (ph *PhaseReport) mainStep() string {
	switch ph.Scenario {
	case ScenarioSearch:
		return "search_products"
	case ScenarioPurchase, ScenarioFloorFlow:
		return "flow"
	case ScenarioComplete:
		return "complete_checkout"
	}
	return noopTool
}

// ratios compares ph with the floor, when there is one, and a phase of
// flows with the floor's flow, when there is one.
func (ph *PhaseReport) ratios(floor, flow *PhaseReport) {
	if floor == nil || floor.OpsPerSec == 0 {
		return
	}
	r := &Ratios{Throughput: round3(ph.OpsPerSec / floor.OpsPerSec), P99Step: ph.mainStep()}
	if s, f := ph.Step(r.P99Step), floor.Step(noopTool); s != nil && f != nil && f.P99 > 0 {
		r.P99 = round3(s.P99 / f.P99)
	}
	if ph.ServerCPU != nil && floor.ServerCPU != nil && floor.ServerCPU.PerCallMicros > 0 {
		r.CPUPerCall = round3(ph.ServerCPU.PerCallMicros / floor.ServerCPU.PerCallMicros)
		r.CPUOverFloorMicros = ph.ServerCPU.PerOpMicros - floor.ServerCPU.PerCallMicros
	}
	if ph.Unit == "flows" && flow != nil && flow.OpsPerSec > 0 {
		r.FlowThroughput = round3(ph.OpsPerSec / flow.OpsPerSec)
		if s, f := ph.Step("flow"), flow.Step("flow"); s != nil && f != nil && f.P99 > 0 {
			r.FlowP99 = round3(s.P99 / f.P99)
		}
		if ph.ServerCPU != nil && flow.ServerCPU != nil && flow.ServerCPU.PerOpMicros > 0 {
			r.FlowCPU = round3(ph.ServerCPU.PerOpMicros / flow.ServerCPU.PerOpMicros)
		}
	}
	ph.Ratios = r
}

// echoRatios compares ph with its echo floor, and the echo floor with the
// floor (the floor flow for a phase of flows).
func (ph *PhaseReport) echoRatios(floor, flow *PhaseReport) {
	e, r, ref := ph.Echo, ph.Ratios, floor
	if ph.Unit == "flows" {
		ref = flow
	}
	if e == nil || r == nil || e.OpsPerSec == 0 {
		return
	}
	r.EchoThroughput = round3(ph.OpsPerSec / e.OpsPerSec)
	if ref != nil && ref.OpsPerSec > 0 {
		r.EchoFloorThroughput = round3(e.OpsPerSec / ref.OpsPerSec)
	}
	if e.ServerCPU == nil || e.ServerCPU.PerOpMicros == 0 {
		return
	}
	if ph.ServerCPU != nil {
		r.EchoCPU = round3(ph.ServerCPU.PerOpMicros / e.ServerCPU.PerOpMicros)
	}
	if ref != nil && ref.ServerCPU != nil && ref.ServerCPU.PerOpMicros > 0 {
		r.EchoFloorCPU = round3(e.ServerCPU.PerOpMicros / ref.ServerCPU.PerOpMicros)
	}
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// print writes the report for a reader.
func (rep *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "shop bench: %s, %d clients, %s measured after %s warm-up, %s on %d CPUs, %s\n",
		rep.URL, rep.Clients, rep.Duration, rep.Warmup, rep.GoVersion, rep.CPUs, rep.Started)
	if rep.Floor != nil {
		rep.Floor.print(w, "floor (no-op go-sdk tool, same run)")
	}
	if rep.FloorFlow != nil {
		rep.FloorFlow.print(w, "floor flow (three no-op calls in a row, same run)")
	}
	for _, ph := range rep.Phases {
		ph.print(w, ph.Scenario)
		if ph.Echo != nil {
			ph.Echo.print(w, "echo floor of "+ph.Scenario+" (the floor giving "+ph.Scenario+"'s answers, same run)")
		}
	}
}

func (ph *PhaseReport) print(w io.Writer, title string) {
	fmt.Fprintf(w, "\n%s: %d %s in %.1fs = %.1f %s/s", title, ph.Ops, ph.Unit, ph.Seconds, ph.OpsPerSec, ph.Unit)
	if ph.Unit == "flows" {
		fmt.Fprintf(w, " (%.1f calls/s)", ph.OpsPerSec*float64(ph.CallsPerOp))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-34s %8s %9s %9s %9s %9s\n", "step", "count", "p50 ms", "p90 ms", "p99 ms", "max ms")
	for _, s := range ph.Steps {
		fmt.Fprintf(w, "  %-34s %8d %9.3f %9.3f %9.3f %9.3f\n", s.Name, s.Count, s.P50, s.P90, s.P99, s.Max)
	}
	if c := ph.ServerCPU; c != nil {
		procs := fmt.Sprintf("pid %d", c.PID)
		if len(c.PIDs) > 1 {
			procs = fmt.Sprintf("pids %v, together", c.PIDs)
		}
		fmt.Fprintf(w, "  server CPU (%s): %.2fs, %.2f cores, %.0f µs per %s, %.0f µs per call\n", procs, c.Seconds, c.Cores, c.PerOpMicros, strings.TrimSuffix(ph.Unit, "s"), c.PerCallMicros)
	}
	fmt.Fprintf(w, "  bench client CPU: %.2fs\n", ph.ClientCPUSeconds)
	if m := ph.Memory; m != nil {
		fmt.Fprintf(w, "  server RSS: %d → %d KiB (%+.1f %%; min %d, max %d; second half vs first %+.1f %%; %d samples)\n",
			m.StartKiB, m.EndKiB, m.ChangePct, m.MinKiB, m.MaxKiB, m.HalvesChangePct, m.Samples)
	}
	if g := ph.Goroutines; g != nil {
		fmt.Fprintf(w, "  server goroutines: %d before, %d after\n", g.Before, g.After)
	}
	if r := ph.Ratios; r != nil {
		fmt.Fprintf(w, "  vs floor: throughput ×%.3f, p99 (%s) ×%.3f", r.Throughput, r.P99Step, r.P99)
		if r.CPUPerCall > 0 {
			fmt.Fprintf(w, ", CPU per call ×%.3f (+%.0f µs per %s over the floor's call)", r.CPUPerCall, r.CPUOverFloorMicros, strings.TrimSuffix(ph.Unit, "s"))
		}
		fmt.Fprintln(w)
		if r.FlowThroughput > 0 {
			fmt.Fprintf(w, "  vs floor flow: flows/s ×%.3f, CPU per flow ×%.3f, p99 (flow) ×%.3f\n", r.FlowThroughput, r.FlowCPU, r.FlowP99)
		}
		if r.EchoThroughput > 0 {
			fmt.Fprintf(w, "  vs its echo floor: %s/s ×%.3f, CPU per %s ×%.3f; the echo floor vs the floor: ×%.3f, CPU ×%.3f\n",
				ph.Unit, r.EchoThroughput, strings.TrimSuffix(ph.Unit, "s"), r.EchoCPU, r.EchoFloorThroughput, r.EchoFloorCPU)
		}
	}
	if ph.ErrorTotal == 0 {
		fmt.Fprintln(w, "  errors: none")
		return
	}
	fmt.Fprintf(w, "  errors: %d\n", ph.ErrorTotal)
	for _, e := range ph.Errors {
		fmt.Fprintf(w, "    %6d  %s: %s (e.g. %s)\n", e.Count, e.Step, e.Kind, e.Example)
	}
	if ph.RateLimited > 0 {
		fmt.Fprintf(w, "  WARNING: %d answers were 429 Too Many Requests: the shop's per-client rate limit is on; start it with --rate-limit -1\n", ph.RateLimited)
	}
}
