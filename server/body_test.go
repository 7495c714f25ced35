package server_test

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"shop/server"
)

// memoryOf runs f and returns the bytes the heap allocated meanwhile and the
// most the goroutines' stacks grew above what they held before, sampled
// every 200µs: a parser that recurses once a level grows a stack, not the
// heap.
func memoryOf(f func()) (heap, stack uint64) {
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.StackInuse)
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if peak > before.StackInuse {
		stack = peak - before.StackInuse
	}
	return after.TotalAlloc - before.TotalAlloc, stack
}

// nested is a tools/call of whoami whose arguments nest depth deep in all
// (the envelope, params and arguments count 3), padded with spaces to size
// bytes when size is larger.
func nested(depth, size int) string {
	open := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{"a":`
	inner := depth - 3
	body := open + strings.Repeat("[", inner) + strings.Repeat("]", inner) + "}}}"
	if pad := size - len(body); pad > 0 {
		body = open + strings.Repeat("[", inner) + strings.Repeat(" ", pad) + strings.Repeat("]", inner) + "}}}"
	}
	return body
}

// TestNestedBodyRefused: a body of nested arrays is refused on every MCP
// endpoint (the admin one before its 401) before any parser reads it, each
// request taking well under 16 MB: over MaxMCPBodyBytes with 413 (its
// length declared, or sent chunked), under it but nested deeper than MaxJSONDepth with 400 and a
// JSON-RPC error. A body exactly MaxJSONDepth deep is served, and so is
// one as wide as the cap allows, in under 16 MB too.
func TestNestedBodyRefused(t *testing.T) {
	h := newHost(t, server.Options{})
	const limit = 16 << 20
	// Just under a megabyte, the bound of every body, MCP posts' too, before
	// MaxMCPBodyBytes; and over MaxMCPBodyBytes by less than what net/http
	// reads of a body left unread, so that the client is not reset while
	// it sends it.
	envelope := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":`
	megabyte := envelope + strings.Repeat("[", 1<<20-1-len(envelope))
	overCap := envelope + strings.Repeat("[", server.MaxMCPBodyBytes+server.MaxMCPBodyBytes/2)
	underCap := nested(server.MaxMCPBodyBytes/2-100, 0) // all brackets, just under the cap
	for _, path := range []string{"/mcp", "/admin/mcp", "/acp/mcp", "/ucp/mcp"} {
		for _, tc := range []struct {
			name    string
			body    string
			chunked bool
			status  int
		}{
			{"Megabyte", megabyte, false, http.StatusRequestEntityTooLarge},
			{"OverTheCapChunked", overCap, true, http.StatusRequestEntityTooLarge},
			{"UnderTheCap", underCap, false, http.StatusBadRequest},
			{"OneTooDeep", nested(server.MaxJSONDepth+1, 0), false, http.StatusBadRequest},
		} {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				var r reply
				var err error
				heap, stack := memoryOf(func() { r, err = h.postBody(path, tc.body, tc.chunked) })
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d KiB: heap %d KB, stack %d KB", len(tc.body)>>10, heap>>10, stack>>10)
				if heap > limit || stack > limit {
					t.Errorf("the request took %d MB of heap and %d MB of stack; want each under 16 MB", heap>>20, stack>>20)
				}
				if r.status != tc.status {
					t.Fatalf("status %d %.200s; want %d", r.status, r.body, tc.status)
				}
				if tc.status == http.StatusBadRequest {
					checkTooDeep(t, r)
				}
			})
		}
	}
	if r, err := h.post("/mcp", nested(server.MaxJSONDepth, 0), nil); err != nil || r.status != http.StatusOK || !strings.Contains(string(r.body), `"result"`) {
		t.Errorf("a call %d deep: %d %s %v; want it served", server.MaxJSONDepth, r.status, r.body, err)
	}
	// As wide as the cap allows, shallow: every parser reads it, within bounds.
	wide := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{"a":[` +
		strings.Repeat("{},", (server.MaxMCPBodyBytes-200)/3) + `{}]}}}`
	var r reply
	var err error
	heap, stack := memoryOf(func() { r, err = h.postBody("/mcp", wide, false) })
	if err != nil || r.status != http.StatusOK || heap > limit || stack > limit {
		t.Errorf("%d KiB of {}: %d %.200s %v, %d MB of heap, %d MB of stack; want it served in under 16 MB", len(wide)>>10, r.status, r.body, err, heap>>20, stack>>20)
	}
	t.Logf("%d KiB of {}: heap %d KB, stack %d KB", len(wide)>>10, heap>>10, stack>>10)
}

// checkTooDeep checks the refusal of a body nested too deep: a JSON-RPC
// Invalid Request error, its id null, that says the bound.
func checkTooDeep(t *testing.T, r reply) {
	t.Helper()
	msg := rpcErrorOf(t, r)
	if msg.JSONRPC != "2.0" || string(msg.ID) != "null" || msg.Error.Code != -32600 || !strings.Contains(msg.Error.Message, "more than 64 deep") {
		t.Errorf("refusal %s: want an Invalid Request error, id null, saying the bound", r.body)
	}
}

// postBody posts body to path as a host would, with its length declared or
// chunked.
func (h *host) postBody(path, body string, chunked bool) (reply, error) {
	var rd io.Reader = strings.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // no length the client can see: sent chunked
	}
	req, err := http.NewRequest("POST", h.url+path, rd)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	// The body once the server asks for it: refused on its length alone,
	// it is never sent, and the client is not reset while sending it.
	req.Header.Set("Expect", "100-continue")
	// A connection of its own: the server's goroutine of a kept one would
	// keep the stack an earlier request grew.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, ExpectContinueTimeout: 10 * time.Second}, Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}, err
}

// TestDeeperThan: the depth scan counts brackets outside strings only,
// escapes included, and never below zero.
func TestDeeperThan(t *testing.T) {
	for _, tc := range []struct {
		body string
		max  int
		want bool
	}{
		{`{"a":[1,{"b":2}]}`, 3, false},
		{`{"a":[1,{"b":2}]}`, 2, true},
		{`{"a":"[[[[[[[["}`, 1, false},
		{`{"a":"\"[[[[","b":"\\"}`, 1, false},
		{`{"a":"\\"}[[`, 2, false},
		{`{"a":"\\"}[[[`, 2, true},
		{`]]]]]][[[`, 2, true},
		{``, 0, false},
		{`[]`, 0, true},
	} {
		if got := server.DeeperThan([]byte(tc.body), tc.max); got != tc.want {
			t.Errorf("deeperThan(%s, %d) = %v, want %v", tc.body, tc.max, got, tc.want)
		}
	}
}
