package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestProcReadings reads this process's CPU time, which grows as it works,
// and its RSS, and samples the RSS over a short window.
func TestProcReadings(t *testing.T) {
	pid := os.Getpid()
	before, err := procCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := procCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU time %s after 100 ms of work, %s before", after, before)
	}
	kb, err := procRSS(pid)
	if err != nil || kb < 1024 {
		t.Errorf("RSS %d KiB, %v", kb, err)
	}
	s := startRSS(context.Background(), pid, 10*time.Millisecond)
	time.Sleep(60 * time.Millisecond)
	m := s.stop()
	if m.Error != "" || m.Samples < 2 || m.MinKiB <= 0 || m.MinKiB > m.MaxKiB || m.StartKiB < m.MinKiB || m.EndKiB > m.MaxKiB {
		t.Errorf("samples %+v", m)
	}
	if _, err := procCPU(1 << 30); err == nil {
		t.Error("the CPU time of a process that does not exist")
	}
}

// TestGoroutines reads the count from a real net/http/pprof endpoint.
func TestGoroutines(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	n, err := goroutines(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 || n > runtime.NumGoroutine()+10 {
		t.Errorf("%d goroutines, this process has %d", n, runtime.NumGoroutine())
	}
	if _, err := goroutines(context.Background(), srv.URL+"/nothing"); err == nil {
		t.Error("an address without pprof answered a count")
	}
}
