// Package accounts keeps the shop's buyer accounts (docs/accounts.md): a
// buyer who linked their account from a host by proving their email with a
// one-time code. It owns the OAuth 2.1 authorization server the hosts link
// through, the login and consent pages, and the account's own data; server
// checks a request's bearer token here and puts the account into the
// request's shop.Buyer, which the other packages read.
package accounts

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop/database"
)

// Account is a linked buyer.
type Account struct {
	ID        string
	Email     string
	CreatedAt time.Time
}

// ErrNotFound is returned for an account that does not exist (or was deleted).
var ErrNotFound = errors.New("accounts: no such account")

type accountRow struct {
	ID        string `gorm:"primaryKey"`
	Email     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (accountRow) TableName() string { return "accounts" }

func (r accountRow) account() Account {
	return Account{ID: r.ID, Email: r.Email, CreatedAt: r.CreatedAt.UTC()}
}

// NormalizeEmail is the form an account's email is stored and matched in.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// Ensure returns the account of email, creating it on its first login. The
// email must already be verified (the login's code proves it).
func Ensure(ctx context.Context, db *gorm.DB, email string) (Account, error) {
	email = NormalizeEmail(email)
	var row accountRow
	err := database.Transact(ctx, db, func(tx *gorm.DB) error {
		now := database.Now(tx)
		fresh := accountRow{ID: newID(), Email: email, CreatedAt: now, UpdatedAt: now}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&fresh).Error; err != nil {
			return fmt.Errorf("create account: %w", err)
		}
		return tx.Where("email = ?", email).Take(&row).Error
	})
	if err != nil {
		return Account{}, fmt.Errorf("ensure account: %w", err)
	}
	return row.account(), nil
}

// Get returns the account with id, or ErrNotFound.
func Get(ctx context.Context, db *gorm.DB, id string) (Account, error) {
	var row accountRow
	err := db.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Account{}, ErrNotFound
	}
	if err != nil {
		return Account{}, fmt.Errorf("get account: %w", err)
	}
	return row.account(), nil
}

// newID is an account id: "acct_" and 128 random bits in hex.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return fmt.Sprintf("acct_%x", b)
}
