package database

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// maxLoggedSQL bounds the text of a statement in a log line: an import's
// statements name thousands of placeholders (60 KB in a line).
const maxLoggedSQL = 1024

// gorm's Scan (and so every Raw(…).Scan) logs the text its recorder saw,
// which has the arguments written in whatever ParameterizedQueries says:
// its recorder asks RecorderParamsFilter, which by default keeps them. The
// shop never logs arguments (an address, an email): leave them out there too.
func init() {
	logger.RecorderParamsFilter = func(_ context.Context, sql string, _ ...any) (string, []any) {
		return sql, nil
	}
}

// gormLogger is gorm's logger for Open: slow statements (opts.SlowQuery)
// and errors, to opts.Logger, through sqlLog.
func gormLogger(opts *Options) logger.Interface {
	if opts.Logger == nil {
		return logger.Discard
	}
	slow := opts.SlowQuery
	if slow == 0 {
		slow = 500 * time.Millisecond
	}
	return sqlLog{
		Interface: logger.NewSlogLogger(opts.Logger, logger.Config{
			SlowThreshold:             slow,
			LogLevel:                  logger.Warn,
			IgnoreRecordNotFoundError: true,
			ParameterizedQueries:      true, // never log argument values
		}),
		level: logger.Warn,
		slow:  slow,
	}
}

// sqlLog is gorm's slog logger that asks gorm for a statement's text only
// when it logs the statement (gorm's own builds it for every statement,
// logged or not) and logs at most maxLoggedSQL bytes of it.
type sqlLog struct {
	logger.Interface
	level logger.LogLevel
	slow  time.Duration
}

// LogMode is the logger at level (gorm's Debug asks for Info: every
// statement).
func (l sqlLog) LogMode(level logger.LogLevel) logger.Interface {
	return sqlLog{Interface: l.Interface.LogMode(level), level: level, slow: l.slow}
}

// Trace logs a statement gorm ran, when it failed or was slow.
func (l sqlLog) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	failed := err != nil && !errors.Is(err, gorm.ErrRecordNotFound)
	if l.level < logger.Info && !failed && time.Since(begin) <= l.slow {
		return
	}
	l.Interface.Trace(ctx, begin, func() (string, int64) {
		sql, rows := fc()
		if len(sql) > maxLoggedSQL {
			n := maxLoggedSQL
			for n > 0 && !utf8.RuneStart(sql[n]) {
				n--
			}
			sql = fmt.Sprintf("%s… (%d bytes in all)", sql[:n], len(sql))
		}
		return sql, rows
	}, err)
}

// ParamsFilter leaves the arguments out of the statements gorm logs, as
// gorm's logger does with ParameterizedQueries (gorm asks the logger it was
// given, this one).
func (l sqlLog) ParamsFilter(ctx context.Context, sql string, params ...any) (string, []any) {
	if f, ok := l.Interface.(gorm.ParamsFilter); ok {
		return f.ParamsFilter(ctx, sql, params...)
	}
	return sql, nil
}
