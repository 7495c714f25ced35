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
	"sync"
	"sync/atomic"
	"time"
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

// snapshot is the feed of one state, as gzipped JSON Lines, and the JSON
// Lines themselves once a client that takes no gzip asked for them.
type snapshot struct {
	key     string
	version int64 // the catalog's, st.version
	gz      []byte
	size    int64 // uncompressed
	// checked is when the state was last found to be this one; guarded by
	// Feed.mu.
	checked time.Time

	inflate   sync.Once
	plain     []byte
	plainErr  error
	inflation atomic.Int64 // times plain was made, for the tests
}

// uncompressed returns the feed's JSON Lines, inflated the first time only.
func (s *snapshot) uncompressed() ([]byte, error) {
	s.inflate.Do(func() {
		s.inflation.Add(1)
		zr, err := gzip.NewReader(bytes.NewReader(s.gz))
		if err != nil {
			s.plainErr = fmt.Errorf("feed: inflate: %w", err)
			return
		}
		buf := bytes.NewBuffer(make([]byte, 0, s.size))
		if _, err := io.Copy(buf, zr); err != nil {
			s.plainErr = fmt.Errorf("feed: inflate: %w", err)
			return
		}
		s.plain = buf.Bytes()
	})
	return s.plain, s.plainErr
}

// Handler serves the feed as JSON Lines, for GET (and HEAD)
// /feeds/products.jsonl.
//
// The feed is generated once per state of the catalog and kept, gzipped,
// in this process (and its JSON Lines too, once a client that takes no
// gzip asked). Every request reads the catalog's version (one row), so
// each replica serves an import at once, whichever replica or command made
// it. The availability (the sold-out variants) is read again only when the
// feed kept is older than Options.Refresh, and the feed generated again
// only when it changed: holds and sales, which anyone can cause, regenerate
// it at most once a Refresh. The state is the ETag: a crawler that sends it
// back in If-None-Match gets 304 Not Modified.
func (f *Feed) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		snap, err := f.current(r.Context())
		if err != nil {
			f.fail(w, err)
			return
		}
		etag := `"` + snap.key + `"`
		h := w.Header()
		h.Set("ETag", etag)
		h.Set("Cache-Control", "public, no-cache")
		h.Set("Vary", "Accept-Encoding")
		if matches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "application/jsonl; charset=utf-8")
		body := snap.gz
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
		} else if body, err = snap.uncompressed(); err != nil {
			f.fail(w, err)
			return
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
}

// fail answers a request the feed cannot serve now.
func (f *Feed) fail(w http.ResponseWriter, err error) {
	f.logger.Error("feed", "err", err)
	w.Header().Set("Retry-After", "10")
	http.Error(w, "the product feed is not available now; try again shortly", http.StatusServiceUnavailable)
}

// current returns the feed to serve now: the one kept while the catalog's
// version is the one it was generated from and its availability was read
// less than f.refresh ago; else the feed of the catalog's state now (the
// one kept again when the state has not changed).
func (f *Feed) current(ctx context.Context) (*snapshot, error) {
	version, _, err := f.catalog.Version(ctx)
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if c := f.cached; c != nil && c.version == version && now.Sub(c.checked) < f.refresh {
		return c, nil
	}
	st, err := f.state(ctx)
	if err != nil {
		return nil, err
	}
	if c := f.cached; c != nil && c.key == st.key {
		c.checked = now
		return c, nil
	}
	return f.snapshot(ctx, st, now)
}

// snapshot generates the feed of st, read at now. It is kept only when no
// import committed while it was written; its availability is st's by
// construction (write takes it from st), so what is kept under st's key is
// exactly st's feed. The caller holds f.mu.
func (f *Feed) snapshot(ctx context.Context, st *state, now time.Time) (*snapshot, error) {
	f.builds.Add(1)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // a valid level: never fails
	cw := &countingWriter{w: zw}
	if _, err := f.write(ctx, cw, JSONL, st); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("feed: compress: %w", err)
	}
	snap := &snapshot{key: st.key, version: st.version, gz: buf.Bytes(), size: cw.n, checked: now}
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
