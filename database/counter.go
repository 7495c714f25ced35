package database

import (
	"context"

	"gorm.io/gorm"

	"shop"
)

// Counter counts the statements the shop runs and the transactions it
// commits, by operation (the tool a call runs: shop.WithOperation; "other"
// for background work), for the operator's metrics (docs/architecture.md,
// "Cost of a purchase"). It is a gorm plugin: db.Use(&Counter{…}) counts
// every statement gorm runs on db, and the fixed statements below gorm
// (raw.go) find it through db's plugins. Either function may be nil.
type Counter struct {
	Statement func(operation string)
	Commit    func(operation string)
}

// counterName is the Counter's name among db's plugins.
const counterName = "shop:counter"

// Name is the Counter's name as a gorm plugin.
func (c *Counter) Name() string { return counterName }

// Initialize registers the Counter after each of gorm's processors.
func (c *Counter) Initialize(db *gorm.DB) error {
	if c.Statement == nil {
		return nil
	}
	count := func(tx *gorm.DB) {
		if tx.Statement.SQL.Len() > 0 { // built, so sent
			c.Statement(operationOf(tx.Statement.Context))
		}
	}
	cb := db.Callback()
	for _, err := range []error{
		cb.Create().After("gorm:create").Register("shop:count_create", count),
		cb.Query().After("gorm:query").Register("shop:count_query", count),
		cb.Update().After("gorm:update").Register("shop:count_update", count),
		cb.Delete().After("gorm:delete").Register("shop:count_delete", count),
		cb.Row().After("gorm:row").Register("shop:count_row", count),
		cb.Raw().After("gorm:raw").Register("shop:count_raw", count),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// operationOf is the operation ctx names, "other" when none.
func operationOf(ctx context.Context) string {
	if ctx != nil {
		if op := shop.OperationFrom(ctx); op != "" {
			return op
		}
	}
	return "other"
}

// counterOf is the Counter db uses, nil when none.
func counterOf(db *gorm.DB) *Counter {
	if db.Config == nil {
		return nil
	}
	c, _ := db.Config.Plugins[counterName].(*Counter)
	return c
}

// countStatement counts one statement run below gorm (raw.go) on db.
func countStatement(db *gorm.DB) {
	if c := counterOf(db); c != nil && c.Statement != nil {
		c.Statement(operationOf(db.Statement.Context))
	}
}

// countCommit counts a transaction of ctx's operation committed on db.
func countCommit(ctx context.Context, db *gorm.DB) {
	if c := counterOf(db); c != nil && c.Commit != nil {
		c.Commit(operationOf(ctx))
	}
}
