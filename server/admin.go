package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"shop"
)

// AdminToken is a staff member's bearer token as the shop keeps it: its
// SHA-256 and the actor it stands for, never the token itself.
type AdminToken struct {
	Actor shop.Actor
	hash  [sha256.Size]byte
}

// minAdminTokenLen keeps admin tokens out of guessing range.
const minAdminTokenLen = 24

// ParseAdminTokens reads SHOP_ADMIN_TOKENS: comma-separated role:token pairs
// ("owner:…,viewer:…"). Each actor is labelled with the first 8 hex digits
// of its token's hash, which the audit log shows. It keeps only the hashes:
// callers should parse the variable once, at start, and keep no copy of it.
// A token may not be empty, shorter than 24 characters, hold spaces, or be
// given twice (one token, one staff member, one role).
func ParseAdminTokens(s string) ([]AdminToken, error) {
	var out []AdminToken
	seen := map[[sha256.Size]byte]int{} // a token's hash → its entry
	for i, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		role, token, ok := strings.Cut(pair, ":")
		token = strings.TrimSpace(token)
		r := shop.Role(strings.ToLower(strings.TrimSpace(role)))
		switch {
		case !ok:
			return nil, fmt.Errorf("SHOP_ADMIN_TOKENS: entry %d is not role:token", i+1)
		case r != shop.Viewer && r != shop.Support && r != shop.Owner:
			// The role is not shown: an entry written token:role, or a token
			// with a colon and no role, would put the secret in the error.
			return nil, fmt.Errorf("SHOP_ADMIN_TOKENS: entry %d: the role (before the colon) is not viewer, support or owner; write each entry as role:token, such as owner:<token>", i+1)
		}
		h, err := tokenHash("SHOP_ADMIN_TOKENS", i+1, token, seen, "give each staff member a token of their own")
		if err != nil {
			return nil, err
		}
		out = append(out, AdminToken{Actor: shop.Actor{Role: r, Label: hex.EncodeToString(h[:4])}, hash: h})
	}
	return out, nil
}

// tokenHash checks the token of entry n of variable and returns its
// SHA-256, refusing one that is empty, shorter than 24 characters, holds
// spaces, or was given before (seen, which it updates: dup says what to do).
func tokenHash(variable string, n int, token string, seen map[[sha256.Size]byte]int, dup string) ([sha256.Size]byte, error) {
	var h [sha256.Size]byte
	switch {
	case token == "":
		return h, fmt.Errorf("%s: entry %d: the token is empty; use at least %d random characters (openssl rand -hex 24)", variable, n, minAdminTokenLen)
	case len(token) < minAdminTokenLen:
		return h, fmt.Errorf("%s: entry %d: the token is too short; use at least %d random characters (openssl rand -hex 24)", variable, n, minAdminTokenLen)
	case strings.IndexFunc(token, func(c rune) bool { return c <= ' ' || c == 0x7f }) >= 0:
		return h, fmt.Errorf("%s: entry %d: the token has spaces or control characters, which no Authorization header can carry; use letters and digits (openssl rand -hex 24)", variable, n)
	}
	h = sha256.Sum256([]byte(token))
	if first, ok := seen[h]; ok {
		return h, fmt.Errorf("%s: entry %d has the same token as entry %d; %s", variable, n, first, dup)
	}
	seen[h] = n
	return h, nil
}

// actorExtra is where a verified token's actor travels in auth.TokenInfo.
const actorExtra = "shop.actor"

// lookup finds the actor of a bearer token, comparing its hash with every
// known one in constant time.
func lookup(tokens []AdminToken, bearer string) (shop.Actor, bool) {
	h := sha256.Sum256([]byte(bearer))
	var found shop.Actor
	ok := 0
	for _, t := range tokens {
		if subtle.ConstantTimeCompare(h[:], t.hash[:]) == 1 {
			found, ok = t.Actor, 1
		}
	}
	return found, ok == 1
}

// adminAuth admits requests with a known bearer token and hands the actor to
// the MCP handler (through go-sdk's TokenInfo); any other request gets 401
// with WWW-Authenticate.
func adminAuth(tokens []AdminToken, next http.Handler) http.Handler {
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		a, ok := lookup(tokens, token)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: a.String(), Extra: map[string]any{actorExtra: a}}, nil
	}
	inner := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := strings.Fields(r.Header.Get("Authorization"))
		if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
			unauthorized(w, "send Authorization: Bearer <admin token>")
			return
		}
		if _, ok := lookup(tokens, fields[1]); !ok {
			unauthorized(w, "unknown admin token")
			return
		}
		inner.ServeHTTP(w, r)
	})
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="shop admin"`)
	http.Error(w, msg, http.StatusUnauthorized)
}
