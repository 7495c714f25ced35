package notify

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// Message is one email as a Sender sends it.
type Message struct {
	// ID is the outbox row's id, the same on every try: the Message-ID is made from it.
	ID string
	// From, To and ReplyTo (may be empty) are addresses.
	From, To, ReplyTo string
	// Subject, Text and HTML are what the caller rendered.
	Subject, Text, HTML string
	// Date is when the email was written.
	Date time.Time
}

// Sender delivers a message. An error wrapping a *PermanentError says the
// server refused it for good (SMTP 5xx); any other error is temporary.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// PermanentError is a refusal that trying again will not change.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

func (e *PermanentError) Unwrap() error { return e.Err }

// Worker delivers the outbox's pending emails: the Courier of the emails table.
type Worker = Courier[row, *row]

// NewWorker returns a worker that sends db's outbox through sender, from
// the address from.
func NewWorker(db *gorm.DB, sender Sender, from string, opts *WorkerOptions) *Worker {
	send := func(ctx context.Context, r *row) error {
		return sender.Send(ctx, Message{ID: r.ID, From: from, To: r.Recipient, ReplyTo: r.ReplyTo,
			Subject: r.Subject, Text: r.BodyText, HTML: r.BodyHTML, Date: r.CreatedAt})
	}
	about := func(r *row) []any { return []any{"email", r.ID, "kind", r.Kind, "ref", r.Ref} }
	return emails(db).Courier(send, about, opts)
}

// emails is the outbox of the emails table.
func emails(db *gorm.DB) *Outbox[row, *row] { return NewOutbox[row](db, "email") }
