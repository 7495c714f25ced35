package acp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"shop/idempotency"
)

// MaxSkew is how far meta.timestamp of a signed call may be from the
// shop's clock.
const MaxSkew = 5 * time.Minute

// minSigningKey is the shortest signing key taken: HMAC-SHA256's own size.
const minSigningKey = 32

var keyAgentName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,39}$`)

// ParseSigningKeys reads SHOP_ACP_SIGNING_KEYS: comma-separated
// name:secret pairs, the name an agent of SHOP_ACP_TOKENS and the secret
// (at least 32 characters) the key the agent signs its calls with. An
// agent with a key must sign every call (see verify).
func ParseSigningKeys(s string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for i, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, secret, ok := strings.Cut(pair, ":")
		name, secret = strings.TrimSpace(name), strings.TrimSpace(secret)
		switch {
		case !ok:
			return nil, fmt.Errorf("SHOP_ACP_SIGNING_KEYS: entry %d is not name:secret", i+1)
		case !keyAgentName.MatchString(name):
			// The name is not shown: an entry written secret:name would put the secret in the error.
			return nil, fmt.Errorf("SHOP_ACP_SIGNING_KEYS: entry %d: the agent's name (before the colon) must be an agent of SHOP_ACP_TOKENS", i+1)
		case out[name] != nil:
			return nil, fmt.Errorf("SHOP_ACP_SIGNING_KEYS: entry %d: agent %s is named twice", i+1, name)
		case len(secret) < minSigningKey:
			return nil, fmt.Errorf("SHOP_ACP_SIGNING_KEYS: entry %d: agent %s's key is shorter than %d characters", i+1, name, minSigningKey)
		}
		out[name] = []byte(secret)
	}
	return out, nil
}

// Signature is how an agent signs a call of tool with arguments args
// (the whole {meta, id, payload}, meta.signature left out): the
// unpadded base64url HMAC-SHA256, under the agent's key, of the tool's
// name, a dot, and the arguments' canonical JSON (RFC 8785). meta.timestamp
// is among the signed arguments.
func Signature(key []byte, tool string, args json.RawMessage) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil || fields == nil {
		return "", fmt.Errorf("the arguments must be an object")
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(orNull(fields["meta"]), &meta); err != nil {
		return "", fmt.Errorf("meta must be an object")
	}
	delete(meta, "signature")
	m, err := json.Marshal(meta)
	if err != nil {
		return "", err
	}
	fields["meta"] = m
	whole, err := json.Marshal(fields)
	if err != nil {
		return "", err
	}
	c, err := idempotency.Canonical(whole)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(tool + "."))
	mac.Write(c)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

// verify checks a signed call when the agent has a key: meta.timestamp an
// RFC 3339 time within MaxSkew of now, meta.signature the Signature of the
// call. Nothing of the call is read further, stored or run before.
func (a *ACP) verify(agent, tool string, raw json.RawMessage) error {
	key := a.keys[agent]
	if key == nil {
		return nil
	}
	var args struct {
		Meta struct {
			Signature string `json:"signature"`
			Timestamp string `json:"timestamp"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return malformed("the arguments must be an object {meta, id, payload}")
	}
	m := args.Meta
	if m.Signature == "" || m.Timestamp == "" {
		return invalid("signature_required", "$.meta.signature",
			"this agent signs its calls: send meta.timestamp (RFC 3339) and meta.signature (see the shop's docs/acp-signing.md)").rpc(nil)
	}
	at, err := time.Parse(time.RFC3339, m.Timestamp)
	if err != nil {
		return invalid("invalid", "$.meta.timestamp", "must be an RFC 3339 time such as 2026-04-17T12:00:00Z").rpc(nil)
	}
	if d := a.now().Sub(at); d > MaxSkew || d < -MaxSkew {
		return invalid("invalid_signature", "$.meta.timestamp", "is more than %v from the shop's clock: sign again with the time now", MaxSkew).rpc(nil)
	}
	want, err := Signature(key, tool, raw)
	if err != nil {
		return malformed("%v", err)
	}
	got := strings.TrimRight(m.Signature, "=")
	if !hmac.Equal([]byte(got), []byte(want)) {
		return invalid("invalid_signature", "$.meta.signature", "does not match the call: sign the tool's name, a dot and the canonical JSON of the arguments without meta.signature").rpc(nil)
	}
	return nil
}
