// Package database opens the shop's one *gorm.DB, on SQLite (a file path, the
// default) or PostgreSQL (a postgres:// URL), and applies the embedded
// migrations with goose.
//
// The business packages take the *gorm.DB and keep their models to
// themselves. The wiring (cmd/shop), the server's readiness check and tests
// open and migrate through this package; the packages that store data
// (catalog, checkout, orders) run their transactions through its Transact
// and take row locks with its Lock (tx.go).
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"shop/migrations"
)

// Dialect names the database engine behind a *gorm.DB.
type Dialect string

// The engines the shop runs on.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DialectOf returns the engine a DSN selects: PostgreSQL for postgres:// and
// postgresql:// URLs, SQLite for anything else (a file path).
func DialectOf(dsn string) Dialect {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return Postgres
	}
	return SQLite
}

// Options tune Open; nil means defaults.
type Options struct {
	// Logger receives slow queries and database errors; nil discards them.
	Logger *slog.Logger
	// SlowQuery is the threshold above which a query is logged (default 500ms).
	SlowQuery time.Duration
}

// Open opens the database a DSN names. SQLite files are opened in WAL mode
// with a busy timeout, foreign keys on, every commit synced to disk
// (synchronous FULL) and write transactions that take the write lock when
// they begin, so concurrent writers wait instead of failing. On PostgreSQL
// it warns (opts.Logger) when synchronous_commit is off. Open does not
// migrate; call Migrate.
func Open(ctx context.Context, dsn string, opts *Options) (*gorm.DB, error) {
	if dsn == "" {
		return nil, errors.New("open database: no DSN: send a file path or a postgres:// URL")
	}
	if opts == nil {
		opts = &Options{}
	}
	cfg := &gorm.Config{
		TranslateError: true,
		NowFunc:        func() time.Time { return time.Now().UTC() },
		Logger:         gormLogger(opts),
	}
	var dialector gorm.Dialector
	var pool *sql.DB
	switch DialectOf(dsn) {
	case Postgres:
		dialector = postgres.Open(withoutJIT(dsn))
	default:
		// Connections that keep their prepared statements (sqlitestmts.go).
		connector := sqliteConnector{dsn: sqliteDSN(dsn), driver: &sqlite3.SQLiteDriver{}}
		pool = sql.OpenDB(connector)
		writers.Store(pool, openWriter(connector)) // Transact's connection (tx.go)
		checkpointers.Store(pool, startCheckpoints(connector, dsn, opts.Logger))
		dialector = sqlite.New(sqlite.Config{Conn: pool})
	}
	db, err := gorm.Open(dialector, cfg)
	if err != nil {
		if pool != nil {
			forget(pool)
			_ = pool.Close()
		}
		return nil, fmt.Errorf("open database %s: %w", Redact(dsn), err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", Redact(dsn), err)
	}
	maxOpen := 20
	if DialectOf(dsn) == SQLite {
		// SQLite runs in this process: its work is CPU-bound here. These
		// connections read (Transact writes on a connection of its own:
		// openWriter); more of them than cores only add page caches that
		// every commit invalidates, and more contention. Nothing queries
		// outside its transaction while holding one (the tests pass with a
		// single connection), so two cannot deadlock.
		maxOpen = min(max(runtime.GOMAXPROCS(0), 2), 8)
	}
	sqlDB.SetMaxOpenConns(maxOpen)
	// As many idle as open: under load a closed connection is reopened at once,
	// and a new one has an empty page cache (SQLite) or costs a round of
	// authentication (PostgreSQL).
	sqlDB.SetMaxIdleConns(maxOpen)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("open database %s: %w", Redact(dsn), err)
	}
	if DialectOf(dsn) == Postgres {
		if err := warnIfAsyncCommit(ctx, sqlDB, opts.Logger); err != nil {
			_ = sqlDB.Close()
			return nil, fmt.Errorf("open database %s: %w", Redact(dsn), err)
		}
	}
	return db, nil
}

func sqliteDSN(path string) string {
	if strings.HasPrefix(path, "file:") {
		return path
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "on")
	q.Set("_synchronous", "FULL") // durable.go
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// DialectOfDB returns the engine behind an open *gorm.DB.
func DialectOfDB(db *gorm.DB) Dialect {
	if db.Name() == "postgres" {
		return Postgres
	}
	return SQLite
}

// withoutJIT turns PostgreSQL's JIT compilation off for the shop's sessions
// unless the DSN sets jit itself: it pays off for long analytical queries,
// while the shop's are short, and the planner's cost estimate of the
// search's stock filter (a correlated subquery per variant) crosses the JIT
// thresholds, which then spends hundreds of milliseconds compiling a query
// that runs in a hundred (measured on 100,000 products). pgx sends unknown
// URL parameters as run-time parameters.
func withoutJIT(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn // Open reports it
	}
	q := u.Query()
	if q.Has("jit") {
		return dsn
	}
	q.Set("jit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

// Redact returns a DSN fit for logs: a PostgreSQL URL without its password.
func Redact(dsn string) string {
	if DialectOf(dsn) != Postgres {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

func provider(db *gorm.DB) (*goose.Provider, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	var opts []goose.ProviderOption
	dialect := goose.DialectSQLite3
	if DialectOfDB(db) == Postgres {
		dialect = goose.DialectPostgres
		// Replicas starting together take turns at the migrations.
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	return goose.NewProvider(dialect, sqlDB, migrations.FS, opts...)
}

// Migrate applies every pending migration and returns the schema version.
func Migrate(ctx context.Context, db *gorm.DB) (int64, error) {
	p, err := provider(db)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: read schema version: %w", err)
	}
	return v, nil
}

// OpenMigrated opens the database dsn names (Open) and applies every
// pending migration (Migrate), as the shop's commands start; it returns the
// schema version, and leaves nothing open when it fails.
func OpenMigrated(ctx context.Context, dsn string, opts *Options) (*gorm.DB, int64, error) {
	db, err := Open(ctx, dsn, opts)
	if err != nil {
		return nil, 0, err
	}
	v, err := Migrate(ctx, db)
	if err != nil {
		_ = Close(db)
		return nil, 0, err
	}
	return db, v, nil
}

// Ready reports whether the database answers and every migration is applied.
// It returns the schema version, or an error saying what is missing.
func Ready(ctx context.Context, db *gorm.DB) (int64, error) {
	p, err := provider(db)
	if err != nil {
		return 0, err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return 0, fmt.Errorf("check migrations: %w", err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if pending {
		return v, fmt.Errorf("schema version %d: migrations pending; run `shop migrate`", v)
	}
	return v, nil
}

// Close closes the connection pool behind db.
func Close(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	forget(sqlDB)
	return sqlDB.Close()
}

// checkpointers holds the checkpointer of each SQLite pool Open opened
// (checkpoint.go).
var checkpointers sync.Map // *sql.DB → *checkpointer

// forget drops what Open keeps for a SQLite pool: its writer, which it
// closes, and its checkpointer, which it stops.
func forget(pool *sql.DB) {
	if w, ok := writers.LoadAndDelete(pool); ok {
		_ = w.(*writer).close()
	}
	if cp, ok := checkpointers.LoadAndDelete(pool); ok {
		cp.(*checkpointer).close()
	}
}
