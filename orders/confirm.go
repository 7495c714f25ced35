package orders

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"gorm.io/gorm"

	"shop"
)

// ConfirmTTL is how long a two-step action's confirm token lives.
const ConfirmTTL = 10 * time.Minute

// confirmRow is a row of confirm_tokens: the hash of a token, the actor and
// tool it was issued to, and what it confirms: the hash of the exact
// arguments and the hash of the plan the preview showed, as
// "<arguments>:<plan>" in the one args_hash column.
type confirmRow struct {
	TokenHash string `gorm:"primaryKey"`
	Actor     string
	Tool      string
	ArgsHash  string
	ExpiresAt time.Time
	UsedAt    *time.Time
}

func (confirmRow) TableName() string { return "confirm_tokens" }

// bound is what a confirm token is bound to: the call's arguments and the
// plan its preview showed, each hashed.
type bound struct{ args, plan string }

func (b bound) String() string { return b.args + ":" + b.plan }

func parseBound(s string) bound {
	args, plan, _ := strings.Cut(s, ":")
	return bound{args, plan}
}

// binding hashes a call's arguments (args, its Confirm field emptied) and
// the plan its preview shows (plan: what would be done and the state it
// was computed from, such as the amount a default refund takes).
func binding(tool string, args, plan any) (bound, error) {
	a, err := argsHash(tool, args)
	if err != nil {
		return bound{}, err
	}
	p, err := argsHash(tool+" plan", plan)
	if err != nil {
		return bound{}, err
	}
	return bound{a, p}, nil
}

// TwoStep are the arguments every two-step action takes: why, and the
// confirm token of its preview (none for the preview itself).
type TwoStep struct {
	Reason  string `json:"reason" jsonschema:"Why, for the audit log."`
	Confirm string `json:"confirm" jsonschema:"The token of this call's preview."`
}

func (t *TwoStep) step() *TwoStep { return t }

// RefineSchema bounds the reason and the token.
func (TwoStep) RefineSchema(s *jsonschema.Schema) {
	p := s.Properties
	p["reason"].MinLength, p["reason"].MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxReasonLen)
	p["confirm"].MaxLength = jsonschema.Ptr(maxConfirmLen)
	s.Required = slices.DeleteFunc(s.Required, func(n string) bool { return n == "confirm" })
}

// Bounds of a two-step action's reason and confirm token.
const (
	maxReasonLen  = 500
	maxConfirmLen = 100
)

// begin starts an owner's two-step action: it checks the caller's role and
// the reason and takes the confirm token out of the arguments, so that a
// preview and its confirmation hash alike.
func begin(ctx context.Context, args interface{ step() *TwoStep }) (shop.Actor, string, error) {
	actor, err := require(ctx, shop.Owner)
	if err != nil {
		return actor, "", err
	}
	st := args.step()
	if err := checkText("$.reason", st.Reason, maxReasonLen); err != nil {
		return actor, "", err
	}
	confirm := st.Confirm
	st.Confirm = ""
	return actor, confirm, nil
}

// Preview is the first step of an action that sends money or stock out:
// what would happen (P), and the token that makes it happen.
type Preview[P any] struct {
	Preview   P         `json:"preview"`
	Confirm   string    `json:"confirm"`
	ExpiresAt time.Time `json:"expires_at"`
	Next      string    `json:"next"`
}

// argsHash identifies a tool call's arguments, the confirm token left out.
// args is the decoded arguments struct with its Confirm field emptied, so
// equal calls hash equal whatever their JSON's spacing or key order.
func argsHash(tool string, args any) (string, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(append([]byte(tool+"\x00"), b...))
	return hex.EncodeToString(h[:]), nil
}

func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// preview issues a single-use confirm token for exactly this tool, these
// arguments, this plan and this actor, and returns what the caller sees
// (what would happen) and its text (summary, then what to do next).
// plan is what the action would do as the shop computed it from the state
// it read (amounts, units, stock before and after): the confirmation
// recomputes it and is refused when it differs.
func preview[P any](ctx context.Context, a *Admin, actor shop.Actor, tool string, args, plan any, what P, summary string) (*Preview[P], string, error) {
	bnd, err := binding(tool, args, plan)
	if err != nil {
		return nil, "", fmt.Errorf("%s: hash arguments: %w", tool, err)
	}
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	token := "cfm_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
	row := confirmRow{TokenHash: tokenHash(token), Actor: actor.String(), Tool: tool, ArgsHash: bnd.String(), ExpiresAt: a.now().UTC().Add(ConfirmTTL)}
	if err := a.db.WithContext(ctx).Create(&row).Error; err != nil {
		return nil, "", fmt.Errorf("%s: issue confirm token: %w", tool, err)
	}
	p := &Preview[P]{Preview: what, Confirm: token, ExpiresAt: row.ExpiresAt,
		Next: fmt.Sprintf("Nothing has changed yet. To do it, call %s again with the same arguments and confirm: %q within %s.", tool, token, ConfirmTTL)}
	return p, summary + "\n" + p.Next, nil
}

// redeem spends a confirm token in tx, the transaction of the action it
// confirms, or says why it cannot: unknown, for another tool, actor or
// arguments, used, expired, or issued for another plan than plan, the one
// computed now (what was previewed has changed meanwhile: stale describes
// how, for the caller).
func (a *Admin) redeem(ctx context.Context, tx *gorm.DB, actor shop.Actor, tool string, args, plan any, token, stale string) error {
	bad := func(format string, v ...any) error {
		return shop.Errorf(shop.Invalid, "$.confirm", format+"; call %s without confirm for a new preview", append(v, tool)...)
	}
	var row confirmRow
	err := tx.WithContext(ctx).Where("token_hash = ?", tokenHash(token)).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return bad("this confirm token was not issued by the shop")
	}
	if err != nil {
		return fmt.Errorf("%s: read confirm token: %w", tool, err)
	}
	b, err := binding(tool, args, plan)
	if err != nil {
		return fmt.Errorf("%s: hash arguments: %w", tool, err)
	}
	issued := parseBound(row.ArgsHash)
	now := a.now().UTC()
	switch {
	case row.Tool != tool:
		return bad("this confirm token is for %s, not %s", row.Tool, tool)
	case row.Actor != actor.String():
		return bad("this confirm token was issued to another staff member")
	case issued.args != b.args:
		return bad("this confirm token was issued for other arguments; send exactly the arguments of the preview")
	case row.UsedAt != nil:
		return bad("this confirm token was already used")
	case !now.Before(row.ExpiresAt):
		return bad("this confirm token expired %s ago", now.Sub(row.ExpiresAt).Round(time.Second))
	case issued.plan != b.plan:
		return bad("%s; nothing was done", stale)
	}
	res := tx.WithContext(ctx).Model(&confirmRow{}).Where("token_hash = ? AND used_at IS NULL", row.TokenHash).Update("used_at", now)
	if res.Error != nil {
		return fmt.Errorf("%s: spend confirm token: %w", tool, res.Error)
	}
	if res.RowsAffected != 1 {
		return bad("this confirm token was already used")
	}
	return nil
}
