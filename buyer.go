package shop

import (
	"context"
	"strings"
)

// Buyer identifies who calls the buyers' tools, for the limits on what one
// buyer may hold (CONTRACT.md §4) and the rate limits (§9): the linked
// account a valid bearer token names, else the host's anonymous user id when
// the call carries one, else the client's address as the server sees it.
// They never collide: Key prefixes its kind.
type Buyer struct {
	// AccountID is the buyer account a valid access token names (CONTRACT.md
	// §10), "" for a guest. Only the server sets it, after checking the token.
	AccountID string
	// AccountEmail is that account's email, verified by the login's code.
	AccountEmail string
	// Scopes are what the token allows ("orders:read", "account", …).
	Scopes []string

	// Subject is the host's anonymous id of its user (ChatGPT's
	// _meta["openai/subject"]), "" when the call carries none.
	Subject string
	// Address is the client's address as the rate limiter keys it (an IPv4
	// address, or an IPv6 /64 prefix), "" over stdio.
	Address string
}

// Key is the buyer's identity as one string: "account:…" for a linked
// buyer, "subject:…" when there is a host user id, else "addr:…", else ""
// (nobody known, as over stdio).
func (b Buyer) Key() string {
	switch {
	case b.AccountID != "":
		return accountPrefix + b.AccountID
	case b.Subject != "":
		return subjectPrefix + b.Subject
	case b.Address != "":
		return "addr:" + b.Address
	}
	return ""
}

// Linked reports whether the buyer is a linked account: a person the shop
// verified, not an id the caller chose.
func (b Buyer) Linked() bool { return b.AccountID != "" }

// HasScope reports whether the buyer's token allows scope.
func (b Buyer) HasScope(scope string) bool {
	for _, s := range b.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// IsHostUser reports whether key, a Buyer's Key, names a person (a host's
// user or a linked account) rather than a client address, which many people
// may share (every user of a host that sends no user id).
func IsHostUser(key string) bool {
	return strings.HasPrefix(key, subjectPrefix) || IsAccount(key)
}

// IsAccount reports whether key, a Buyer's Key, names a linked account.
func IsAccount(key string) bool { return strings.HasPrefix(key, accountPrefix) }

const (
	subjectPrefix = "subject:"
	accountPrefix = "account:"
)

type buyerKey struct{}

// WithBuyer returns ctx carrying the buyer who makes the call.
func WithBuyer(ctx context.Context, b Buyer) context.Context {
	return context.WithValue(ctx, buyerKey{}, b)
}

// BuyerFrom returns the buyer ctx carries, the zero Buyer when none.
func BuyerFrom(ctx context.Context) Buyer {
	b, _ := ctx.Value(buyerKey{}).(Buyer)
	return b
}
