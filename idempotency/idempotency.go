// Package idempotency keeps agents' idempotency keys and the answers they
// got, in the database, so that every replica agrees: the ACP binding
// (/acp/mcp) and UCP (/ucp/mcp) run their keyed calls through a Store.
//
// A key's row lives through two states:
//
//	(none) --claim--> running --keep--> done --Sweep/Retention--> (none)
//	                     |
//	                     +--no keep, error, panic--> (none)
//	                     +--lease runs out (the caller crashed)--> taken over
//
// The claim is an INSERT … ON CONFLICT DO NOTHING on the key's primary key
// (scope, key), so of callers that race exactly one runs; the others read
// the row: another fingerprint is ErrConflict, a stored answer is returned
// again, a running call is ErrInFlight. A request that names a Budget (a
// client address) is counted against it when it claims a new key, in the
// same transaction: past DefaultKeysPerHour an hour it is ErrBudget.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop"
	"shop/database"
)

// Retention is how long an answer is kept: a key reused after it is a new
// request (the ACP RFC asks for at least 24 hours).
const Retention = 24 * time.Hour

// Lease is how long a running call holds its key before another caller may
// take it over (the first one crashed): longer than any call runs.
const Lease = 5 * time.Minute

// Errors of Do.
var (
	// ErrConflict: the key was used with another payload.
	ErrConflict = errors.New("idempotency key already used with a different payload")
	// ErrInFlight: the first call with this key is still running.
	ErrInFlight = errors.New("a call with this idempotency key is still running")
	// ErrStore wraps a failure of the store itself (the database) to claim
	// a key or keep an answer: the caller may answer "retry later".
	ErrStore = errors.New("idempotency store failed")
)

// Store keeps agents' idempotency keys and the answers they got, in the
// database, so replicas agree.
type Store struct {
	db      *gorm.DB
	now     func() time.Time
	perHour int // new keys a budget may claim an hour (WithKeysPerHour)
}

// New returns a Store on db (migrated: table idempotency_keys).
func New(db *gorm.DB) *Store { return &Store{db: db, now: time.Now} }

// WithClock returns a copy of s that reads the time from now (tests).
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

// Request names one keyed call. Scope is the dialect, the calling agent and
// the tool ("acp|agent-id|complete_checkout_session"), of any length: only
// its SHA-256 is stored (ScopeHash); Fingerprint is a hash of the canonical
// payload (see Fingerprint).
type Request struct {
	Scope, Key  string
	Fingerprint []byte
	// Budget names who pays for a new key (a client address nobody
	// vouches for): each budget claims at most DefaultKeysPerHour new
	// keys an hour (ErrBudget past it). "" claims without a budget.
	Budget string
	// Network is the budget's second tier, the IPv6 /48 of its address
	// (shop.NetworkOf), which claims at most NetworkMultiple times as many
	// keys an hour; "" for none (an IPv4 address).
	Network string
}

// MaxKeyLen bounds a key (the ACP RFC's 255 characters).
const MaxKeyLen = 255

type keyRow struct {
	Scope       string `gorm:"primaryKey"`
	IdemKey     string `gorm:"primaryKey"`
	Fingerprint string
	State       string
	Owner       string
	Answer      string
	LeaseUntil  time.Time
	CreatedAt   time.Time
}

func (keyRow) TableName() string { return "idempotency_keys" }

const (
	running = "running"
	done    = "done"
)

// Do runs fn at most once per (Scope, Key) while its answer is kept (at
// least Retention): a replay with the same fingerprint returns the stored
// answer; another fingerprint is ErrConflict; the first still running is
// ErrInFlight. fn's keep=false (processing errors) stores nothing, so the
// key can be retried; so does an error or a panic of fn.
func (s *Store) Do(ctx context.Context, r Request, fn func(context.Context) (answer []byte, keep bool, err error)) ([]byte, error) {
	if r.Scope == "" || r.Key == "" || len(r.Fingerprint) == 0 {
		return nil, errors.New("idempotency: scope, key and fingerprint are required")
	}
	if len(r.Key) > MaxKeyLen {
		return nil, fmt.Errorf("idempotency: key of %d bytes, at most %d", len(r.Key), MaxKeyLen)
	}
	r.Scope = ScopeHash(r.Scope)
	owner := shop.NewID("")
	stored, claimed, err := s.claim(ctx, r, owner)
	if err != nil && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrInFlight) && !errors.Is(err, ErrBudget) {
		return nil, fmt.Errorf("%w: %w", ErrStore, err)
	}
	if err != nil || !claimed {
		return stored, err
	}
	kept := false
	defer func() {
		if !kept {
			s.release(context.WithoutCancel(ctx), r, owner)
		}
	}()
	answer, keep, err := fn(ctx)
	if err != nil || !keep {
		return answer, err
	}
	if err := s.keep(context.WithoutCancel(ctx), r, owner, answer); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStore, err)
	}
	kept = true
	return answer, nil
}

// claim takes the key for owner (claimed) or reads what it holds: the
// stored answer of the same payload, or ErrConflict / ErrInFlight.
func (s *Store) claim(ctx context.Context, r Request, owner string) (stored []byte, claimed bool, err error) {
	fp := hex.EncodeToString(r.Fingerprint)
	err = database.Transact(database.WithClock(ctx, s.now), s.db, func(tx *gorm.DB) error {
		stored, claimed = nil, false
		now := database.Now(tx)
		mine := keyRow{Scope: r.Scope, IdemKey: r.Key, Fingerprint: fp, State: running,
			Owner: owner, LeaseUntil: now.Add(Lease), CreatedAt: now}
		cur, err := insertOrRead(tx, &mine)
		if err == nil && cur == nil {
			err = s.charge(tx, r)
		}
		if err != nil || cur == nil {
			claimed = err == nil
			return err
		}
		switch {
		case (cur.State == done && !cur.CreatedAt.After(now.Add(-Retention))) ||
			(cur.State == running && !cur.LeaseUntil.After(now)):
			// An answer past its retention, or a call that crashed: a new request.
			upd := tx.Model(&keyRow{}).Where("scope = ? AND idem_key = ? AND owner = ?", r.Scope, r.Key, cur.Owner).
				Updates(map[string]any{"fingerprint": fp, "state": running, "owner": owner, "answer": "",
					"lease_until": mine.LeaseUntil, "created_at": now})
			if upd.Error != nil {
				return fmt.Errorf("take over idempotency key: %w", upd.Error)
			}
			claimed = upd.RowsAffected == 1
			if !claimed {
				return ErrInFlight
			}
			return s.charge(tx, r)
		case cur.Fingerprint != fp:
			return ErrConflict
		case cur.State == done:
			stored = []byte(cur.Answer)
			return nil
		default:
			return ErrInFlight
		}
	})
	return stored, claimed, err
}

// insertOrRead inserts mine, or reads and locks the row that holds its key
// (nil when mine went in). A row can go between the two (its call released
// it, on PostgreSQL's read committed): then the insert is tried again.
func insertOrRead(tx *gorm.DB, mine *keyRow) (*keyRow, error) {
	for range 3 {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(mine)
		if res.Error != nil {
			return nil, fmt.Errorf("claim idempotency key: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			return nil, nil
		}
		var cur keyRow
		err := tx.Clauses(database.Lock()).Where("scope = ? AND idem_key = ?", mine.Scope, mine.IdemKey).Take(&cur).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read idempotency key: %w", err)
		}
		return &cur, nil
	}
	return nil, ErrInFlight
}

// keep stores owner's answer under the key.
func (s *Store) keep(ctx context.Context, r Request, owner string, answer []byte) error {
	res := s.db.WithContext(ctx).Model(&keyRow{}).
		Where("scope = ? AND idem_key = ? AND owner = ? AND state = ?", r.Scope, r.Key, owner, running).
		Updates(map[string]any{"state": done, "answer": string(answer)})
	if res.Error != nil {
		return fmt.Errorf("store idempotent answer: %w", res.Error)
	}
	return nil
}

// release drops owner's running claim, so that the key can be retried.
func (s *Store) release(ctx context.Context, r Request, owner string) {
	// Should it fail, the claim runs out with its lease.
	_ = s.db.WithContext(ctx).
		Where("scope = ? AND idem_key = ? AND owner = ? AND state = ?", r.Scope, r.Key, owner, running).
		Delete(&keyRow{}).Error
}

// Sweep deletes the answers stored before olderThan, and the claims of
// calls that crashed, whose lease ran out before it (called with the
// retention sweeper's time, now minus at least Retention).
func (s *Store) Sweep(ctx context.Context, olderThan time.Time) (int64, error) {
	res := s.db.WithContext(ctx).
		Where("(state = ? AND created_at < ?) OR (state = ? AND lease_until < ?)", done, olderThan.UTC(), running, olderThan.UTC()).
		Delete(&keyRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("sweep idempotency keys: %w", res.Error)
	}
	spent := s.db.WithContext(ctx).Where("hour < ?", olderThan.UTC()).Delete(&budgetRow{})
	if spent.Error != nil {
		return res.RowsAffected, fmt.Errorf("sweep idempotency budgets: %w", spent.Error)
	}
	return res.RowsAffected + spent.RowsAffected, nil
}

// ScopeHash is how a scope is stored: the hex SHA-256 of the scope, so
// that a row's size does not depend on what callers put in their scope.
func ScopeHash(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return hex.EncodeToString(sum[:])
}

// Fingerprint is the SHA-256 of payload's canonical JSON (Canonical): two
// payloads that differ only in key order, white space or how a number is
// written (1.0, 1) have the same fingerprint; null and absent differ, and
// arrays keep their order.
func Fingerprint(payload []byte) ([]byte, error) {
	c, err := Canonical(payload)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(c)
	return sum[:], nil
}
