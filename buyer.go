package shop

import (
	"context"
	"strings"
)

// Buyer identifies who calls the buyers' tools, for the limits on what one
// buyer may hold (CONTRACT.md §4) and the rate limits (§9): the host's
// anonymous user id when the call carries one, else the client's address as
// the server sees it. The two never collide: Key prefixes its kind.
type Buyer struct {
	// Subject is the host's anonymous id of its user (ChatGPT's
	// _meta["openai/subject"]), "" when the call carries none.
	Subject string
	// Address is the client's address as the rate limiter keys it (an IPv4
	// address, or an IPv6 /64 prefix), "" over stdio.
	Address string
}

// Key is the buyer's identity as one string: "subject:…" when there is a
// host user id, else "addr:…", else "" (nobody known, as over stdio).
func (b Buyer) Key() string {
	switch {
	case b.Subject != "":
		return subjectPrefix + b.Subject
	case b.Address != "":
		return "addr:" + b.Address
	}
	return ""
}

// IsHostUser reports whether key, a Buyer's Key, names a host's user (a
// person) rather than a client address, which many people may share (every
// user of a host that sends no user id).
func IsHostUser(key string) bool { return strings.HasPrefix(key, subjectPrefix) }

const subjectPrefix = "subject:"

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
