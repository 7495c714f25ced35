package checkout

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop"
	"shop/database"
)

// A promotion's usage limit holds in the database, whatever the replicas
// and concurrent payments: promotion_uses counts per code the uses taken,
// one per order the promotion applied to and one per payment in flight that
// would make such an order.
//
//   - The claim of a session (complete_checkout, a paid payment page) locks
//     its code's row first, prices the session, and when the promotion
//     applies takes a use by a conditional update (used < usage_limit) in
//     the same transaction, before the provider is called. The attempt
//     keeps the code (payment_attempts.promo_code).
//   - The attempt's end keeps the use when it makes the order, and gives it
//     back (release) when it ends without one: declined, failed, given up,
//     or paid for a session that had ended. Settling an attempt is a
//     conditional update on its status, so a use goes back once.
//
// Lock order: a code's row before the variants' rows (claim, release), so
// that two transactions never wait on each other in a cycle.

// promoUse is a row of promotion_uses.
type promoUse struct {
	Code string `gorm:"primaryKey"`
	Used int64
}

func (promoUse) TableName() string { return "promotion_uses" }

// promoUses returns the uses of a promotion taken: by orders it applied to
// and by payments in flight.
func (c *Checkout) promoUses(ctx context.Context, tx *gorm.DB, code string) (int64, error) {
	var used []int64
	if err := tx.WithContext(ctx).Model(&promoUse{}).Where("code = ?", code).Pluck("used", &used).Error; err != nil {
		return 0, fmt.Errorf("uses of %s: %w", code, err)
	}
	if len(used) == 0 {
		return 0, nil
	}
	return used[0], nil
}

// lockPromo makes sure a code has its row and locks it until tx ends
// (database.Lock: SQLite's write lock, taken when tx began, serializes
// writers already).
func (c *Checkout) lockPromo(ctx context.Context, tx *gorm.DB, code string) error {
	tx = tx.WithContext(ctx)
	err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "code"}}, DoNothing: true}).
		Create(&promoUse{Code: code}).Error
	if err != nil {
		return fmt.Errorf("uses of %s: %w", code, err)
	}
	var used []int64
	if err := tx.Model(&promoUse{}).Clauses(database.Lock()).Where("code = ?", code).Pluck("used", &used).Error; err != nil {
		return fmt.Errorf("lock uses of %s: %w", code, err)
	}
	return nil
}

// takePromo takes a use of promo in tx, unless its usage limit is reached:
// it reports whether it did.
func (c *Checkout) takePromo(ctx context.Context, tx *gorm.DB, promo *Promotion) (bool, error) {
	q := tx.WithContext(ctx).Model(&promoUse{}).Where("code = ?", promo.Code)
	if promo.UsageLimit != nil {
		q = q.Where("used < ?", *promo.UsageLimit)
	}
	res := q.Update("used", gorm.Expr("used + 1"))
	if res.Error != nil {
		return false, fmt.Errorf("take a use of %s: %w", promo.Code, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// givePromoBack gives back, in tx, the uses of the codes an attempt took.
func (c *Checkout) givePromoBack(ctx context.Context, tx *gorm.DB, att *attemptRow) error {
	for _, code := range splitCodes(att.PromoCode) {
		err := tx.WithContext(ctx).Model(&promoUse{}).Where("code = ? AND used > 0", code).
			Update("used", gorm.Expr("used - 1")).Error
		if err != nil {
			return fmt.Errorf("give back the use of %s of %s: %w", code, att.ID, err)
		}
	}
	return nil
}

// promoUsedUp reports whether a promotion has reached its usage limit.
func (c *Checkout) promoUsedUp(ctx context.Context, tx *gorm.DB, promo *Promotion) (bool, error) {
	if promo == nil || promo.UsageLimit == nil {
		return false, nil
	}
	n, err := c.promoUses(ctx, tx, promo.Code)
	return err == nil && n >= int64(*promo.UsageLimit), err
}

// usedUpMessage is what a session whose promotion ran out while it was
// being paid says: nothing was charged, and the figures are without it.
func usedUpMessage(code string) Message {
	return keyed(errorMessage(string(shop.Invalid), "$.promo_code", fmt.Sprintf(
		"%s has been used up: it has been used as many times as it can be, so its discount no longer applies. "+
			"Nothing was charged; review the new total and pay again, or remove the code (promo_code \"\").", code)),
		KeyPromoUsedUpPaying, "code", code)
}

// knownPromos are the promotions of a promo_code column's codes, each once,
// in the order of their codes (the order claims lock them in).
func (c *Checkout) knownPromos(joined string) []*Promotion {
	var out []*Promotion
	for _, code := range splitCodes(joined) {
		if p, ok := c.policy.Promotion(code); ok && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *Promotion) int { return strings.Compare(a.Code, b.Code) })
	return out
}

// lostCodes are the codes applied before that apply no longer.
func lostCodes(before, after string) []string {
	now := splitCodes(after)
	var lost []string
	for _, code := range splitCodes(before) {
		if !slices.Contains(now, code) {
			lost = append(lost, code)
		}
	}
	return lost
}

// takePromos takes, in tx, a use of each promotion of the applied codes
// (locked by the claim): errConflict when one is used up meanwhile, which
// is not expected under the lock; the claim then starts again on fresh
// figures, which leave it out.
func (c *Checkout) takePromos(ctx context.Context, tx *gorm.DB, applied string) error {
	for _, code := range splitCodes(applied) {
		promo, ok := c.policy.Promotion(code)
		if !ok {
			continue
		}
		took, err := c.takePromo(ctx, tx, promo)
		if err != nil {
			return err
		}
		if !took {
			return errConflict
		}
	}
	return nil
}
