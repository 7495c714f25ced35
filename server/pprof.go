package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// ServePprof serves Go's profiles (net/http/pprof) on addr until ctx is
// done, for measuring the shop under load (shop bench), and logs why
// when it cannot. addr must be a loopback address: profiles show the
// process's internals to whoever asks. The handlers are on a mux of their
// own, never on the shop's.
func ServePprof(ctx context.Context, addr string, logger *slog.Logger) {
	if err := servePprof(ctx, addr, logger); err != nil {
		logger.Error("pprof", "err", err)
	}
}

// servePprof is ServePprof, answering why it cannot serve.
func servePprof(ctx context.Context, addr string, logger *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("SHOP_PPROF %q: send a loopback host:port such as 127.0.0.1:6060", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("SHOP_PPROF %q: profiles are served on a loopback address only, such as 127.0.0.1:6060", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("SHOP_PPROF: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	logger.Warn("serving Go profiles", "pprof", "http://"+ln.Addr().String()+"/debug/pprof/")
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("SHOP_PPROF: %w", err)
	}
	return nil
}
