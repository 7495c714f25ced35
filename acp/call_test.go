package acp

import "testing"

// TestKept: an idempotency key keeps what it answers from the typed
// answer: the session's id and whether it answered the agent's
// interventions (a replay answers them again), or the ACP error.
func TestKept(t *testing.T) {
	offered := &Session{ID: "cs_1"}
	offered.Capabilities.Interventions = noInterventions()
	refused := &Error{Type: InvalidRequest, Code: "invalid"}
	for _, tc := range []struct {
		name string
		ans  answer
		want keptJSON
	}{
		{"a session", answer{session: &Session{ID: "cs_1"}}, keptJSON{Ref: "cs_1"}},
		{"a session answering interventions", answer{session: offered}, keptJSON{Ref: "cs_1", Offered: true}},
		{"an error", answer{err: refused}, keptJSON{Error: refused}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kept(tc.ans); got != tc.want {
				t.Errorf("kept = %+v, want %+v", got, tc.want)
			}
		})
	}
}
