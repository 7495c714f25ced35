package idempotency

import (
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop/database"
)

// DefaultKeysPerHour is how many new keys one budget (a client address)
// may claim an hour, unless WithKeysPerHour says otherwise: with a key's
// row at about half a kilobyte for 24 hours, an address holds at most
// about 24 MB of them (docs/limits.md).
const DefaultKeysPerHour = 2000

// NetworkMultiple is how many times a budget's keys its network (an IPv6
// /48, Request.Network) may claim: shop.DefaultNetworkMultiple, which this
// package, below shop, cannot name.
const NetworkMultiple = 8

// ErrBudget: the request's budget has claimed its keys for this hour; a
// replay of a key it holds is still answered.
var ErrBudget = errors.New("too many new idempotency keys from this caller this hour")

type budgetRow struct {
	Budget string    `gorm:"primaryKey"`
	Hour   time.Time `gorm:"primaryKey"`
	Used   int
}

func (budgetRow) TableName() string { return "idempotency_budgets" }

// WithKeysPerHour returns a copy of s that lets each budget claim n new
// keys an hour (n ≤ 0: DefaultKeysPerHour).
func (s *Store) WithKeysPerHour(n int) *Store {
	c := *s
	c.perHour = n
	return &c
}

// charge counts a new key against r's budget in tx, the claim's
// transaction (refused, it rolls back with the claim): ErrBudget past the
// cap.
func (s *Store) charge(tx *gorm.DB, r Request) error {
	if r.Budget == "" {
		return nil
	}
	limit := s.perHour
	if limit <= 0 {
		limit = DefaultKeysPerHour
	}
	if err := chargeOne(tx, r.Budget, limit); err != nil || r.Network == "" {
		return err
	}
	return chargeOne(tx, r.Network, limit*NetworkMultiple)
}

// chargeOne counts a new key against budget, in tx: ErrBudget past limit.
func chargeOne(tx *gorm.DB, budget string, limit int) error {
	row := budgetRow{Budget: ScopeHash(budget), Hour: database.Now(tx).UTC().Truncate(time.Hour), Used: 1}
	err := tx.Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "budget"}, {Name: "hour"}},
		DoUpdates: clause.Assignments(map[string]any{"used": gorm.Expr("idempotency_budgets.used + 1")}),
	}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("charge idempotency budget: %w", err)
	}
	var used int
	if err := tx.Model(&budgetRow{}).Where("budget = ? AND hour = ?", row.Budget, row.Hour).Pluck("used", &used).Error; err != nil {
		return fmt.Errorf("read idempotency budget: %w", err)
	}
	if used > limit {
		return ErrBudget
	}
	return nil
}
