package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"shop/database"
	"shop/database/dbtest"
	"shop/idempotency"
)

// TestACPClosedByDefault: with no SHOP_ACP_TOKENS and no --acp-open,
// /acp/mcp answers 403 saying how to open it, and runs nothing.
func TestACPClosedByDefault(t *testing.T) {
	r := startShop(t, dbtest.DSN(t, database.SQLite), nil)
	res, err := http.Post(r.url+"/acp/mcp", "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "SHOP_ACP_TOKENS") || !strings.Contains(string(body), "--acp-open") {
		t.Errorf("closed /acp/mcp: HTTP %d %q, want 403 naming SHOP_ACP_TOKENS and --acp-open", res.StatusCode, body)
	}
	if !strings.Contains(r.logs.String(), "/acp/mcp is closed") {
		t.Errorf("start-up log does not say the endpoint is closed:\n%s", r.logs.String())
	}
}

// TestACPOpen: with --acp-open the endpoint takes callers without a
// token, and the idempotency keys of one caller are not another's: a
// second address replaying the first's key gets a session of its own,
// never the first one's (with the buyer's email and address).
func TestACPOpen(t *testing.T) {
	r := startShop(t, dbtest.DSN(t, database.SQLite), nil, "--acp-open", "--client-ip-header", "X-Forwarded-For")
	if !strings.Contains(r.logs.String(), "--acp-open: /acp/mcp admits every caller") {
		t.Errorf("start-up log does not say the endpoint is open:\n%s", r.logs.String())
	}
	first, second := acpClient{url: r.url, from: "203.0.113.7"}, acpClient{url: r.url, from: "198.51.100.9"}
	key := newKey(t, "create")
	payload := shippable("enamel-camp-mug-cream", 1)
	cs := first.call(t, "create_checkout_session", acpArgs(key, "", payload)).session(t)
	if cs.Status != "ready_for_payment" {
		t.Fatalf("open endpoint: %s", cs.Status)
	}
	if again := first.call(t, "create_checkout_session", acpArgs(key, "", payload)).session(t); again.ID != cs.ID {
		t.Errorf("the first caller's replay made session %s, want %s", again.ID, cs.ID)
	}
	theirs := second.call(t, "create_checkout_session", acpArgs(key, "", payload))
	if theirs.Error == nil && theirs.session(t).ID == cs.ID {
		t.Errorf("another address replaying the key got the first caller's session %s", cs.ID)
	}
}

// TestACPIDBound: an envelope id longer than acp.MaxIDLen is refused
// naming $.id before anything is keyed, and 40 calls with long ids and
// keys leave the idempotency table as it was (neither their refusals nor
// their ids are stored).
func TestACPIDBound(t *testing.T) {
	s := startACPShop(t, database.SQLite)
	e := s.agent.call(t, "get_checkout_session", acpArgs("", strings.Repeat("c", 257), nil)).acpErr(t)
	if e.Param != "$.id" || !strings.Contains(e.Message, "256") {
		t.Errorf("257-character id: %+v, want param $.id naming the bound", e)
	}
	if e := s.agent.call(t, "get_checkout_session", acpArgs("", "cs_"+strings.Repeat("c", 253), nil)).acpErr(t); strings.Contains(e.Message, "at most") {
		t.Errorf("256-character id: %+v, refused for its length", e)
	}
	size := func() int64 {
		return s.count(t, "SELECT COALESCE(SUM(LENGTH(scope) + LENGTH(idem_key) + LENGTH(answer)), 0) FROM idempotency_keys")
	}
	before := size()
	upd := map[string]any{"buyer": map[string]any{"email": "ada@example.com"}}
	for i := range 40 {
		long := strings.Repeat("x", 200<<10)
		if i%2 == 1 {
			long = "cs_" + strings.Repeat("y", 250) // within the bound: a session that does not exist
		}
		a := s.agent.call(t, "update_checkout_session", acpArgs(newKey(t, "fill"), long, upd))
		if a.Error == nil {
			t.Fatalf("update of no session answered a session")
		}
	}
	if after := size(); after != before {
		t.Errorf("40 refused calls grew the stored keys from %d to %d bytes", before, after)
	}
}

// TestACPSignatures: an agent with a key in SHOP_ACP_SIGNING_KEYS must
// sign its calls (docs/acp-signing.md): unsigned, badly signed, stale or
// replayed onto another tool, the call is refused before it runs; signed,
// it runs. An agent without a key needs no signature.
func TestACPSignatures(t *testing.T) {
	const secret = "agent-one-signing-key-0123456789abcdef"
	env := acpEnv()
	env["SHOP_ACP_SIGNING_KEYS"] = "agent-one:" + secret
	s := startACPShopEnv(t, dbtest.DSN(t, database.SQLite), env)
	sign := func(tool string, args map[string]any, at time.Time, key string) map[string]any {
		meta := args["meta"].(map[string]any)
		meta["timestamp"] = at.UTC().Format(time.RFC3339)
		delete(meta, "signature")
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		c, err := idempotency.Canonical(raw)
		if err != nil {
			t.Fatal(err)
		}
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write([]byte(tool + "."))
		mac.Write(c)
		meta["signature"] = base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
		return args
	}
	create := func() map[string]any { return acpArgs(newKey(t, "signed"), "", shippable("enamel-camp-mug-cream", 1)) }
	const tool = "create_checkout_session"
	now := time.Now()
	for _, c := range []struct {
		name  string
		args  map[string]any
		param string
	}{
		{"Unsigned", create(), "$.meta.signature"},
		{"OtherKey", sign(tool, create(), now, strings.Repeat("k", 40)), "$.meta.signature"},
		{"OtherTool", sign("update_checkout_session", create(), now, secret), "$.meta.signature"},
		{"Stale", sign(tool, create(), now.Add(-10*time.Minute), secret), "$.meta.timestamp"},
	} {
		if e := s.agent.call(t, tool, c.args).acpErr(t); e.Param != c.param {
			t.Errorf("%s: %+v, want a refusal naming %s", c.name, e, c.param)
		}
	}
	tampered := sign(tool, create(), now, secret)
	tampered["payload"].(map[string]any)["line_items"] = []any{map[string]any{"id": "enamel-camp-mug-cream", "quantity": 2}}
	if e := s.agent.call(t, tool, tampered).acpErr(t); e.Code != "invalid_signature" {
		t.Errorf("a payload changed after signing: %+v", e)
	}
	if n := s.count(t, "SELECT COUNT(*) FROM checkout_sessions"); n != 0 {
		t.Errorf("refused calls made %d sessions", n)
	}
	if cs := s.agent.call(t, tool, sign(tool, create(), now, secret)).session(t); cs.Status != "ready_for_payment" {
		t.Errorf("signed call: %s", cs.Status)
	}
	other := acpClient{url: s.url, token: acpOtherToken}
	if cs := other.call(t, tool, create()).session(t); cs.Status != "ready_for_payment" {
		t.Errorf("agent-two, without a key, unsigned: %s", cs.Status)
	}
	before := s.count(t, "SELECT COUNT(*) FROM checkout_sessions")

	// A signed create replayed within the window makes one session: with
	// its idempotency key, the replays are answered that session; without
	// one, the signed call is refused.
	replayed := sign(tool, create(), now, secret)
	first := s.agent.call(t, tool, replayed).session(t)
	for range 4 {
		if again := s.agent.call(t, tool, replayed).session(t); again.ID != first.ID {
			t.Errorf("a replayed signed create answered session %s, want %s", again.ID, first.ID)
		}
	}
	unkeyed := sign(tool, acpArgs("", "", shippable("enamel-camp-mug-cream", 1)), now, secret)
	for range 5 {
		if e := s.agent.call(t, tool, unkeyed).acpErr(t); e.Code != "idempotency_key_required" || e.Param != "$.meta.idempotency_key" {
			t.Errorf("a signed create without an idempotency key: %+v, want idempotency_key_required", e)
		}
	}
	if n := s.count(t, "SELECT COUNT(*) FROM checkout_sessions"); n != before+1 {
		t.Errorf("a signed create sent 5 times with its key and 5 times without one made %d sessions, want 1", n-before)
	}
}

// TestACPKeysKeepReferences: a key keeps the id of the session its call
// made or changed, not the session (docs/limits.md): after 20 updates with
// fresh keys no stored answer is larger than a small record, and a replay
// of a key answers the session as it stands.
func TestACPKeysKeepReferences(t *testing.T) {
	s := startACPShop(t, database.SQLite)
	created := newKey(t, "create")
	cs := s.agent.call(t, "create_checkout_session", acpArgs(created, "", shippable("enamel-camp-mug-cream", 2))).session(t)
	upd := map[string]any{"buyer": map[string]any{"full_name": "Ada Agent", "email": "ada@example.com"}}
	for range 20 {
		if a := s.agent.call(t, "update_checkout_session", acpArgs(newKey(t, "update"), cs.ID, upd)); a.Error != nil {
			t.Fatalf("update: %+v", a.Error)
		}
	}
	if n := s.count(t, "SELECT MAX(LENGTH(answer)) FROM idempotency_keys"); n > 128 {
		t.Errorf("a stored answer of %d bytes, want a record of the session's id (at most 128)", n)
	}
	if again := s.agent.call(t, "create_checkout_session", acpArgs(created, "", shippable("enamel-camp-mug-cream", 2))).session(t); again.ID != cs.ID || again.Status != cs.Status {
		t.Errorf("a replay of the create: %s %s, want %s %s", again.ID, again.Status, cs.ID, cs.Status)
	}
}
