// Package notify is the outbox of the shop's emails and the worker that
// delivers it over SMTP. It knows nothing of orders: a caller renders an
// email (subject, plain text, HTML) and writes it with [Enqueue] in the
// transaction of the change that causes it, so that the email and the change
// are committed together or not at all; a [Worker] sends what is pending.
//
// The machinery is any outbox's (outbox.go, courier.go): a table whose gorm
// model embeds [Delivery] is an [Outbox], and its [Courier] claims, delivers
// and records its rows as below; the emails are one such table, and the
// order webhooks to agents' platforms (package orders) another, each with
// its own rows and its own way to send one. [Outbox.Sweep] deletes the rows
// that ended, for a table nobody reads once delivered.
//
// # Life cycle
//
// An email (emails.status, Status):
//
//	(Enqueue, in the caller's transaction) → pending
//	pending ─claim (a worker, with a lease)──→ sending
//	sending ─the server accepted it (2xx)─────→ sent
//	   ├─────a temporary refusal (4xx, no answer)→ pending (next_at later: back-off)
//	   ├─────a permanent refusal (5xx), or too many temporary ones → failed (last_error says why)
//	   └─────the lease ran out (the worker died) → claimed again by any worker
//
// Each arrow is one conditional UPDATE naming the status it leaves (and, from
// sending, the claim that took it), so of several replicas' workers exactly
// one sends a row. The one window in which a row can go out twice is a worker
// that ends after the server accepted the message and before it recorded so;
// the message keeps its Message-ID on every try, so mail systems see the
// same message.
package notify

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop/database"
)

// Status is where an email stands.
type Status string

// The statuses of an email.
const (
	Pending Status = "pending" // waiting for a worker (again, after a temporary failure)
	Sending Status = "sending" // claimed by a worker
	Sent    Status = "sent"    // the SMTP server accepted it
	Failed  Status = "failed"  // given up on: last_error says why
)

// Bounds of what an email may hold.
const (
	maxSubject = 200
	maxBody    = 256 << 10
	maxKey     = 200
)

// Email is an email to send, rendered by the caller.
type Email struct {
	// Key makes the email unique: a second Enqueue with the same key writes
	// nothing (such as "ord_…/confirmation").
	Key string
	// Ref is what the email is about (an order id), for List.
	Ref string
	// Kind names the email for staff ("confirmation", "shipped", …).
	Kind string
	// To is the recipient's address.
	To string
	// ReplyTo is the address replies go to; empty for none.
	ReplyTo string
	// Subject is the subject line, one line of text.
	Subject string
	// Text and HTML are the two alternatives of the body.
	Text, HTML string
}

// row is a row of emails.
type row struct {
	Delivery
	DedupeKey string
	Ref       string
	Kind      string
	Recipient string
	ReplyTo   string
	Subject   string
	BodyText  string
	BodyHTML  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (row) TableName() string { return "emails" }

// ErrInvalid is returned (wrapped) by Enqueue for an email that could not
// be sent as it is: a bad address, a subject of several lines, a body too large.
var ErrInvalid = errors.New("invalid email")

// Enqueue writes e to the outbox in tx, the transaction of the change that
// causes it; the worker sends it once tx commits. An email whose Key is
// already in the outbox is not written again, and that is no error.
func Enqueue(ctx context.Context, tx *gorm.DB, e Email) error {
	if err := e.check(); err != nil {
		return fmt.Errorf("enqueue email %q: %w: %w", e.Key, ErrInvalid, err)
	}
	now := database.Now(tx).Truncate(time.Microsecond)
	r := row{
		Delivery:  Delivery{ID: newToken("em_"), Status: Pending, NextAt: now},
		DedupeKey: e.Key, Ref: e.Ref, Kind: e.Kind, Recipient: e.To, ReplyTo: e.ReplyTo,
		Subject: e.Subject, BodyText: e.Text, BodyHTML: e.HTML, CreatedAt: now, UpdatedAt: now,
	}
	err := tx.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "dedupe_key"}}, DoNothing: true}).Create(&r).Error
	if err != nil {
		return fmt.Errorf("enqueue email %q: %w", e.Key, err)
	}
	return nil
}

// check refuses an email that could not be sent as it is.
func (e Email) check() error {
	switch {
	case e.Key == "" || len(e.Key) > maxKey:
		return fmt.Errorf("key must have 1 to %d bytes", maxKey)
	case e.Kind == "":
		return errors.New("no kind")
	case e.Subject == "" || len(e.Subject) > maxSubject || strings.ContainsAny(e.Subject, "\r\n"):
		return fmt.Errorf("subject must be one line of 1 to %d bytes", maxSubject)
	case len(e.Text) > maxBody || len(e.HTML) > maxBody:
		return fmt.Errorf("body over %d bytes", maxBody)
	}
	if _, err := mail.ParseAddress(e.To); err != nil {
		return fmt.Errorf("recipient %q: %w", e.To, err)
	}
	if e.ReplyTo != "" {
		if _, err := mail.ParseAddress(e.ReplyTo); err != nil {
			return fmt.Errorf("reply-to %q: %w", e.ReplyTo, err)
		}
	}
	return nil
}

// Forget deletes the emails of kind written before cutoff, sent or not: an
// email whose body must not outlive its use, such as a sign-in code's.
func Forget(ctx context.Context, db *gorm.DB, kind string, cutoff time.Time) (int64, error) {
	res := db.WithContext(ctx).Where("kind = ? AND created_at < ?", kind, cutoff.UTC()).Delete(&row{})
	if res.Error != nil {
		return 0, fmt.Errorf("forget %s emails: %w", kind, res.Error)
	}
	return res.RowsAffected, nil
}

// Record is an email as staff see it.
type Record struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	To        string     `json:"to"`
	Subject   string     `json:"subject"`
	Status    Status     `json:"status"`
	Attempts  int        `json:"attempts"`
	LastError string     `json:"last_error,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	SentAt    *time.Time `json:"sent_at,omitempty"`
}

// List returns the emails about ref, oldest first.
func List(ctx context.Context, db *gorm.DB, ref string) ([]Record, error) {
	var rows []row
	if err := db.WithContext(ctx).Where("ref = ?", ref).Order("created_at, dedupe_key").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list emails of %s: %w", ref, err)
	}
	out := make([]Record, len(rows))
	for i, r := range rows {
		out[i] = Record{ID: r.ID, Kind: r.Kind, To: r.Recipient, Subject: r.Subject, Status: r.Status,
			Attempts: r.Attempts, LastError: r.LastError, CreatedAt: r.CreatedAt.UTC(), SentAt: utc(r.SentAt)}
	}
	return out, nil
}

// Backlog is how an outbox stands, for the operator's metrics.
type Backlog struct {
	// Pending counts the rows not delivered yet and not given up on (pending or sending).
	Pending int64
	// Failed counts the rows given up on.
	Failed int64
	// Sent counts the rows delivered (for emails: the SMTP server accepted them).
	Sent int64
	// Oldest is when the oldest row not delivered yet was written; zero when none.
	Oldest time.Time
}

// Stand reads the email outbox's backlog.
func Stand(ctx context.Context, db *gorm.DB) (Backlog, error) {
	return emails(db).Stand(ctx)
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
