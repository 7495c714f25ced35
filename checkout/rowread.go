package checkout

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"shop/database"
)

// sessionFields are the columns of checkout_sessions that readRow reads
// and insertRow writes, in sessionRow's order; sessionColumns lists them
// for a SELECT.
var (
	sessionFields = []string{"id", "status", "version", "currency", "items", "buyer", "address", "option_id", "promo_code",
		"metadata", "priced", "total", "order_id", "expires_at", "created_at", "updated_at", "buyer_key", "buyer_email", "channel"}
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
	if err := rows.Scan(&r.ID, &r.Status, &r.Version, &r.Currency, &items, &buyer, &address, &r.OptionID, &r.PromoCode,
		&metadata, &priced, &r.Total, &r.OrderID, &r.ExpiresAt, &r.CreatedAt, &r.UpdatedAt, &r.BuyerKey, &r.BuyerEmail, &r.Channel); err != nil {
		return nil, err
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
	r.was = r.Status
	return &r, rows.Close()
}

// insertRow writes a new session's row in tx, its JSON columns as save
// writes them.
func insertRow(tx *gorm.DB, r *sessionRow) error {
	_, err := database.Insert(tx, "checkout_sessions", sessionFields, []any{r.ID, r.Status, r.Version, r.Currency,
		jsonColumn(r.Items), jsonColumn(r.Buyer), jsonColumn(r.Address), r.OptionID, r.PromoCode, jsonColumn(r.Metadata),
		marshal(r.Priced), r.Total, r.OrderID, r.ExpiresAt, r.CreatedAt, r.UpdatedAt, r.BuyerKey, r.BuyerEmail, r.Channel})
	return err
}

// isNotFound reports whether err is readRow's for a missing session.
func isNotFound(err error) bool { return errors.Is(err, gorm.ErrRecordNotFound) }
