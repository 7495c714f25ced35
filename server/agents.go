package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"shop"
)

// AgentToken is an agent's bearer token for the agents' endpoints
// (/acp/mcp) as the shop keeps it: its SHA-256 and the agent's name, never
// the token itself.
type AgentToken struct {
	Agent string
	hash  [sha256.Size]byte
	open  bool
}

// OpenToAll is the AgentTokens entry that admits callers without a token
// (shop serve --acp-open) as the agent "anonymous", beside the agents whose
// tokens are listed too. Without it and without tokens /acp/mcp is closed.
func OpenToAll() AgentToken { return AgentToken{Agent: "anonymous", open: true} }

var agentName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,39}$`)

// ParseAgentTokens reads SHOP_ACP_TOKENS: comma-separated name:token pairs
// ("chatgpt:…,acme-agent:…"), the name (lower-case letters, digits, _ . -,
// at most 40) identifying the agent in logs and scoping its idempotency
// keys. Tokens follow the admin tokens' rules (at least 24 characters, no
// spaces, no two alike) and only their hashes are kept.
func ParseAgentTokens(s string) ([]AgentToken, error) {
	var out []AgentToken
	seen := map[[sha256.Size]byte]int{}
	names := map[string]bool{}
	for i, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, token, ok := strings.Cut(pair, ":")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("SHOP_ACP_TOKENS: entry %d is not name:token", i+1)
		case !agentName.MatchString(name):
			// The name is not shown: an entry written token:name would put the secret in the error.
			return nil, fmt.Errorf("SHOP_ACP_TOKENS: entry %d: the agent's name (before the colon) must be 1 to 40 lower-case letters, digits, _ . or -", i+1)
		case names[name]:
			return nil, fmt.Errorf("SHOP_ACP_TOKENS: entry %d: agent %s is named twice", i+1, name)
		}
		h, err := tokenHash("SHOP_ACP_TOKENS", i+1, strings.TrimSpace(token), seen, "give each agent a token of its own")
		if err != nil {
			return nil, err
		}
		names[name] = true
		out = append(out, AgentToken{Agent: name, hash: h})
	}
	return out, nil
}

// agentAuth admits requests with a known agent bearer token and puts the
// agent's name in their context (shop.WithAgent); any other request gets
// 401 with WWW-Authenticate. With OpenToAll among the tokens, a request
// without Authorization is the agent "anonymous"; with no tokens at all
// the endpoint is closed: 403, saying how to open it.
func agentAuth(tokens []AgentToken, next http.Handler) http.Handler {
	open := false
	for _, t := range tokens {
		open = open || t.open
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(tokens) == 0 {
			http.Error(w, "/acp/mcp is closed: the merchant admits agents by setting SHOP_ACP_TOKENS=name:token (each agent then sends Authorization: Bearer <token>), or opens it to every caller with shop serve --acp-open", http.StatusForbidden)
			return
		}
		if open && r.Header.Get("Authorization") == "" {
			next.ServeHTTP(w, r)
			return
		}
		fields := strings.Fields(r.Header.Get("Authorization"))
		if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
			agentUnauthorized(w, "send Authorization: Bearer <agent token>")
			return
		}
		h := sha256.Sum256([]byte(fields[1]))
		agent := ""
		for _, t := range tokens {
			if !t.open && subtle.ConstantTimeCompare(h[:], t.hash[:]) == 1 {
				agent = t.Agent
			}
		}
		if agent == "" {
			agentUnauthorized(w, "unknown agent token")
			return
		}
		next.ServeHTTP(w, r.WithContext(shop.WithAgent(r.Context(), agent)))
	})
}

func agentUnauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="shop agents"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// protocolError answers a tool's *shop.ProtocolError as the JSON-RPC
// error it names, logging its cause when it has one.
func protocolError(ctx context.Context, logger *slog.Logger, pe *shop.ProtocolError, attrs []any) error {
	attrs = append(attrs, "rpc_code", pe.Code, "message", pe.Message)
	setStatus(ctx, pe.Status)
	switch {
	case pe.Err != nil && !errors.Is(pe.Err, context.Canceled):
		logger.ErrorContext(ctx, "tool call failed", append(attrs, "err", pe.Err)...)
	default:
		logger.InfoContext(ctx, "tool call refused", attrs...)
	}
	return &jsonrpc.Error{Code: pe.Code, Message: pe.Message, Data: pe.Data}
}
