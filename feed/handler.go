package feed

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// state is what the feed depends on: the catalog's version (raised by every
// import) and the variants sold out now (stock on hand minus live holds).
// Two reads with the same key find the same feed, on any replica.
type state struct {
	version int64
	soldOut map[string]bool
	key     string
}

// state reads the catalog's state from the database.
func (f *Feed) state(ctx context.Context) (*state, error) {
	version, _, err := f.catalog.Version(ctx)
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	ids, err := f.catalog.SoldOut(ctx)
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	st := &state{version: version, soldOut: make(map[string]bool, len(ids))}
	h := sha256.New()
	seller, _ := json.Marshal(f.seller) // plain strings: never fails
	h.Write(seller)
	for _, id := range ids {
		st.soldOut[id] = true
		h.Write([]byte("\n" + id))
	}
	st.key = strconv.FormatInt(version, 10) + "-" + hex.EncodeToString(h.Sum(nil)[:10])
	return st, nil
}

// snapshot is the feed of one state, as gzipped JSON Lines.
type snapshot struct {
	key  string
	gz   []byte
	size int64 // uncompressed
}

// Handler serves the feed as JSON Lines, for GET (and HEAD)
// /feeds/products.jsonl.
//
// The feed is generated once per state of the catalog and kept, gzipped,
// in this process. Every request first reads the state from the database
// (the catalog's version and the sold-out variants: two small queries), so
// each replica serves the catalog as it is now, whichever replica or
// command changed it, and regenerates only when it changed. The state is
// the ETag: a crawler that sends it back in If-None-Match gets 304 Not
// Modified. The body goes gzipped to clients that accept it.
func (f *Feed) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := f.state(r.Context())
		if err != nil {
			f.fail(w, err)
			return
		}
		etag := `"` + st.key + `"`
		h := w.Header()
		h.Set("ETag", etag)
		h.Set("Cache-Control", "public, no-cache")
		h.Set("Vary", "Accept-Encoding")
		if matches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		snap, err := f.snapshot(r.Context(), st)
		if err != nil {
			f.fail(w, err)
			return
		}
		h.Set("Content-Type", "application/jsonl; charset=utf-8")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			h.Set("Content-Length", strconv.Itoa(len(snap.gz)))
			_, _ = w.Write(snap.gz)
			return
		}
		h.Set("Content-Length", strconv.FormatInt(snap.size, 10))
		zr, err := gzip.NewReader(bytes.NewReader(snap.gz))
		if err == nil {
			_, err = io.Copy(w, zr)
		}
		if err != nil {
			f.logger.Error("feed: send", "err", err)
		}
	})
}

// fail answers a request the feed cannot serve now.
func (f *Feed) fail(w http.ResponseWriter, err error) {
	f.logger.Error("feed", "err", err)
	w.Header().Set("Retry-After", "10")
	http.Error(w, "the product feed is not available now; try again shortly", http.StatusServiceUnavailable)
}

// snapshot returns the feed of st: the one kept when it is st's, else a new
// one. A new one is kept only when no import committed while it was
// written; its availability is st's by construction (write takes it from
// st), so what is kept under st's key is exactly st's feed.
func (f *Feed) snapshot(ctx context.Context, st *state) (*snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cached != nil && f.cached.key == st.key {
		return f.cached, nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // a valid level: never fails
	cw := &countingWriter{w: zw}
	if _, err := f.write(ctx, cw, JSONL, st); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("feed: compress: %w", err)
	}
	snap := &snapshot{key: st.key, gz: buf.Bytes(), size: cw.n}
	after, _, err := f.catalog.Version(ctx)
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	if after == st.version {
		f.cached = snap
	}
	return snap, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// matches reports whether an If-None-Match header names etag.
func matches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		if t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "W/")); t == etag || t == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			return strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0"
		}
	}
	return false
}
