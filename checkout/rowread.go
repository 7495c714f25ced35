package checkout

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"
	"gorm.io/gorm"

	"shop/database"
)

// sessionFields are the columns of checkout_sessions that readRow reads
// and insertRow writes, in sessionRow's order; sessionColumns lists them
// for a SELECT.
var (
	sessionFields = []string{"id", "status", "version", "currency", "items", "buyer", "address", "option_id", "promo_code",
		"metadata", "priced", "total", "order_id", "expires_at", "created_at", "updated_at", "buyer_key", "buyer_email", "channel", "buyer_address", "ever_held", "trusted", "buyer_network", "save_address", "locale"}
	sessionColumns = strings.Join(sessionFields, ", ")
)

// readRow reads the session id in db (a transaction, or the pool) below
// gorm: a session is read on every call that changes it, and gorm's
// reflection cost more than the row. The JSON columns decode as gorm's
// serializer does ("" is the zero value). It returns gorm.ErrRecordNotFound
// when there is no such session.
func readRow(db *gorm.DB, id string) (*sessionRow, error) {
	// Through gorm's Raw, its statement text as it is: no clauses, no
	// reflection, and gorm's callbacks (the tests' read gates) see it.
	rows, err := db.Table("checkout_sessions").Raw("SELECT "+sessionColumns+" FROM checkout_sessions WHERE id = ?", id).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, gorm.ErrRecordNotFound
	}
	var r sessionRow
	var items, buyer, address, metadata, priced string
	var save sql.NullBool
	if err := rows.Scan(&r.ID, &r.Status, &r.Version, &r.Currency, &items, &buyer, &address, &r.OptionID, &r.PromoCode,
		&metadata, &priced, &r.Total, &r.OrderID, &r.ExpiresAt, &r.CreatedAt, &r.UpdatedAt, &r.BuyerKey, &r.BuyerEmail, &r.Channel, &r.BuyerAddress, &r.EverHeld, &r.Trusted, &r.BuyerNetwork,
		&save, &r.Locale); err != nil {
		return nil, err
	}
	if save.Valid {
		r.SaveAddress = &save.Bool
	}
	for _, c := range []struct {
		name, text string
		into       any
	}{{"items", items, &r.Items}, {"buyer", buyer, &r.Buyer}, {"address", address, &r.Address}, {"metadata", metadata, &r.Metadata}, {"priced", priced, &r.Priced}} {
		if c.text == "" {
			continue
		}
		if err := json.Unmarshal([]byte(c.text), c.into); err != nil {
			return nil, fmt.Errorf("session %s: column %s: %w", id, c.name, err)
		}
	}
	r.stored()
	return &r, rows.Close()
}

// insertRow writes a new session's row in tx, its JSON columns as save
// writes them.
func insertRow(tx *gorm.DB, r *sessionRow) error {
	_, err := database.Insert(tx, "checkout_sessions", sessionFields, r.values())
	if err != nil {
		return err
	}
	r.stored()
	return nil
}

// insertRowUnder writes a new session's row in tx, as insertRow does, when
// cond (with args) holds, in one statement: the hourly caps (underCaps).
// It reports whether it wrote it.
func insertRowUnder(tx *gorm.DB, r *sessionRow, cond string, args []any) (bool, error) {
	if cond == "" {
		return true, insertRow(tx, r)
	}
	values := append(r.values(), args...)
	n, err := database.Exec(tx, "INSERT INTO checkout_sessions ("+sessionColumns+") SELECT "+database.In(len(sessionFields))+" WHERE "+cond, values...)
	if err != nil || n == 0 {
		return false, err
	}
	r.stored()
	return true, nil
}

// values are the row's columns as insertRow writes them, in sessionFields'
// order.
func (r *sessionRow) values() []any {
	return []any{r.ID, r.Status, r.Version, r.Currency,
		jsonColumn(r.Items), jsonColumn(r.Buyer), jsonColumn(r.Address), r.OptionID, r.PromoCode, jsonColumn(r.Metadata),
		marshal(r.Priced), r.Total, r.OrderID, r.ExpiresAt, r.CreatedAt, r.UpdatedAt, r.BuyerKey, r.BuyerEmail, r.Channel, r.BuyerAddress, r.EverHeld, r.Trusted, r.BuyerNetwork, r.SaveAddress, r.Locale}
}

// isNotFound reports whether err is readRow's for a missing session.
func isNotFound(err error) bool { return errors.Is(err, gorm.ErrRecordNotFound) }

// indexed are the columns of a session that its indexes hold besides its
// id and buyer key, which never change.
type indexed struct {
	status               Status
	expiresAt, updatedAt time.Time
	buyerEmail           string
	everHeld             bool
}

// indexed is the row's indexed columns as they are in memory.
func (r *sessionRow) indexed() indexed {
	return indexed{status: r.Status, expiresAt: r.ExpiresAt, updatedAt: r.UpdatedAt, buyerEmail: r.BuyerEmail, everHeld: r.EverHeld}
}

// stored records the row's indexed columns as the database holds them at
// r.Version: after a read, an insert or a save.
func (r *sessionRow) stored() {
	r.was, r.known = r.indexed(), true
}

// The indexed columns save may leave out, as bits of saveSQL's index.
const (
	setStatus = 1 << iota
	setExpiresAt
	setUpdatedAt
	setBuyerEmail
	setEverHeld
)

// saveSQL holds save's statements, by the indexed columns they set:
// SQLite rewrites the entries of every index that holds a column of the
// SET list, changed or not, so a save sets only the indexed columns that
// changed. There are 32 texts, each prepared once per connection.
var saveSQL [32]string

func init() {
	for set := range saveSQL {
		cols := "version = ?, items = ?, buyer = ?, address = ?, option_id = ?, promo_code = ?, metadata = ?, priced = ?, total = ?, order_id = ?, save_address = ?, locale = ?"
		for _, c := range []struct {
			bit  int
			name string
		}{{setStatus, "status"}, {setExpiresAt, "expires_at"}, {setUpdatedAt, "updated_at"}, {setBuyerEmail, "buyer_email"}, {setEverHeld, "ever_held"}} {
			if set&c.bit != 0 {
				cols += ", " + c.name + " = ?"
			}
		}
		saveSQL[set] = "UPDATE checkout_sessions SET " + cols + " WHERE id = ? AND version = ?"
	}
}

// save writes row over the version it was read at: every column a change
// may write, but of the indexed ones only those that differ from what the
// row was read with (all of them for a row not read from the database).
func (c *Checkout) save(tx *gorm.DB, row *sessionRow) error {
	prev := row.Version
	row.Version = prev + 1
	args := make([]any, 0, 16)
	args = append(args, row.Version, jsonColumn(row.Items), jsonColumn(row.Buyer), jsonColumn(row.Address),
		row.OptionID, row.PromoCode, jsonColumn(row.Metadata), marshal(row.Priced), row.Total, row.OrderID, row.SaveAddress, row.Locale)
	set, was := 0, row.was
	if !row.known || row.Status != was.status {
		set, args = set|setStatus, append(args, row.Status)
	}
	if !row.known || !row.ExpiresAt.Equal(was.expiresAt) {
		set, args = set|setExpiresAt, append(args, row.ExpiresAt)
	}
	if !row.known || !row.UpdatedAt.Equal(was.updatedAt) {
		set, args = set|setUpdatedAt, append(args, row.UpdatedAt)
	}
	if !row.known || row.BuyerEmail != was.buyerEmail {
		set, args = set|setBuyerEmail, append(args, row.BuyerEmail)
	}
	if !row.known || row.EverHeld != was.everHeld {
		set, args = set|setEverHeld, append(args, row.EverHeld)
	}
	n, err := database.Exec(tx, saveSQL[set], append(args, row.ID, prev)...)
	if err != nil {
		return fmt.Errorf("save session %s: %w", row.ID, err)
	}
	if n == 0 {
		row.Version = prev
		return errConflict
	}
	c.noteMove(tx, was.status, row.Status, 1)
	row.stored()
	return nil
}
