package checkout

import "time"

// Limits bound what one buyer may hold at once, so that nobody can hold the
// shop's stock hostage (CONTRACT.md §4). A buyer is the host's anonymous user
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
	DefaultLifetimeHours   = 6
	DefaultRetentionDays   = 30

	maxOpenSessions  = 100
	maxUnitsPerBuyer = MaxLines * MaxQuantity
	maxLifetimeHours = 7 * 24
	maxRetentionDays = 10 * 366
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
	within("sessions.lifetime_hours", s.LifetimeHours, maxLifetimeHours)
	within("sessions.retention_days", s.RetentionDays, maxRetentionDays)
}
