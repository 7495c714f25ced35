package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Readings of the server under load, from /proc (Linux): its CPU time and
// its resident set; and its goroutine count, from its pprof endpoint when it
// has one.

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// procCPU is the CPU time (user + system) the process has used so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read the CPU time of process %d: %w", pid, err)
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// procsCPU is the CPU time the processes have used so far, together.
func procsCPU(pids []int) (time.Duration, error) {
	var sum time.Duration
	for _, pid := range pids {
		d, err := procCPU(pid)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// procRSS is the process's resident set size in KiB (VmRSS).
func procRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read the RSS of process %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status VmRSS: %w", pid, err)
			}
			return kb, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// rssSampler reads a process's RSS at an interval.
type rssSampler struct {
	mu      sync.Mutex
	samples []int64
	err     error
	cancel  context.CancelFunc
	done    chan struct{}
}

func startRSS(ctx context.Context, pid int, every time.Duration) *rssSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &rssSampler{cancel: cancel, done: make(chan struct{})}
	read := func() {
		kb, err := procRSS(pid)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.err = err
			return
		}
		s.samples = append(s.samples, kb)
	}
	read()
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				read()
			}
		}
	}()
	return s
}

// stop takes a last sample and summarizes them.
func (s *rssSampler) stop() *MemoryReport {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return &MemoryReport{Error: fmt.Sprint(s.err)}
	}
	r := &MemoryReport{StartKiB: s.samples[0], EndKiB: s.samples[len(s.samples)-1], MinKiB: s.samples[0], MaxKiB: s.samples[0], Samples: len(s.samples)}
	for _, kb := range s.samples {
		r.MinKiB, r.MaxKiB = min(r.MinKiB, kb), max(r.MaxKiB, kb)
	}
	r.ChangePct = 100 * float64(r.EndKiB-r.StartKiB) / float64(r.StartKiB)
	// The second half's mean against the first half's: a trend, not one sample's noise.
	if n := len(s.samples); n >= 4 {
		r.HalvesChangePct = 100 * (mean(s.samples[n/2:]) - mean(s.samples[:n/2])) / mean(s.samples[:n/2])
	}
	if s.err != nil {
		r.Error = s.err.Error()
	}
	return r
}

func mean(xs []int64) float64 {
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	return sum / float64(len(xs))
}

// goroutines reads the goroutine count from a net/http/pprof endpoint at base.
func goroutines(ctx context.Context, base string) (int, error) {
	url := strings.TrimRight(base, "/") + "/debug/pprof/goroutine?debug=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("goroutines: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("goroutines: %w", err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(io.LimitReader(resp.Body, 4096)).ReadString('\n')
	if resp.StatusCode != http.StatusOK || err != nil {
		return 0, fmt.Errorf("goroutines: GET %s: %s", url, resp.Status)
	}
	// "goroutine profile: total 12"
	n, err := strconv.Atoi(strings.TrimSpace(line[strings.LastIndexByte(line, ' ')+1:]))
	if err != nil {
		return 0, fmt.Errorf("goroutines: GET %s: first line %q", url, line)
	}
	return n, nil
}
