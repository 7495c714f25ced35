package bench

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is a tool result as the shop answers one, for the echo tests.
func session(id, status string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "Checkout session " + id + ": " + status}},
		StructuredContent: map[string]any{"id": id, "status": status, "line_items": []any{map[string]any{"id": "li_1", "total": float64(1250)}}},
	}
}

// TestEchoAnswers: a phase's answers are kept up to echoKeep a tool and
// listed as the echo scenario asks for them: flow by flow in the purchase's
// order of tools, or every tool's in turn.
func TestEchoAnswers(t *testing.T) {
	log := newAnswerLog()
	for i := range echoKeep + 5 {
		id := string(rune('a' + i%26))
		log.keep("complete_checkout", session(id, "completed"))
		log.keep("create_checkout_session", session(id, "not_ready_for_payment"))
		if i < 2 {
			log.keep("update_checkout_session", session(id, "ready_for_payment"))
		}
	}
	statuses := func(answers []json.RawMessage) []string {
		var out []string
		for _, a := range answers {
			var res struct {
				Structured struct{ Status string } `json:"structuredContent"`
			}
			if err := json.Unmarshal(a, &res); err != nil {
				t.Fatal(err)
			}
			out = append(out, res.Structured.Status)
		}
		return out
	}
	flows := statuses(log.answers(3))
	want := []string{"not_ready_for_payment", "ready_for_payment", "completed", "not_ready_for_payment", "ready_for_payment", "completed"}
	if diff := cmp.Diff(want, flows); diff != "" {
		t.Errorf("flows (-want +got):\n%s", diff)
	}
	calls := statuses(log.answers(1))
	if len(calls) != 2*echoKeep+2 || calls[0] != "completed" || calls[echoKeep] != "not_ready_for_payment" || calls[len(calls)-1] != "ready_for_payment" {
		t.Errorf("calls: %d answers %q…, want %d, each tool's in turn", len(calls), calls[:3], 2*echoKeep+2)
	}
}

// TestEchoFloorAnswers: the floor, given a file of kept answers, gives the
// one a call asks for by its index, text and structured content as kept,
// and "ok" to a call that asks for none.
func TestEchoFloorAnswers(t *testing.T) {
	log := newAnswerLog()
	kept := []*mcp.CallToolResult{session("cs_1", "not_ready_for_payment"), session("cs_2", "completed")}
	for _, res := range kept {
		log.keep("search_products", res)
	}
	path := filepath.Join(t.TempDir(), "answers.json")
	b, err := json.Marshal(log.answers(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	answers, err := readAnswers(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(FloorServer{Logger: slog.New(slog.DiscardHandler), Answers: answers}.handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "echo-test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		args any
		want *mcp.CallToolResult
	}{
		{map[string]any{echoArg: 1}, kept[1]},
		{map[string]any{echoArg: 2}, kept[0]}, // modulo their number
		{map[string]any{}, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: noopTool, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		// What go-sdk adds to every result (_meta, resultType) aside.
		got, _ := json.Marshal(mcp.CallToolResult{Content: res.Content, StructuredContent: res.StructuredContent})
		want, _ := json.Marshal(c.want)
		if string(got) != string(want) {
			t.Errorf("%v: got %s, want %s", c.args, got, want)
		}
	}
}
