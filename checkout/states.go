package checkout

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gorm.io/gorm"

	"shop/database"
	"shop/payments"
)

// The statuses of the rows completion moves, and their transitions: each
// transition is one function below whose conditional UPDATE names the
// statuses it may leave (the package doc draws the machines). A session
// (Status, session.go) moves by versioned saves instead (save, ExpireDue).

// attemptStatus is where a payment attempt (payment_attempts) stands.
type attemptStatus string

// The statuses of a payment attempt: pending until the provider's outcome
// is known, then one of the others, for good but for failed → orphaned.
const (
	attemptPending        attemptStatus = "pending"
	attemptSucceeded      attemptStatus = "succeeded"
	attemptDeclined       attemptStatus = "declined"
	attemptRequiresAction attemptStatus = "requires_action"
	// attemptFailed: the provider refused the request or, asked after the
	// grace period, showed no charge; nothing was charged.
	attemptFailed attemptStatus = "failed"
	// attemptOrphaned: given up on, then the provider answered that it
	// charged after all; the money must go back.
	attemptOrphaned attemptStatus = "orphaned"
)

// surplusStatus is where a surplus payment (surplus_payments) stands:
// recorded (pending) in the transaction that finds the payment has no order
// to take it, refunded after, failed when the provider refuses the refund
// (for staff to look at).
type surplusStatus string

// The statuses of a surplus payment.
const (
	surplusPending  surplusStatus = "pending"
	surplusRefunded surplusStatus = "refunded"
	surplusFailed   surplusStatus = "failed"
)

// linkStatus is where a hosted payment page (payment_links) stands.
type linkStatus string

// The statuses of a payment link: open until it is paid, expires (or is
// closed by the shop) or its making failed.
const (
	linkOpen    linkStatus = "open"
	linkPaid    linkStatus = "paid"
	linkExpired linkStatus = "expired"
	linkFailed  linkStatus = "failed"
)

// move is the conditional UPDATE of every transition: the row of model's
// table with id takes set (its new status among it) only when its status is
// one of from. It reports whether the row moved: false when it was not in
// one of from (someone else moved it first, or it has no such row).
// It is one fixed statement below gorm (database.Exec), its columns in
// order, so that each transition's text is the same every time.
func move[S ~string](ctx context.Context, db *gorm.DB, model interface{ TableName() string }, id string, from []S, set map[string]any) (bool, error) {
	var sql strings.Builder
	sql.WriteString("UPDATE " + model.TableName() + " SET ")
	args := make([]any, 0, len(set)+1+len(from))
	for i, col := range slices.Sorted(maps.Keys(set)) {
		if i > 0 {
			sql.WriteString(", ")
		}
		sql.WriteString(col + " = ?")
		args = append(args, set[col])
	}
	sql.WriteString(" WHERE id = ? AND status IN (" + database.In(len(from)) + ")")
	args = append(args, id)
	for _, f := range from {
		args = append(args, f)
	}
	n, err := database.Exec(db.WithContext(ctx), sql.String(), args...)
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// settleAttempt moves a pending attempt to its outcome (succeeded,
// declined, requires_action or failed) and reports whether it did (false:
// settled already). Callers may race (caller, reconciler, webhook): one
// wins. The payment token goes in the same update: nothing asks the
// provider with it again once the outcome is known (the reconciler looks
// charges up by idempotency key), and staff keep what they need of the
// payment: the provider's reference and the card's brand and last four
// digits.
func (c *Checkout) settleAttempt(ctx context.Context, tx *gorm.DB, attemptID string, to attemptStatus, res *payments.Result) (bool, error) {
	set := map[string]any{"status": to, "token": "", "updated_at": database.Now(tx)}
	if res != nil {
		set["reference"], set["decline_code"], set["message"] = res.Reference, res.DeclineCode, res.Message
		set["card_brand"], set["card_last4"] = res.CardBrand, res.CardLast4
	}
	ok, err := move(ctx, tx, &attemptRow{}, attemptID, []attemptStatus{attemptPending}, set)
	if err != nil {
		return false, fmt.Errorf("settle payment attempt %s: %w", attemptID, err)
	}
	return ok, nil
}

// orphanAttempt moves a failed attempt to orphaned, recording the charge
// the provider made for it after all, and reports whether it did.
func (c *Checkout) orphanAttempt(ctx context.Context, tx *gorm.DB, attemptID string, res *payments.Result) (bool, error) {
	ok, err := move(ctx, tx, &attemptRow{}, attemptID, []attemptStatus{attemptFailed}, map[string]any{
		"status": attemptOrphaned, "reference": res.Reference,
		"card_brand": res.CardBrand, "card_last4": res.CardLast4, "updated_at": database.Now(tx),
	})
	if err != nil {
		return false, fmt.Errorf("record orphaned charge %s: %w", attemptID, err)
	}
	return ok, nil
}

// settleSurplus moves a pending surplus payment to the outcome of its
// refund: refunded (with the refund's reference) or failed (with the
// provider's message).
func (c *Checkout) settleSurplus(ctx context.Context, id string, to surplusStatus, refund, message string) error {
	_, err := move(ctx, c.db, &surplusRow{}, id, []surplusStatus{surplusPending}, map[string]any{
		"status": to, "refund_reference": refund, "message": message, "updated_at": c.now().UTC(),
	})
	if err != nil {
		return fmt.Errorf("settle surplus payment %s: %w", id, err)
	}
	return nil
}

// endLink moves an open payment link to paid, expired or failed.
func (c *Checkout) endLink(ctx context.Context, linkID string, to linkStatus) error {
	_, err := move(ctx, c.db, &linkRow{}, linkID, []linkStatus{linkOpen}, map[string]any{"status": to, "updated_at": c.now().UTC()})
	if err != nil {
		return fmt.Errorf("payment link %s: %w", linkID, err)
	}
	return nil
}
