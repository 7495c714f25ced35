package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The echo floor: the floor's server answering, from memory, the answers
// the shop gave in a phase (their text and structured content, byte for
// byte but for the order of keys), loaded the same way. What go-sdk and the
// clients spend on the shop's answers is then measured apart from what the
// shop spends making them: a shop whose tools cost nothing would run at
// the echo floor, not at the no-op floor.

// Scenarios of the echo floor: a phase of calls is echoed call by call, a
// phase of flows flow by flow (its three answers in a row).
const (
	ScenarioEcho     = "echo"
	ScenarioEchoFlow = "echo-flow"
)

// echoKeep bounds the answers a phase keeps per tool for its echo floor.
const echoKeep = 64

// echoArg is the argument of the floor's tool that asks for a kept answer
// by its index (modulo their number); without it the tool answers "ok".
const echoArg = "answer"

// answerLog keeps the first answers of each tool in a phase's measured
// window, shared by the phase's clients.
type answerLog struct {
	mu    sync.Mutex
	tools map[string][]json.RawMessage
}

func newAnswerLog() *answerLog { return &answerLog{tools: map[string][]json.RawMessage{}} }

// keep records res as an answer of tool, up to echoKeep of them.
func (l *answerLog) keep(tool string, res *mcp.CallToolResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.tools[tool]) >= echoKeep {
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		return // a result go-sdk decoded always encodes; nothing to echo otherwise
	}
	l.tools[tool] = append(l.tools[tool], b)
}

// answers lists the kept answers in the order the echo floor's scenario
// asks for them: for flows (perOp calls each), flow after flow, each the
// tools in flowOrder; for calls, every tool's answers one after another.
func (l *answerLog) answers(perOp int) []json.RawMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	if perOp <= 1 {
		var names []string
		for name := range l.tools {
			names = append(names, name)
		}
		slices.Sort(names)
		var out []json.RawMessage
		for _, name := range names {
			out = append(out, l.tools[name]...)
		}
		return out
	}
	n := echoKeep
	for _, name := range flowOrder {
		n = min(n, len(l.tools[name]))
	}
	var out []json.RawMessage
	for i := range n {
		for _, name := range flowOrder {
			out = append(out, l.tools[name][i])
		}
	}
	return out
}

// flowOrder are the tools of a purchase flow, in the order it calls them.
var flowOrder = []string{"create_checkout_session", "update_checkout_session", "complete_checkout"}

// echoScenario calls the echo floor's tool for the kept answers in turn:
// one a call, or perOp in a row a flow.
type echoScenario struct {
	perOp, kept int
}

func (s echoScenario) setup(context.Context, *benchClient) error { return nil }

func (s echoScenario) unit() (string, int) {
	if s.perOp > 1 {
		return "flows", s.perOp
	}
	return "calls", 1
}

func (s echoScenario) iterate(ctx context.Context, c *benchClient, r *recorder) bool {
	start := time.Now()
	for range s.perOp {
		n := c.echoed % s.kept
		c.echoed++
		if _, ok := c.call(ctx, r, noopTool, map[string]any{echoArg: n}); !ok {
			return true
		}
	}
	if s.perOp > 1 {
		r.observe("flow", time.Since(start))
	}
	r.done()
	return true
}

// runEcho measures the echo floor of ph, whose answers log kept: the floor
// started again, answering them. It answers nil when the phase kept none
// (every call failed).
func runEcho(ctx context.Context, o Options, floor Floor, ph *PhaseReport, log *answerLog, progress io.Writer) (*PhaseReport, error) {
	answers := log.answers(ph.CallsPerOp)
	if len(answers) == 0 {
		return nil, nil
	}
	f, err := os.CreateTemp("", "shop-bench-answers-*.json")
	if err != nil {
		return nil, fmt.Errorf("bench: echo floor: %w", err)
	}
	defer os.Remove(f.Name())
	err = json.NewEncoder(f).Encode(answers)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("bench: echo floor: write the answers: %w", err)
	}
	url, pid, stop, err := floor.Start(ctx, f.Name())
	if err != nil {
		return nil, fmt.Errorf("bench: start the echo floor: %w", err)
	}
	defer stop()
	name := ScenarioEcho
	if ph.CallsPerOp > 1 {
		name = ScenarioEchoFlow
	}
	sc := echoScenario{perOp: ph.CallsPerOp, kept: len(answers)}
	return runLoggedPhase(ctx, o, name, sc, []string{url}, []int{pid}, "", progress, nil)
}

// readAnswers reads the answers file of the echo floor: a JSON array of
// tool results.
func readAnswers(path string) ([]echoAnswer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench floor: answers: %w", err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("bench floor: answers %s: %w", path, err)
	}
	out := make([]echoAnswer, len(raw))
	for i, r := range raw {
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(r, &res); err != nil {
			return nil, fmt.Errorf("bench floor: answers %s: answer %d: %w", path, i, err)
		}
		out[i] = echoAnswer{structured: res.Structured}
		for _, c := range res.Content {
			out[i].text += c.Text
		}
	}
	return out, nil
}

// echoAnswer is one answer the echo floor gives: a text block and the
// structured content as it was, sent on unchanged.
type echoAnswer struct {
	text       string
	structured json.RawMessage
}

// result is the answer as the floor's tool returns it.
func (a echoAnswer) result() *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.text}}}
	if len(a.structured) > 0 {
		res.StructuredContent = a.structured
	}
	return res
}
