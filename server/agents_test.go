package server_test

import (
	"strings"
	"testing"

	"shop/server"
)

func TestParseAgentTokens(t *testing.T) {
	const tok = "agent-token-0123456789abcdef"
	got, err := server.ParseAgentTokens(" chatgpt:" + tok + " , acme-2:" + tok + "x,")
	if err != nil || len(got) != 2 || got[0].Agent != "chatgpt" || got[1].Agent != "acme-2" {
		t.Fatalf("ParseAgentTokens: %+v, %v", got, err)
	}
	if none, err := server.ParseAgentTokens(""); err != nil || len(none) != 0 {
		t.Errorf("empty: %v, %v", none, err)
	}
	for _, tc := range []struct{ in, want string }{
		{tok, "entry 1 is not name:token"},
		{"Chat GPT:" + tok, "entry 1: the agent's name"},
		{"a:" + tok + ",a:" + tok + "y", "entry 2: agent a is named twice"},
		{"a:short", "entry 1: the token is too short"},
		{"a:" + tok + ",b:" + tok, "entry 2 has the same token as entry 1"},
	} {
		_, err := server.ParseAgentTokens(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseAgentTokens(%q) = %v, want %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), tok) {
			t.Errorf("the error names the token: %v", err)
		}
	}
}
