package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/purchase"
)

// The load's parts: scenarios, clients and their recorders.

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

func newScenario(name string, o Options) scenario {
	switch name {
	case ScenarioSearch:
		return &searchScenario{}
	case ScenarioPurchase:
		return &purchaseScenario{items: o.Items}
	case ScenarioComplete:
		return &completeScenario{purchaseScenario{items: o.Items}}
	case ScenarioFloorFlow:
		return noopFlowScenario{}
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
	echoed     int      // the echo floor's answers asked for
	// answers, when set, keeps the answers of the measured window.
	answers *answerLog
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

func connectBenchClient(ctx context.Context, url, version string, seed uint64, i int) (*benchClient, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4
	ct := &countingTransport{next: tr}
	client := mcp.NewClient(&mcp.Implementation{Name: "shop-bench", Version: version}, nil)
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
		r.fail("tool_error:"+toolErrorCode(res), name, purchase.ResultText(res))
	default:
		if c.answers != nil && r.live != nil {
			c.answers.keep(name, res)
		}
		return res, true
	}
	return nil, false
}

func errorText(err error, res *mcp.CallToolResult) string {
	if err != nil {
		return err.Error()
	}
	if res != nil {
		return purchase.ResultText(res)
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

// noopFlowScenario is the floor's three-call flow: the floor's one tool
// three times in a row, as a purchase flow makes three calls, its time
// recorded as "flow".
type noopFlowScenario struct{}

// flowCalls is the number of calls in a flow: a purchase's create, update
// and complete.
const flowCalls = 3

func (noopFlowScenario) setup(context.Context, *benchClient) error { return nil }
func (noopFlowScenario) unit() (string, int)                       { return "flows", flowCalls }
func (noopFlowScenario) iterate(ctx context.Context, c *benchClient, r *recorder) bool {
	start := time.Now()
	for range flowCalls {
		if _, ok := c.call(ctx, r, noopTool, map[string]any{}); !ok {
			return true
		}
	}
	r.observe("flow", time.Since(start))
	r.done()
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
