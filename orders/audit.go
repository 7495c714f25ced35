package orders

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/encoding/json"
	"gorm.io/gorm"

	"shop/database"
)

// Event is one entry of the audit log: who did what to which order or
// session, with the arguments and the state before and after.
type Event struct {
	// Actor is who acted: "checkout", "webhook", or a staff member's name.
	Actor string
	// Action is what was done: "order.created", "order.refunded", ….
	Action string
	// OrderID and SessionID name what the action touched; either may be empty.
	OrderID, SessionID string
	// Arguments, Before and After are stored as JSON; nil stores nothing.
	Arguments, Before, After any
}

// auditRow is a row of audit_events.
type auditRow struct {
	ID        string `gorm:"primaryKey"`
	At        time.Time
	Actor     string
	Action    string
	OrderID   string
	SessionID string
	Arguments string
	Before    string
	After     string
}

func (auditRow) TableName() string { return "audit_events" }

// Audit writes an audit event (who, what, which order or session, the
// arguments, and the state before and after as JSON) in db, a transaction
// or nil.
func (o *Orders) Audit(ctx context.Context, db *gorm.DB, e Event) error {
	if db == nil {
		db = o.db
	}
	if e.Actor == "" || e.Action == "" {
		return fmt.Errorf("audit: an event needs an actor and an action (got %q, %q)", e.Actor, e.Action)
	}
	row := auditRow{
		ID: "aud_" + randomID(), At: o.now().UTC().Truncate(time.Microsecond),
		Actor: e.Actor, Action: e.Action, OrderID: e.OrderID, SessionID: e.SessionID,
	}
	for _, f := range []struct {
		name string
		v    any
		dst  *string
	}{{"arguments", e.Arguments, &row.Arguments}, {"before", e.Before, &row.Before}, {"after", e.After, &row.After}} {
		if f.v == nil {
			continue
		}
		b, err := json.Marshal(f.v)
		if err != nil {
			return fmt.Errorf("audit %s: %s: %w", e.Action, f.name, err)
		}
		*f.dst = string(b)
	}
	_, err := database.Insert(db.WithContext(ctx), "audit_events", auditColumns,
		[]any{row.ID, row.At, row.Actor, row.Action, row.OrderID, row.SessionID, row.Arguments, row.Before, row.After})
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// auditColumns are the columns Audit writes, in auditRow's order.
var auditColumns = []string{"id", "at", "actor", "action", "order_id", "session_id", "arguments", "before", "after"}
