package shop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"strings"
)

// Buyer identifies who calls the buyers' tools, for the limits on what one
// buyer may hold (docs/buying.md) and the rate limits (docs/limits.md): the linked
// account a valid bearer token names, else the host's anonymous user id when
// the call carries one, else the buyer an agent names (an agent platform
// serves many buyers from one address), else the client's address as the
// server sees it. They never collide: Key prefixes its kind.
type Buyer struct {
	// AccountID is the buyer account a valid access token names (docs/accounts.md),
	// "" for a guest. Only the server sets it, after checking the token.
	AccountID string
	// AccountEmail is that account's email, verified by the login's code.
	AccountEmail string
	// Scopes are what the token allows ("orders:read", "account", …).
	Scopes []string

	// Subject is the host's anonymous id of its user (ChatGPT's
	// _meta["openai/subject"]), "" when the call carries none.
	Subject string
	// Agent is the buyer as an agent platform names them on the agents'
	// endpoints: the dialect, the agent (a UCP agent's profile URL) and the
	// buyer's email, as one string ("ucp:https://…/agent.json:ada@example.com");
	// "" when the call names no buyer. Address stays the client's address,
	// for the aggregates over everything one address holds.
	Agent string
	// Address is the client's address as the rate limiter keys it (an IPv4
	// address, or an IPv6 /64 prefix), "" over stdio.
	Address string
}

// Key is the buyer's identity as one string, the first that applies:
// "account:…" for a linked buyer, "subject:…" when there is a host user id,
// "agent:…" (the SHA-256 of Agent, so that its length is fixed) when an
// agent names the buyer, else "addr:…", else "" (nobody known, as over
// stdio).
func (b Buyer) Key() string {
	switch {
	case b.AccountID != "":
		return accountPrefix + b.AccountID
	case b.Subject != "":
		return subjectPrefix + b.Subject
	case b.Agent != "":
		sum := sha256.Sum256([]byte(b.Agent))
		return agentPrefix + hex.EncodeToString(sum[:])
	case b.Address != "":
		return "addr:" + b.Address
	}
	return ""
}

// DefaultNetworkMultiple is how many times a per-address bound an IPv6 /48
// may reach (NetworkOf): a /64 is one client, but one customer of a
// hosting provider commonly holds a whole /48, 65,536 /64s.
const DefaultNetworkMultiple = 8

// NetworkOf is the second tier of a client address key (Buyer.Address): the
// /48 an IPv6 /64 lies in ("2001:db8:1::/48"), over which every per-address
// bound also holds at a multiple (DefaultNetworkMultiple); "" for an IPv4
// address, or none, which are their own network.
func NetworkOf(address string) string {
	p, err := netip.ParsePrefix(address)
	if err != nil || !p.Addr().Is6() || p.Addr().Is4In6() || p.Bits() < 48 {
		return ""
	}
	return netip.PrefixFrom(p.Addr(), 48).Masked().String()
}

// Network is NetworkOf the buyer's Address.
func (b Buyer) Network() string { return NetworkOf(b.Address) }

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
// user, an agent's buyer or a linked account) rather than a client address,
// which many people may share (every user of a host that sends no user id).
func IsHostUser(key string) bool {
	return strings.HasPrefix(key, subjectPrefix) || strings.HasPrefix(key, agentPrefix) || IsAccount(key)
}

// IsAccount reports whether key, a Buyer's Key, names a linked account.
func IsAccount(key string) bool { return strings.HasPrefix(key, accountPrefix) }

const (
	subjectPrefix = "subject:"
	accountPrefix = "account:"
	agentPrefix   = "agent:"
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

type operationKey struct{}

// WithOperation returns ctx naming the operation (a tool's name) that a
// call performs, so that what it costs below (the database's statements and
// commits) is counted by operation.
func WithOperation(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, operationKey{}, name)
}

// OperationFrom returns the operation ctx names, "" when none.
func OperationFrom(ctx context.Context) string {
	op, _ := ctx.Value(operationKey{}).(string)
	return op
}
