package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

// TestJobsList: the serving shop's one list of background jobs holds each
// retention sweep, the reconcilers and the couriers once, with a period,
// and a pass of each runs on a fresh database without error.
func TestJobsList(t *testing.T) {
	m := &Main{Getenv: func(string) string { return "" }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg, err := m.parseFlags("serve", []string{"--db", filepath.Join(t.TempDir(), "shop.db")}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.open(t.Context(), cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	seen := map[string]bool{}
	for _, j := range a.jobs(m) {
		if seen[j.name] || j.every <= 0 || j.pass == nil {
			t.Errorf("job %q: twice, or without a period or a pass", j.name)
		}
		seen[j.name] = true
		if _, err := j.pass(context.Background()); err != nil {
			t.Errorf("job %q: %v", j.name, err)
		}
	}
	for _, want := range []string{"expired", "ended checkout sessions", "idempotency", "sign-in codes", "webhooks past retention", "reconciler", "staff refunds", "provider payments", "webhooks delivered"} {
		found := false
		for name := range seen {
			found = found || strings.Contains(name, want)
		}
		if !found {
			t.Errorf("no job does %q; the list: %v", want, seen)
		}
	}
}
