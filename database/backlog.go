package database

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// CountOldest counts the rows q selects (a model and its conditions) and
// returns the earliest value of their time column (zero when none), as
// backlogs are measured for the operator's metrics. The time is read from
// the column itself, not from MIN(), so that SQLite's driver returns it as
// a time.
func CountOldest(ctx context.Context, q *gorm.DB, column string) (int64, time.Time, error) {
	var n int64
	if err := q.WithContext(ctx).Session(&gorm.Session{}).Count(&n).Error; err != nil {
		return 0, time.Time{}, fmt.Errorf("count: %w", err)
	}
	if n == 0 {
		return 0, time.Time{}, nil
	}
	var oldest struct{ T time.Time }
	err := q.WithContext(ctx).Session(&gorm.Session{}).Select(column + " AS t").Order(column).Limit(1).Scan(&oldest).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return 0, time.Time{}, fmt.Errorf("oldest %s: %w", column, err)
	}
	return n, oldest.T.UTC(), nil
}
