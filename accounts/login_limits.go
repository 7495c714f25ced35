package accounts

import (
	"fmt"
	"time"

	"gorm.io/gorm"

	"shop/database"
)

// Sign-in codes per rateWindow: to one email from one address, to one
// email in all, asked for from one address. The first is the smaller, so
// that a stranger asking for someone's codes from their own address does
// not lock that buyer out (docs/limits.md).
const (
	rateWindow        = time.Hour
	perEmailAddrCodes = 5
	perEmailCodes     = 20
	perAddrCodes      = 20
)

// countCodes answers errTooMany when the codes sent within rateWindow to
// email from addr, to email, or from addr reach their limits.
func countCodes(tx *gorm.DB, email, addr string) error {
	since := database.Now(tx).UTC().Add(loginCodeLife - rateWindow) // codes sent within the window expire after since
	limits := []struct {
		where string
		args  []any
		max   int64
	}{
		{"email = ? AND address = ?", []any{email, addr}, perEmailAddrCodes},
		{"email = ?", []any{email}, perEmailCodes},
		{"address = ?", []any{addr}, perAddrCodes},
	}
	for _, lim := range limits {
		var n int64
		if err := tx.Model(&flowRow{}).Where(lim.where, lim.args...).Where("code_expires_at > ?", since).Count(&n).Error; err != nil {
			return fmt.Errorf("count codes: %w", err)
		}
		if n >= lim.max {
			return errTooMany
		}
	}
	return nil
}
