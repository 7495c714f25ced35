package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop"
	"shop/database"
)

// SandboxOptions configure a Sandbox; nil or zero fields take defaults.
type SandboxOptions struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Sandbox is the offline provider: Stripe's behaviour for the test payment
// methods, kept in the database (tables sandbox_charges and sandbox_refunds),
// so it survives restarts and is shared by replicas. It runs in test mode
// only and marks every result Simulated.
type Sandbox struct {
	db  *gorm.DB
	now func() time.Time
}

// NewSandbox returns the sandbox provider over a migrated database.
func NewSandbox(db *gorm.DB, opts *SandboxOptions) *Sandbox {
	s := &Sandbox{db: db, now: time.Now}
	if opts != nil && opts.Now != nil {
		s.now = opts.Now
	}
	return s
}

// Name returns "sandbox".
func (s *Sandbox) Name() string { return "sandbox" }

// Mode returns ModeTest: the sandbox never moves money.
func (s *Sandbox) Mode() Mode { return ModeTest }

// String describes the provider for the operator's start-up line.
func (s *Sandbox) String() string { return "sandbox (simulated payments, test mode)" }

// sandboxCard is the test card a token pays with in the sandbox: one of
// [TestCards], with the outcome Stripe gives it. Shared payment tokens
// (spt_…) succeed with no card the sandbox could know.
func sandboxCard(token string) (TestCard, error) {
	kind, err := tokenKind(token)
	if err != nil {
		return TestCard{}, err
	}
	if kind == kindSPT {
		return TestCard{Outcome: Succeeded}, nil
	}
	if c, ok := FindTestCard(token); ok {
		return c, nil
	}
	return TestCard{}, shop.Errorf(shop.Invalid, "$.payment_data.token",
		"the sandbox (the shop runs without a Stripe key) takes a shared payment token (spt_…) or one of Stripe's test payment methods: "+
			"pm_card_visa (paid), pm_card_visa_chargeDeclined (declined), pm_card_chargeDeclinedInsufficientFunds (declined, insufficient funds), "+
			"pm_card_authenticationRequired (3D Secure required)")
}

// chargeRow is a row of sandbox_charges.
type chargeRow struct {
	IdempotencyKey string `gorm:"primaryKey"`
	RequestHash    string
	Reference      string
	Status         Status
	DeclineCode    string
	Message        string
	Amount         int64
	Currency       string
	Refunded       int64
	CardBrand      string
	CardLast4      string `gorm:"column:card_last4"`
	// Metadata is the request's, with [ChargedBy], as JSON.
	Metadata  map[string]string `gorm:"serializer:json"`
	CreatedAt time.Time
}

func (chargeRow) TableName() string { return "sandbox_charges" }

// chargeColumns are the columns Charge writes, in chargeRow's order: every
// sandbox payment writes one, below gorm (database.Insert).
var chargeColumns = []string{"idempotency_key", "request_hash", "reference", "status", "decline_code", "message", "amount",
	"currency", "refunded", "card_brand", "card_last4", "metadata", "created_at"}

func (c *chargeRow) result() *Result {
	return &Result{Status: c.Status, Reference: c.Reference, DeclineCode: c.DeclineCode, Message: c.Message, Simulated: true,
		CardBrand: c.CardBrand, CardLast4: c.CardLast4, Amount: c.Amount, Currency: c.Currency, Refunded: c.Refunded,
		Metadata: c.Metadata}
}

// refundRow is a row of sandbox_refunds.
type refundRow struct {
	IdempotencyKey string `gorm:"primaryKey"`
	RequestHash    string
	Reference      string
	Charge         string
	Amount         int64
	CreatedAt      time.Time
}

func (refundRow) TableName() string { return "sandbox_refunds" }

// Charge answers as Stripe does for the test payment methods, once per
// idempotency key: the first request with a key is recorded, and the same
// key with the same amount, currency and token answers that record again,
// however many callers race; the same key with a different request is
// refused with ErrKeyReused. A token the sandbox does not know is a
// *shop.Error for $.payment_data.token.
func (s *Sandbox) Charge(ctx context.Context, r Request) (*Result, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	c, err := s.card(ctx, r)
	if err != nil {
		return nil, err
	}
	hash := requestHash("charge", strconv.FormatInt(r.Amount, 10), r.Currency, r.Token)
	if r.Customer != "" {
		hash = requestHash("charge", strconv.FormatInt(r.Amount, 10), r.Currency, r.Token, r.Customer)
	}
	row := chargeRow{
		IdempotencyKey: r.IdempotencyKey, RequestHash: hash, Reference: shop.NewID("pi_sandbox_"),
		Status: c.Outcome, DeclineCode: c.Code(), Amount: r.Amount, Currency: r.Currency,
		CardBrand: c.Brand, CardLast4: c.Last4, CreatedAt: s.now().UTC(),
	}
	if row.DeclineCode != "" {
		row.Message = buyerMessage(row.DeclineCode, c.Message)
	}
	row.Metadata = map[string]string{"idempotency_key": r.IdempotencyKey, ChargedBy: ChargedByShop}
	for k, v := range r.Metadata {
		row.Metadata[k] = v
	}
	meta, err := json.Marshal(row.Metadata)
	if err != nil {
		return nil, fmt.Errorf("sandbox charge %s: metadata: %w", r.IdempotencyKey, err)
	}
	var stored chargeRow
	err = database.Transact(ctx, s.db, func(tx *gorm.DB) error {
		// Insert or read: the key is the primary key, so of racing callers
		// one inserts and the others (waiting on its lock) insert nothing
		// and read its row.
		n, err := database.InsertSuffix(tx, "sandbox_charges", chargeColumns, " ON CONFLICT DO NOTHING", []any{row.IdempotencyKey,
			row.RequestHash, row.Reference, row.Status, row.DeclineCode, row.Message, row.Amount, row.Currency, row.Refunded,
			row.CardBrand, row.CardLast4, string(meta), row.CreatedAt})
		if err != nil {
			return fmt.Errorf("sandbox charge %s: %w", r.IdempotencyKey, err)
		}
		if n == 1 {
			stored = row // this call's charge: no need to read it back
			return nil
		}
		if err := tx.Where("idempotency_key = ?", r.IdempotencyKey).Take(&stored).Error; err != nil {
			return fmt.Errorf("sandbox charge %s: %w", r.IdempotencyKey, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if stored.RequestHash != hash {
		return nil, fmt.Errorf("%w: sandbox charge %s was made for another amount, currency or token", ErrKeyReused, r.IdempotencyKey)
	}
	return stored.result(), nil
}

// Lookup returns the charge made with an idempotency key; found is false
// when the sandbox never recorded one.
func (s *Sandbox) Lookup(ctx context.Context, key string) (*Result, bool, error) {
	var row chargeRow
	err := s.db.WithContext(ctx).Where("idempotency_key = ?", key).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("sandbox lookup %s: %w", key, err)
	}
	return row.result(), true, nil
}

// Payments returns the succeeded sandbox charges made at or after since,
// newest first, at most maxPayments, as [Stripe.Payments] does.
func (s *Sandbox) Payments(ctx context.Context, since time.Time) ([]Result, error) {
	var rows []chargeRow
	err := s.db.WithContext(ctx).Where("status = ? AND created_at >= ?", Succeeded, since.UTC()).
		Order("created_at DESC").Limit(maxPayments).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("sandbox payments: %w", err)
	}
	out := make([]Result, len(rows))
	for i := range rows {
		out[i] = *rows[i].result()
	}
	return out, nil
}

// Refund refunds part or all of a succeeded sandbox charge, once per
// idempotency key. The refunds of a charge add up to at most its amount:
// more is a *shop.Error for $.amount. The same key with a different
// reference or amount is refused with ErrKeyReused.
func (s *Sandbox) Refund(ctx context.Context, r RefundRequest) (*Refund, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	hash := requestHash("refund", r.Reference, strconv.FormatInt(r.Amount, 10))
	var out *Refund
	err := database.Transact(ctx, s.db, func(tx *gorm.DB) error {
		out = nil
		if prior, err := s.priorRefund(tx, r, hash); prior != nil || err != nil {
			out = prior
			return err
		}
		if _, err := chargeOf(tx, r); err != nil {
			return err
		}
		// Insert or read, as for charges: of racing callers with one key,
		// one inserts and the others read its refund.
		row := refundRow{
			IdempotencyKey: r.IdempotencyKey, RequestHash: hash, Reference: shop.NewID("re_sandbox_"),
			Charge: r.Reference, Amount: r.Amount, CreatedAt: s.now().UTC(),
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil {
			return fmt.Errorf("sandbox refund %s: %w", r.IdempotencyKey, res.Error)
		}
		if res.RowsAffected == 0 {
			prior, err := s.priorRefund(tx, r, hash)
			if err == nil && prior == nil {
				err = fmt.Errorf("sandbox refund %s: neither inserted nor found", r.IdempotencyKey)
			}
			out = prior
			return err
		}
		// One conditional update: concurrent refunds of one charge never
		// add up to more than its amount. A refusal rolls the refund back.
		res = tx.Model(&chargeRow{}).
			Where("reference = ? AND status = ? AND refunded + ? <= amount", r.Reference, Succeeded, r.Amount).
			Update("refunded", gorm.Expr("refunded + ?", r.Amount))
		if res.Error != nil {
			return fmt.Errorf("sandbox refund %s: %w", r.IdempotencyKey, res.Error)
		}
		if res.RowsAffected == 0 {
			return s.refusal(tx, r)
		}
		out = &Refund{Reference: row.Reference, Amount: row.Amount, Status: string(Succeeded), Simulated: true}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// priorRefund returns the refund already made with r's key, nil when there
// is none, or ErrKeyReused when it was made for another request.
func (s *Sandbox) priorRefund(tx *gorm.DB, r RefundRequest, hash string) (*Refund, error) {
	var prior refundRow
	err := tx.Where("idempotency_key = ?", r.IdempotencyKey).Take(&prior).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("sandbox refund %s: %w", r.IdempotencyKey, err)
	case prior.RequestHash != hash:
		return nil, fmt.Errorf("%w: sandbox refund %s was made for another payment or amount", ErrKeyReused, r.IdempotencyKey)
	}
	return &Refund{Reference: prior.Reference, Amount: prior.Amount, Status: string(Succeeded), Simulated: true}, nil
}

// chargeOf reads the charge a refund names; not_found when there is none.
func chargeOf(tx *gorm.DB, r RefundRequest) (*chargeRow, error) {
	var c chargeRow
	err := tx.Where("reference = ?", r.Reference).Take(&c).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return nil, shop.Errorf(shop.NotFound, "", "the sandbox has no payment %s to refund", r.Reference)
	case err != nil:
		return nil, fmt.Errorf("sandbox refund %s: %w", r.IdempotencyKey, err)
	}
	return &c, nil
}

// refusal says why a refund of r's charge cannot be made.
func (s *Sandbox) refusal(tx *gorm.DB, r RefundRequest) error {
	c, err := chargeOf(tx, r)
	switch {
	case err != nil:
		return err
	case c.Status != Succeeded:
		return shop.Errorf(shop.Invalid, "", "payment %s was %s, not paid: there is nothing to refund", r.Reference, strings.ReplaceAll(string(c.Status), "_", " "))
	case c.Refunded >= c.Amount:
		return shop.Errorf(shop.Invalid, "$.amount", "this payment is already fully refunded")
	}
	return shop.Errorf(shop.Invalid, "$.amount", "the refund (%d) is more than what is left to refund of this payment (%d, in minor units)", r.Amount, c.Amount-c.Refunded)
}
