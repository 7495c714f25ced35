package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"gorm.io/gorm"

	"shop/database"
)

// Delivery is the part of an outbox's row that the outbox itself reads and
// writes: its id and where its delivery stands. A table is an outbox when
// its gorm model embeds Delivery and it has these columns (as emails has,
// migrations/00015_emails.sql) beside created_at, updated_at and its own;
// the rest of a row (what it is, where it goes) is its owner's.
type Delivery struct {
	ID           string `gorm:"primaryKey"`
	Status       Status
	Attempts     int
	NextAt       time.Time
	Claim        string
	ClaimedUntil *time.Time
	LastError    string
	SentAt       *time.Time
}

func (d *Delivery) delivery() *Delivery { return d }

// Row is a pointer to R, the gorm model of an outbox's table, which embeds
// Delivery (that is the one way to have its method).
type Row[R any] interface {
	*R
	delivery() *Delivery
}

// Outbox is a table of rows written in the transaction of the change that
// causes each (pending, next_at now) and delivered by a [Courier]. R is its
// gorm model; P is *R.
type Outbox[R any, P Row[R]] struct {
	db   *gorm.DB
	noun string
}

// NewOutbox returns the outbox of R's table in db; noun names a row in
// errors and log lines ("email", "order webhook").
func NewOutbox[R any, P Row[R]](db *gorm.DB, noun string) *Outbox[R, P] {
	return &Outbox[R, P]{db: db, noun: noun}
}

// Stand reads the outbox's backlog.
func (o *Outbox[R, P]) Stand(ctx context.Context) (Backlog, error) {
	var counts []struct {
		Status Status
		N      int64
	}
	if err := o.db.WithContext(ctx).Model(new(R)).Select("status, COUNT(*) AS n").Group("status").Scan(&counts).Error; err != nil {
		return Backlog{}, fmt.Errorf("count %ss: %w", o.noun, err)
	}
	var b Backlog
	for _, c := range counts {
		switch c.Status {
		case Pending, Sending:
			b.Pending += c.N
		case Failed:
			b.Failed += c.N
		case Sent:
			b.Sent += c.N
		}
	}
	if b.Pending > 0 {
		var err error
		if _, b.Oldest, err = database.CountOldest(ctx, o.db.Model(new(R)).Where("status IN ?", []Status{Pending, Sending}), "created_at"); err != nil {
			return Backlog{}, fmt.Errorf("oldest %s: %w", o.noun, err)
		}
	}
	return b, nil
}

// sweepBatch bounds the rows one statement of Sweep deletes, so that no
// statement holds its locks for long. Tests make it smaller.
var sweepBatch = 500

// ended are the statuses a row never leaves: what Sweep deletes.
var ended = []Status{Sent, Failed}

// Sweep deletes the rows that ended (sent, or failed: given up on) and
// last changed before cutoff, in statements of at most sweepBatch rows,
// until none is left or ctx is done, and returns how many it deleted. A row
// still pending or sending stays, however old. Replicas may sweep at once:
// each row is deleted once, and an ended row never changes again.
func (o *Outbox[R, P]) Sweep(ctx context.Context, cutoff time.Time) (int64, error) {
	var deleted int64
	for ctx.Err() == nil {
		db := o.db.WithContext(ctx)
		batch := db.Model(new(R)).Select("id").Where("status IN ? AND updated_at <= ?", ended, cutoff.UTC()).Limit(sweepBatch)
		res := db.Where("id IN (?)", batch).Delete(new(R))
		if res.Error != nil {
			return deleted, fmt.Errorf("sweep ended %ss: %w", o.noun, res.Error)
		}
		deleted += res.RowsAffected
		if res.RowsAffected < int64(sweepBatch) {
			break
		}
	}
	return deleted, nil
}

// newToken is prefix and 128 random bits in hex: an id, or a claim.
func newToken(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return prefix + hex.EncodeToString(b)
}
