package checkout

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"shop"
)

// Limits bound what one buyer may hold at once, so that nobody can hold the
// shop's stock hostage (docs/buying.md). A buyer is the host's anonymous user
// id when the call carries one, else the client's address (shop.BuyerFrom).
// A zero field takes its default; see [Policy.BuyerLimits].
type Limits struct {
	// UnitsPerLine bounds the quantity of one line (default 10).
	UnitsPerLine int64 `yaml:"units_per_line"`
	// UnitsPerVariant bounds the units of one variant one buyer holds
	// across all their open sessions (default 10).
	UnitsPerVariant int64 `yaml:"units_per_variant"`
	// UnitsPerBuyer bounds the units one buyer holds across all their open
	// sessions (default 50).
	UnitsPerBuyer int64 `yaml:"units_per_buyer"`
	// OpenSessions bounds the sessions ready for payment one buyer has at
	// once (default 5).
	OpenSessions int64 `yaml:"open_sessions"`

	// UnitsPerAccount replaces UnitsPerBuyer for a linked account that has
	// paid for an order, who is counted by account alone (default 200). An
	// account with no paid order holds what a guest holds.
	UnitsPerAccount int64 `yaml:"units_per_account"`
	// UnitsPerAddress bounds the units held at once by all the buyers
	// calling from one client address but the accounts that have paid for
	// an order, whatever ids they send (default 100: a household).
	// HostAddresses raise it for a host's egress addresses.
	UnitsPerAddress int64 `yaml:"units_per_address"`
	// UnverifiedShare bounds the percentage of each variant's stock on hand
	// that buyers other than the accounts that have paid for an order hold
	// at once (default 50; 100: no bound). At least one unit may always be
	// held.
	UnverifiedShare int64 `yaml:"unverified_share_percent"`
	// HostAddresses are the egress addresses of hosts whose many users
	// share them: each raises UnitsPerAddress to its Units for its
	// addresses, and the per-address hourly caps below in proportion.
	HostAddresses []HostAddress `yaml:"host_addresses"`
	// NetworkMultiple is the second tier of every bound per client address
	// (UnitsPerAddress, SessionsPerAddressHour, PaymentsPerAddressHour):
	// each also holds, this many times larger, over the IPv6 /48 the
	// address's /64 lies in, since one customer of a hosting provider may
	// hold a whole /48 (default 8).
	NetworkMultiple int64 `yaml:"network_multiple"`

	// SessionsPerHour bounds the checkout sessions one buyer (a host's user
	// or a linked account) creates in an hour, and apart from them their
	// carts (default 30).
	SessionsPerHour int64 `yaml:"sessions_per_hour"`
	// SessionsPerAddressHour bounds the checkout sessions, and apart the
	// carts, created from one client address in an hour (default 120).
	SessionsPerAddressHour int64 `yaml:"sessions_per_address_hour"`
	// PaymentsPerHour bounds complete_checkout's payment attempts of one
	// buyer (a host's user or a linked account) in an hour (default 10);
	// PaymentsPerAddressHour those from one client address (default 30).
	PaymentsPerHour        int64 `yaml:"payments_per_hour"`
	PaymentsPerAddressHour int64 `yaml:"payments_per_address_hour"`
	// DeclinesBeforeLock is how many declined payments, each within
	// DeclineLockMinutes of the last, make a session refuse more card
	// payments until DeclineLockMinutes after the last (defaults 5, 15).
	DeclinesBeforeLock int64 `yaml:"declines_before_lock"`
	DeclineLockMinutes int64 `yaml:"decline_lock_minutes"`
}

// HostAddress is an AI host's egress range, behind which many buyers call
// from one address (policy limits.host_addresses, or serve's
// --host-addresses CIDR:units).
type HostAddress struct {
	// CIDR is the range, such as "203.0.113.0/24" or "2001:db8::/32".
	CIDR string `yaml:"cidr"`
	// Units is what all the unverified buyers behind the range may hold at
	// once, in place of UnitsPerAddress.
	Units int64 `yaml:"units"`
}

// NoHourlyCaps lifts the caps per hour on the sessions, carts and payments
// of a buyer and of an address to their bounds: for a shop served without
// rate limits (serve's --rate-limit -1, as for a benchmark).
func (l *Limits) NoHourlyCaps() {
	l.SessionsPerHour, l.SessionsPerAddressHour = maxPerHour, maxPerHour
	l.PaymentsPerHour, l.PaymentsPerAddressHour = maxPerHour, maxPerHour
}

// ParseHostAddresses parses serve's --host-addresses: comma-separated
// CIDR:units, such as "203.0.113.0/24:5000,2001:db8::/32:5000".
func ParseHostAddresses(s string) ([]HostAddress, error) {
	var out []HostAddress
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i := strings.LastIndex(part, ":")
		if i < 0 {
			return nil, fmt.Errorf("%q: want CIDR:units, such as 203.0.113.0/24:5000", part)
		}
		h := HostAddress{CIDR: part[:i]}
		n, err := strconv.ParseInt(part[i+1:], 10, 64)
		if err != nil || n < 1 || n > maxUnitsPerAddress {
			return nil, fmt.Errorf("%q: the units must be a whole number from 1 to %d", part, maxUnitsPerAddress)
		}
		h.Units = n
		if _, err := netip.ParsePrefix(h.CIDR); err != nil {
			return nil, fmt.Errorf("%q: %q is not a CIDR range such as 203.0.113.0/24", part, h.CIDR)
		}
		out = append(out, h)
	}
	return out, nil
}

// Sessions bound how long a checkout session lives and how long an ended one
// is kept. A zero field takes its default; see [Policy.SessionLifetime] and
// [Policy.SessionRetention].
type Sessions struct {
	// LifetimeHours is a session's absolute lifetime from its creation,
	// after which it expires whatever happens (default 6). Within it, a
	// session and its holds expire the TTL after their last real change.
	LifetimeHours int64 `yaml:"lifetime_hours"`
	// RetentionDays is how long a session that ended without an order
	// (canceled, expired) is kept before the sweeper deletes it (default
	// 30); a completed session stays with its order, which is kept for good.
	RetentionDays int64 `yaml:"retention_days"`
}

// Defaults of the policy's limits and lifetimes, and the bounds a merchant
// may raise them to.
const (
	DefaultUnitsPerLine    = 10
	DefaultUnitsPerVariant = 10
	DefaultUnitsPerBuyer   = 50
	DefaultOpenSessions    = 5

	DefaultUnitsPerAccount        = 200
	DefaultUnitsPerAddress        = 100
	DefaultUnverifiedShare        = 50
	DefaultSessionsPerHour        = 30
	DefaultSessionsPerAddressHour = 120
	DefaultPaymentsPerHour        = 10
	DefaultPaymentsPerAddressHour = 30
	DefaultDeclinesBeforeLock     = 5
	DefaultDeclineLockMinutes     = 15

	DefaultLifetimeHours = 6
	DefaultRetentionDays = 30

	maxOpenSessions  = 100
	maxUnitsPerBuyer = MaxLines * MaxQuantity
	maxLifetimeHours = 7 * 24

	maxUnitsPerAddress = 10_000_000
	maxPerHour         = 1_000_000
	maxHostAddresses   = 100
	maxNetworkMultiple = 65536 // a /48's /64s: no second tier
	maxRetentionDays   = 10 * 366
)

// BuyerLimits returns the policy's limits with their defaults filled in.
func (p *Policy) BuyerLimits() Limits {
	l := p.Limits
	or := func(n *int64, def int64) {
		if *n <= 0 {
			*n = def
		}
	}
	or(&l.UnitsPerLine, DefaultUnitsPerLine)
	or(&l.UnitsPerVariant, DefaultUnitsPerVariant)
	or(&l.UnitsPerBuyer, DefaultUnitsPerBuyer)
	or(&l.OpenSessions, DefaultOpenSessions)
	or(&l.UnitsPerAccount, DefaultUnitsPerAccount)
	or(&l.UnitsPerAddress, DefaultUnitsPerAddress)
	or(&l.UnverifiedShare, DefaultUnverifiedShare)
	or(&l.NetworkMultiple, shop.DefaultNetworkMultiple)
	or(&l.SessionsPerHour, DefaultSessionsPerHour)
	or(&l.SessionsPerAddressHour, DefaultSessionsPerAddressHour)
	or(&l.PaymentsPerHour, DefaultPaymentsPerHour)
	or(&l.PaymentsPerAddressHour, DefaultPaymentsPerAddressHour)
	or(&l.DeclinesBeforeLock, DefaultDeclinesBeforeLock)
	or(&l.DeclineLockMinutes, DefaultDeclineLockMinutes)
	return l
}

// SessionLifetime is a session's absolute lifetime from its creation.
func (p *Policy) SessionLifetime() time.Duration {
	h := p.Sessions.LifetimeHours
	if h <= 0 {
		h = DefaultLifetimeHours
	}
	return time.Duration(h) * time.Hour
}

// SessionRetention is how long an ended session is kept.
func (p *Policy) SessionRetention() time.Duration {
	d := p.Sessions.RetentionDays
	if d <= 0 {
		d = DefaultRetentionDays
	}
	return time.Duration(d) * 24 * time.Hour
}

// limits checks the policy's limits and lifetimes: each, when set, a whole
// number within its bounds.
func (v *validator) limits(l Limits, s Sessions) {
	within := func(at string, n, max int64) {
		if n < 0 || n > max {
			v.add(at, "must be a whole number from 1 to %d, or left out for the default (got %d)", max, n)
		}
	}
	within("limits.units_per_line", l.UnitsPerLine, MaxQuantity)
	within("limits.units_per_variant", l.UnitsPerVariant, maxUnitsPerBuyer)
	within("limits.units_per_buyer", l.UnitsPerBuyer, maxUnitsPerBuyer)
	within("limits.open_sessions", l.OpenSessions, maxOpenSessions)
	within("limits.units_per_account", l.UnitsPerAccount, maxUnitsPerBuyer)
	within("limits.units_per_address", l.UnitsPerAddress, maxUnitsPerAddress)
	within("limits.unverified_share_percent", l.UnverifiedShare, 100)
	within("limits.network_multiple", l.NetworkMultiple, maxNetworkMultiple)
	within("limits.sessions_per_hour", l.SessionsPerHour, maxPerHour)
	within("limits.sessions_per_address_hour", l.SessionsPerAddressHour, maxPerHour)
	within("limits.payments_per_hour", l.PaymentsPerHour, maxPerHour)
	within("limits.payments_per_address_hour", l.PaymentsPerAddressHour, maxPerHour)
	within("limits.declines_before_lock", l.DeclinesBeforeLock, maxPerHour)
	within("limits.decline_lock_minutes", l.DeclineLockMinutes, 7*24*60)
	if len(l.HostAddresses) > maxHostAddresses {
		v.add("limits.host_addresses", "at most %d ranges (got %d)", maxHostAddresses, len(l.HostAddresses))
	}
	for i, h := range l.HostAddresses {
		at := fmt.Sprintf("limits.host_addresses[%d]", i)
		if _, err := netip.ParsePrefix(h.CIDR); err != nil {
			v.add(at+".cidr", "must be a CIDR range such as 203.0.113.0/24 or 2001:db8::/32 (got %q)", h.CIDR)
		}
		if h.Units < 1 || h.Units > maxUnitsPerAddress {
			v.add(at+".units", "must be a whole number from 1 to %d (got %d)", maxUnitsPerAddress, h.Units)
		}
	}
	within("sessions.lifetime_hours", s.LifetimeHours, maxLifetimeHours)
	within("sessions.retention_days", s.RetentionDays, maxRetentionDays)
}
