package checkout

import (
	"database/sql"
	"errors"
	"sync"

	"gorm.io/gorm"

	"shop/database"
)

// maxKnown bounds the sessions a Checkout keeps as it last wrote them: more
// than the sessions being changed at once, each a few KB.
const maxKnown = 2048

// known keeps the sessions this process wrote last, as it wrote them, so
// that the next change of one (an update, its completion) need not read
// the whole row again: that change reads the session's version in its
// own transaction (current) and uses the row kept only while the version
// is the one it was kept at, else reads the row there. The database stays
// the one truth: a session another replica changed, or this process by a
// statement that keeps nothing (the sweeper's), has another version and is
// read again; every write of a session moves its version (save). A row
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

// atVersion reports whether the session id is at version in tx (false
// when there is no such session).
func atVersion(tx *gorm.DB, id string, version int64) (bool, error) {
	var v int64
	err := database.QueryRow(tx, "SELECT version FROM checkout_sessions WHERE id = ?", id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil && v == version, err
}
