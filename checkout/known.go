package checkout

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"shop/database"
)

// maxKnown bounds the sessions a Checkout keeps as it last wrote them: more
// than the sessions being changed at once, each a few KB.
const maxKnown = 2048

// known keeps the sessions this process wrote last, as it wrote them, so
// that the next change of one (an update, its completion) need not read
// the row again: that change starts from the row kept, and its save, over
// the version kept (save: UPDATE … WHERE version = ?), fails with
// errConflict when the session moved since (another replica changed it,
// or this process by a statement that keeps nothing, the sweeper's: every
// write of a session moves its version). Everything the change wrote is
// rolled back with it; the row kept is forgotten and the change runs
// again from the row as it is (retryConflicts). A change that ends
// without saving the session (nothing to change, a refusal) answers from
// a row no statement checked: keptStill reads the version then. A row
// kept is never changed: its slices and maps are shared with those who
// take it, as a transaction run again shares the row it read (change), and
// replaced whole (addMessages, the pricing), never written in place.
type known struct {
	mu   sync.Mutex
	rows map[string]*sessionRow
}

func newKnown() *known { return &known{rows: make(map[string]*sessionRow)} }

// get is a copy of the row kept for id, or nil.
func (k *known) get(id string) *sessionRow {
	k.mu.Lock()
	r := k.rows[id]
	k.mu.Unlock()
	if r == nil {
		return nil
	}
	cp := *r
	return &cp
}

// keep keeps a copy of r, as committed; a session that has ended (no
// change of it reads a row any more) is forgotten instead.
func (k *known) keep(r *sessionRow) {
	switch r.Status {
	case Completed, Canceled, Expired:
		k.forget(r.ID)
		return
	}
	cp := *r
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.rows[r.ID]; !ok && len(k.rows) >= maxKnown {
		for id := range k.rows { // any one: map order is random
			delete(k.rows, id)
			break
		}
	}
	k.rows[r.ID] = &cp
}

// forget drops what is kept of the session id.
func (k *known) forget(id string) {
	k.mu.Lock()
	delete(k.rows, id)
	k.mu.Unlock()
}

// keptStill ends a try that started from the row kept of session id at
// version and saved nothing, err being its answer (errUnchanged, a
// refusal): the answer stands while the session is still at version, read
// now; else the row kept is forgotten and the answer is errConflict, for
// the next try to read the row as it is. A try that saved (err nil) or
// lost its save's race (errConflict) is answered as it is.
func (c *Checkout) keptStill(ctx context.Context, id string, version int64, err error) error {
	if err == nil || errors.Is(err, errConflict) {
		return err
	}
	var v int64
	verr := database.QueryRow(c.db.WithContext(ctx), "SELECT version FROM checkout_sessions WHERE id = ?", id).Scan(&v)
	switch {
	case errors.Is(verr, sql.ErrNoRows):
	case verr != nil:
		return fmt.Errorf("read the version of session %s: %w", id, verr)
	case v == version:
		return err
	}
	c.known.forget(id)
	return errConflict
}
