package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"
)

// How a phase of `shop bench` runs: N clients connect, the scenario learns
// what it needs from the shop (setup), the clients load the shop for the
// warm-up, then for the measured time; the server's CPU time and RSS are read
// at the edges of the measured window, the RSS also every second within it.
// A worker starts no new iteration after the deadline and finishes the one
// it is in, so no call is cut off and the window is the time until the last
// one ended.

// phase is one scenario's run against one server.
type phase struct {
	o       Options
	name    string
	sc      scenario
	pids    []int  // the server's processes (one per replica), none when unknown
	pprof   string // the server's pprof base URL, "" when it has none
	clients []*benchClient
	ph      *PhaseReport
	logf    func(format string, a ...any)
	// answers, when set, keeps the measured window's answers (the echo floor's).
	answers *answerLog
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

// runPhase measures one scenario against urls (one server, or replicas of
// one shop, which the clients take in turn); pids, when given, are the
// servers' processes, pprof the first one's pprof base URL.
func runPhase(ctx context.Context, o Options, name string, urls []string, pids []int, pprof string, progress io.Writer) (*PhaseReport, error) {
	return runLoggedPhase(ctx, o, name, newScenario(name, o), urls, pids, pprof, progress, nil)
}

// runLoggedPhase is runPhase with the scenario sc, whose clients keep their
// measured answers in log when it is not nil.
func runLoggedPhase(ctx context.Context, o Options, name string, sc scenario, urls []string, pids []int, pprof string, progress io.Writer, log *answerLog) (*PhaseReport, error) {
	p := &phase{o: o, name: name, sc: sc, pids: pids, pprof: pprof, answers: log}
	unit, perOp := p.sc.unit()
	p.ph = &PhaseReport{Scenario: name, URL: strings.Join(urls, ","), Clients: o.Clients, Unit: unit, CallsPerOp: perOp, Errors: []*ErrorCount{}}
	p.logf = func(format string, a ...any) {
		fmt.Fprintf(progress, "bench %-8s "+format+"\n", append([]any{name}, a...)...)
	}
	defer p.closeClients()
	if err := p.connect(ctx, urls); err != nil {
		return nil, err
	}
	p.warmUp(ctx)
	recs, measure, window := p.prepare(ctx)
	if err := p.measure(ctx, recs, measure, window); err != nil {
		return nil, err
	}
	if err := p.after(ctx); err != nil {
		return nil, err
	}
	ph := p.ph
	p.logf("done: %d %s in %.1fs, %.1f/s, %d errors", ph.Ops, unit, ph.Seconds, ph.OpsPerSec, ph.ErrorTotal)
	return ph, nil
}

// connect reads the server's goroutines when it can, connects the clients
// and runs the scenario's setup.
func (p *phase) connect(ctx context.Context, urls []string) error {
	if p.pprof != "" {
		n, err := goroutines(ctx, p.pprof)
		if err != nil {
			return err
		}
		p.ph.Goroutines = &GoroutineCounts{Before: n}
	}
	p.clients = make([]*benchClient, p.o.Clients)
	for i := range p.clients {
		c, err := connectBenchClient(ctx, urls[i%len(urls)], p.o.Version, p.o.Seed, i)
		if err != nil {
			return err
		}
		c.answers = p.answers
		p.clients[i] = c
	}
	return p.sc.setup(ctx, p.clients[0])
}

func (p *phase) closeClients() {
	for i, c := range p.clients {
		if c != nil {
			c.close()
			p.clients[i] = nil
		}
	}
}

// recorders makes one recorder per client.
func (p *phase) recorders(live *liveCounts) []*recorder {
	recs := make([]*recorder, len(p.clients))
	for i := range recs {
		recs[i] = newRecorder(live)
	}
	return recs
}

// warmUp loads the server, unmeasured, for o.Warmup.
func (p *phase) warmUp(ctx context.Context) {
	if p.o.Warmup <= 0 {
		return
	}
	p.logf("warming up for %s with %d clients", p.o.Warmup, p.o.Clients)
	recs := p.recorders(nil)
	stage(ctx, p.clients, recs, time.Now().Add(p.o.Warmup), p.sc.iterate)
	if st, ok := p.sc.(staged); ok { // pay what the warm-up prepared, so that it is not left holding stock
		stage(ctx, p.clients, recs, time.Now().Add(p.o.Warmup), st.finish)
	}
}

// prepare answers the measured stage's recorders, function and window: for
// a staged scenario, after its first stage has run (for half the duration),
// whose latencies and errors it keeps under "prepare: ".
func (p *phase) prepare(ctx context.Context) ([]*recorder, func(context.Context, *benchClient, *recorder) bool, time.Duration) {
	recs := p.recorders(&liveCounts{})
	st, ok := p.sc.(staged)
	if !ok {
		return recs, p.sc.iterate, p.o.Duration
	}
	// The first half prepares; the second, measured, finishes.
	p.logf("preparing for %s", p.o.Duration/2)
	prep := p.recorders(nil)
	stage(ctx, p.clients, prep, time.Now().Add(p.o.Duration/2), p.sc.iterate)
	for _, r := range prep {
		for step, ds := range r.lat {
			recs[0].lat["prepare: "+step] = append(recs[0].lat["prepare: "+step], ds...)
		}
		for _, e := range r.errs {
			recs[0].mergeError(e, "prepare: ")
		}
	}
	return recs, st.finish, p.o.Duration - p.o.Duration/2
}

// measure runs fn for the window, reading the server's CPU time and RSS and
// this process's CPU time at its edges, and summarizes recs into the report.
func (p *phase) measure(ctx context.Context, recs []*recorder, fn func(context.Context, *benchClient, *recorder) bool, window time.Duration) error {
	var sampler *rssSampler
	var cpu0 time.Duration
	if len(p.pids) > 0 {
		var err error
		if cpu0, err = procsCPU(p.pids); err != nil {
			return err
		}
		sampler = startRSS(ctx, p.pids[0], time.Second)
	}
	var self0, self1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	start := time.Now()
	stopProgress := p.progress(start, window, recs[0].live)
	stage(ctx, p.clients, recs, start.Add(window), fn)
	elapsed := time.Since(start)
	stopProgress()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bench %s: %w", p.name, err)
	}
	ph := p.ph
	ph.summarize(recs, elapsed)
	ph.ClientCPUSeconds = (rusageCPU(self1) - rusageCPU(self0)).Seconds()
	if len(p.pids) > 0 {
		cpu1, err := procsCPU(p.pids)
		if err != nil {
			return err
		}
		ph.setCPU(p.pids, cpu1-cpu0, elapsed)
		ph.Memory = sampler.stop()
	}
	return nil
}

// progress writes a progress line every benchProgressEvery of the window
// until the function it answers is called.
func (p *phase) progress(start time.Time, window time.Duration, live *liveCounts) (stop func()) {
	unit, _ := p.sc.unit()
	stopc := make(chan struct{})
	var done sync.WaitGroup
	done.Go(func() {
		t := time.NewTicker(benchProgressEvery)
		defer t.Stop()
		var last int64
		for {
			select {
			case <-stopc:
				return
			case now := <-t.C:
				ops := live.ops.Load()
				p.logf("%4.0fs/%s  %d %s, %.0f/s in the last %s, %d errors",
					now.Sub(start).Seconds(), window, ops, unit, float64(ops-last)/benchProgressEvery.Seconds(), benchProgressEvery, live.errs.Load())
				last = ops
			}
		}
	})
	return func() { close(stopc); done.Wait() }
}

// after counts the answers that said 429 and, when the server has a pprof
// endpoint, its goroutines once the clients have closed.
func (p *phase) after(ctx context.Context) error {
	ph := p.ph
	for _, c := range p.clients {
		ph.RateLimited += c.transport.rateLimited.Load()
	}
	if ph.RateLimited > 0 {
		p.logf("WARNING: the shop answered 429 Too Many Requests %d times: its per-client rate limit is on; start it with --rate-limit -1 to measure it", ph.RateLimited)
	}
	if ph.Goroutines == nil {
		return nil
	}
	p.closeClients()
	// Let the server see the connections close.
	time.Sleep(time.Second)
	n, err := goroutines(ctx, p.pprof)
	if err != nil {
		return err
	}
	ph.Goroutines.After = n
	return nil
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
