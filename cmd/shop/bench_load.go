package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// How a phase of `shop bench` runs: N clients connect, the scenario learns
// what it needs from the shop (setup), the clients load the shop for the
// warm-up, then for the measured time; the server's CPU time and RSS are read
// at the edges of the measured window, the RSS also every second within it.
// A worker starts no new iteration after the deadline and finishes the one
// it is in, so no call is cut off and the window is the time until the last
// one ended.

// benchCallTimeout bounds one tool call.
const benchCallTimeout = 30 * time.Second

// scenario is one kind of load.
type scenario interface {
	// setup learns what the iterations need, through the first client.
	setup(ctx context.Context, c *benchClient) error
	// iterate runs one call or flow and records it in r; it answers false
	// when the client has nothing left to do.
	iterate(ctx context.Context, c *benchClient, r *recorder) bool
	// unit names what iterate counts: "calls" or "flows"; callsPerOp is the
	// number of tool calls in one.
	unit() (name string, callsPerOp int)
}

// staged is a scenario whose measured window is its second stage: the first
// stage (prepare, untimed for CPU) readies the work that finish measures.
type staged interface {
	scenario
	finish(ctx context.Context, c *benchClient, r *recorder) bool
}

func newScenario(name string, o benchOptions) scenario {
	switch name {
	case scenarioSearch:
		return &searchScenario{}
	case scenarioPurchase:
		return &purchaseScenario{items: o.Items}
	case scenarioComplete:
		return &completeScenario{purchaseScenario{items: o.Items}}
	}
	return noopScenario{}
}

// benchClient is one MCP client with its own session and HTTP connection.
type benchClient struct {
	cs        *mcp.ClientSession
	transport *countingTransport
	rng       *rand.Rand
	// state of the scenario for this client
	cursorArgs map[string]any // the last search with a next page
	cursor     string
	ready      []string // sessions prepared for the complete stage
	// id and buyers name the buyers the client speaks for: a new one for
	// each checkout session it creates, as a host speaks for many users
	// (their ids in _meta["openai/subject"]), so the shop's per-buyer
	// limits see many buyers, not one.
	id, buyers int
}

// countingTransport counts the answers that said 429 Too Many Requests.
type countingTransport struct {
	next        http.RoundTripper
	rateLimited atomic.Int64
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		t.rateLimited.Add(1)
	}
	return resp, err
}

func connectBenchClient(ctx context.Context, url string, seed uint64, i int) (*benchClient, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4
	ct := &countingTransport{next: tr}
	client := mcp.NewClient(&mcp.Implementation{Name: "shop-bench", Version: version()}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: ct}, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: client %d: initialize %s: %w", i, url, err)
	}
	return &benchClient{cs: cs, transport: ct, rng: rand.New(rand.NewPCG(seed, uint64(i))), id: i}, nil
}

func (c *benchClient) close() {
	_ = c.cs.Close()
	if tr, ok := c.transport.next.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
}

// call calls a tool, records its latency under its name, and classifies a
// failure into r. It answers the result when the call succeeded without isError.
func (c *benchClient) call(ctx context.Context, r *recorder, name string, args any) (*mcp.CallToolResult, bool) {
	ctx, cancel := context.WithTimeout(ctx, benchCallTimeout)
	defer cancel()
	limited := c.transport.rateLimited.Load()
	start := time.Now()
	if name == "create_checkout_session" {
		c.buyers++
	}
	meta := mcp.Meta{"openai/subject": fmt.Sprintf("shop-bench-%d-%d", c.id, c.buyers)}
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: name, Arguments: args})
	r.observe(name, time.Since(start))
	switch {
	case c.transport.rateLimited.Load() != limited:
		r.fail("rate_limited (HTTP 429: start the shop with --rate-limit -1)", name, errorText(err, res))
	case errors.Is(err, context.DeadlineExceeded):
		r.fail("timeout", name, err.Error())
	case err != nil:
		r.fail("transport", name, err.Error())
	case res.IsError:
		r.fail("tool_error:"+toolErrorCode(res), name, resultText(res))
	default:
		return res, true
	}
	return nil, false
}

// resultText is the text of a result's text blocks.
func resultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

func errorText(err error, res *mcp.CallToolResult) string {
	if err != nil {
		return err.Error()
	}
	if res != nil {
		return resultText(res)
	}
	return ""
}

// toolErrorCode is the error.code of a failed call's structuredContent.
func toolErrorCode(res *mcp.CallToolResult) string {
	if m, ok := res.StructuredContent.(map[string]any); ok {
		if e, ok := m["error"].(map[string]any); ok {
			if code, ok := e["code"].(string); ok {
				return code
			}
		}
	}
	return "unknown"
}

// structuredField reads one top-level field of a result's structuredContent
// without decoding it again: the client shares the machine with the server.
func structuredField(res *mcp.CallToolResult, key string) any {
	if m, ok := res.StructuredContent.(map[string]any); ok {
		return m[key]
	}
	return nil
}

// recorder holds one client's measurements; the phase merges them.
type recorder struct {
	lat  map[string][]time.Duration
	errs map[string]*ErrorCount
	ops  int64
	live *liveCounts // nil during warm-up
}

// liveCounts are the phase's running totals, for the progress lines.
type liveCounts struct{ ops, errs atomic.Int64 }

func newRecorder(live *liveCounts) *recorder {
	return &recorder{lat: map[string][]time.Duration{}, errs: map[string]*ErrorCount{}, live: live}
}

func (r *recorder) observe(step string, d time.Duration) { r.lat[step] = append(r.lat[step], d) }

func (r *recorder) done() {
	r.ops++
	if r.live != nil {
		r.live.ops.Add(1)
	}
}

func (r *recorder) fail(kind, step, example string) {
	key := step + ": " + kind
	e := r.errs[key]
	if e == nil {
		e = &ErrorCount{Kind: kind, Step: step, Example: truncate(example, 300)}
		r.errs[key] = e
	}
	e.Count++
	if r.live != nil {
		r.live.errs.Add(1)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// stage runs fn on every client until the deadline (or until fn answers
// false) and returns when all are done.
func stage(ctx context.Context, clients []*benchClient, recs []*recorder, until time.Time, fn func(context.Context, *benchClient, *recorder) bool) {
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(until) {
				if !fn(ctx, c, recs[i]) {
					return
				}
			}
		})
	}
	wg.Wait()
}

// runPhase measures one scenario against url; pid, when not 0, is the
// server's process, pprof its pprof base URL.
func runPhase(ctx context.Context, o benchOptions, name, url string, pid int, pprof string, progress io.Writer) (*PhaseReport, error) {
	sc := newScenario(name, o)
	unit, perOp := sc.unit()
	ph := &PhaseReport{Scenario: name, URL: url, Clients: o.Clients, Unit: unit, CallsPerOp: perOp, Errors: []*ErrorCount{}}
	logf := func(format string, a ...any) {
		fmt.Fprintf(progress, "bench %-8s "+format+"\n", append([]any{name}, a...)...)
	}

	if pprof != "" {
		n, err := goroutines(ctx, pprof)
		if err != nil {
			return nil, err
		}
		ph.Goroutines = &GoroutineCounts{Before: n}
	}
	clients := make([]*benchClient, o.Clients)
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.close()
			}
		}
	}()
	for i := range clients {
		c, err := connectBenchClient(ctx, url, o.Seed, i)
		if err != nil {
			return nil, err
		}
		clients[i] = c
	}
	if err := sc.setup(ctx, clients[0]); err != nil {
		return nil, err
	}

	if o.Warmup > 0 {
		logf("warming up for %s with %d clients", o.Warmup, o.Clients)
		recs := make([]*recorder, len(clients))
		for i := range recs {
			recs[i] = newRecorder(nil)
		}
		stage(ctx, clients, recs, time.Now().Add(o.Warmup), sc.iterate)
		if st, ok := sc.(staged); ok { // pay what the warm-up prepared, so that it is not left holding stock
			stage(ctx, clients, recs, time.Now().Add(o.Warmup), st.finish)
		}
	}

	live := &liveCounts{}
	recs := make([]*recorder, len(clients))
	for i := range recs {
		recs[i] = newRecorder(live)
	}
	measure := sc.iterate
	window := o.Duration
	if st, ok := sc.(staged); ok {
		// The first half prepares; the second, measured, finishes.
		logf("preparing for %s", o.Duration/2)
		prep := make([]*recorder, len(clients))
		for i := range prep {
			prep[i] = newRecorder(nil)
		}
		stage(ctx, clients, prep, time.Now().Add(o.Duration/2), sc.iterate)
		for _, r := range prep {
			for step, ds := range r.lat {
				recs[0].lat["prepare: "+step] = append(recs[0].lat["prepare: "+step], ds...)
			}
			for _, e := range r.errs {
				recs[0].mergeError(e, "prepare: ")
			}
		}
		measure, window = st.finish, o.Duration-o.Duration/2
	}

	var sampler *rssSampler
	var cpu0 time.Duration
	if pid > 0 {
		var err error
		if cpu0, err = procCPU(pid); err != nil {
			return nil, err
		}
		sampler = startRSS(ctx, pid, time.Second)
	}
	var self0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	start := time.Now()
	stopProgress := make(chan struct{})
	var progressDone sync.WaitGroup
	progressDone.Go(func() {
		t := time.NewTicker(benchProgressEvery)
		defer t.Stop()
		var last int64
		for {
			select {
			case <-stopProgress:
				return
			case now := <-t.C:
				ops := live.ops.Load()
				logf("%4.0fs/%s  %d %s, %.0f/s in the last %s, %d errors",
					now.Sub(start).Seconds(), window, ops, unit, float64(ops-last)/benchProgressEvery.Seconds(), benchProgressEvery, live.errs.Load())
				last = ops
			}
		}
	})
	stage(ctx, clients, recs, start.Add(window), measure)
	elapsed := time.Since(start)
	close(stopProgress)
	progressDone.Wait()
	var self1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bench %s: %w", name, err)
	}

	ph.summarize(recs, elapsed)
	ph.ClientCPUSeconds = (rusageCPU(self1) - rusageCPU(self0)).Seconds()
	if pid > 0 {
		cpu1, err := procCPU(pid)
		if err != nil {
			return nil, err
		}
		ph.setCPU(pid, cpu1-cpu0, elapsed)
		ph.Memory = sampler.stop()
	}
	for _, c := range clients {
		ph.RateLimited += c.transport.rateLimited.Load()
	}
	if ph.RateLimited > 0 {
		logf("WARNING: the shop answered 429 Too Many Requests %d times: its per-client rate limit is on; start it with --rate-limit -1 to measure it", ph.RateLimited)
	}
	if ph.Goroutines != nil {
		for i, c := range clients {
			c.close()
			clients[i] = nil
		}
		// Let the server see the connections close.
		time.Sleep(time.Second)
		n, err := goroutines(ctx, pprof)
		if err != nil {
			return nil, err
		}
		ph.Goroutines.After = n
	}
	logf("done: %d %s in %.1fs, %.1f/s, %d errors", ph.Ops, unit, ph.Seconds, ph.OpsPerSec, ph.ErrorTotal)
	return ph, nil
}

func (r *recorder) mergeError(e *ErrorCount, prefix string) {
	key := prefix + e.Step + ": " + e.Kind
	if have := r.errs[key]; have != nil {
		have.Count += e.Count
		return
	}
	c := *e
	c.Step = prefix + e.Step
	r.errs[key] = &c
}

func rusageCPU(ru syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// noopScenario calls the floor's one tool.
type noopScenario struct{}

func (noopScenario) setup(context.Context, *benchClient) error { return nil }
func (noopScenario) unit() (string, int)                       { return "calls", 1 }
func (noopScenario) iterate(ctx context.Context, c *benchClient, r *recorder) bool {
	if _, ok := c.call(ctx, r, noopTool, map[string]any{}); ok {
		r.done()
	}
	return true
}

// words splits a title into lower-case words a search can take.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
		if len(w) >= 3 {
			out = append(out, w)
		}
	}
	return out
}
