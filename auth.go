package shop

import "strings"

// The scopes a buyer grants a host when linking their account (docs/accounts.md),
// each named for what it allows.
const (
	// ScopeOrdersRead lets the host read the buyer's own orders.
	ScopeOrdersRead = "orders:read"
	// ScopeAccount lets the host read and change the buyer's account
	// (email, saved addresses) and delete it.
	ScopeAccount = "account"
	// ScopePayments lets the host list and use the buyer's saved payment methods.
	ScopePayments = "payments"
)

// Scopes are all the scopes a buyer may grant, in the order they are shown.
var Scopes = []string{ScopeOrdersRead, ScopeAccount, ScopePayments}

// Unauthorized: the tool needs the buyer's linked account (or a scope the
// link did not grant); the buyer can connect their account and call again.
const Unauthorized Code = "unauthorized"

// AuthRequirement is what a tool asks of the buyer's linked account. The
// zero value is a guest tool: anyone may call it, linked or not.
type AuthRequirement struct {
	// Scopes are the scopes the tool needs; none for a guest tool.
	Scopes []string
	// Optional marks a tool that anyone may call and that does more for a
	// linked buyer whose token grants Scopes.
	Optional bool
}

// Guest reports whether anyone may call the tool without a linked account.
func (a AuthRequirement) Guest() bool { return len(a.Scopes) == 0 || a.Optional }

// SecurityScheme is one entry of a tool descriptor's securitySchemes, as
// hosts read it: {"type":"noauth"} or {"type":"oauth2","scopes":[…]}.
type SecurityScheme struct {
	Type   string   `json:"type"`
	Scopes []string `json:"scopes,omitempty"`
}

// SecuritySchemes are the tool's securitySchemes: noauth for a guest tool,
// oauth2 with its scopes for an account tool, both for a tool that does
// more when linked.
func (a AuthRequirement) SecuritySchemes() []SecurityScheme {
	var out []SecurityScheme
	if a.Guest() {
		out = append(out, SecurityScheme{Type: "noauth"})
	}
	if len(a.Scopes) > 0 {
		out = append(out, SecurityScheme{Type: "oauth2", Scopes: a.Scopes})
	}
	return out
}

// Allows reports whether b may call a tool with this requirement: a guest
// tool always, an account tool only for a linked buyer whose token grants
// every scope it needs.
func (a AuthRequirement) Allows(b Buyer) bool {
	if a.Guest() {
		return true
	}
	if !b.Linked() {
		return false
	}
	for _, s := range a.Scopes {
		if !b.HasScope(s) {
			return false
		}
	}
	return true
}

// Denied is the refusal of a buyer a tool does not allow, for the model:
// it says the buyer can connect their account.
func (a AuthRequirement) Denied(b Buyer) *Error {
	if b.Linked() {
		return Errorf(Unauthorized, "", "The buyer's linked account did not grant this (%s). Ask the buyer to connect their account again and allow it.", strings.Join(a.Scopes, ", "))
	}
	return Errorf(Unauthorized, "", "This needs the buyer's account with the shop. Ask the buyer to connect their account (the host offers a button to sign in with their email), then call this tool again.")
}
