package server

import (
	"log/slog"
	"runtime/debug"
)

// The garbage collector of a serving shop. go-sdk's streamable HTTP transport
// allocates about 300 KiB per tool call (a buffer per message it decodes),
// while the shop's live heap is a few MiB: with the default GOGC=100 the
// collector runs every few calls, and its marking and the write barriers it
// turns on cost more CPU than the call itself. A higher GOGC lets the heap
// grow to a few times the live heap between collections; the memory limit
// caps that growth, so that a large live heap (a big catalog's search, many
// sessions) makes the collector run as often as needed instead of growing
// without bound.
const (
	// serveGCPercent is GOGC for `shop serve`.
	serveGCPercent = 400
	// serveMemoryLimit is GOMEMLIMIT for `shop serve`: a soft limit on the
	// Go heap and runtime, in bytes.
	serveMemoryLimit = 512 << 20
)

// TuneGC sets the collector for serving: GOGC=400 with a 512 MiB soft memory
// limit, unless the operator chose either through the GOGC or GOMEMLIMIT
// environment variables (getenv), which the runtime has then applied.
func TuneGC(getenv func(string) string, logger *slog.Logger) {
	if gogc, limit := getenv("GOGC"), getenv("GOMEMLIMIT"); gogc != "" || limit != "" {
		logger.Info("garbage collector as the environment sets it", "GOGC", gogc, "GOMEMLIMIT", limit)
		return
	}
	debug.SetGCPercent(serveGCPercent)
	debug.SetMemoryLimit(serveMemoryLimit)
}
