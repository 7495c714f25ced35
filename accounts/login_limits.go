package accounts

import (
	"fmt"
	"time"

	"gorm.io/gorm"

	"shop"
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

// byNetwork is the condition on a row's network, with the literal that lets
// the partial indexes of migration 00112 serve it.
const byNetwork = "network = ? AND network <> ''"

// addressLock is the key of the lock (prefix names the count) under which
// addr's counts are taken one transaction at a time: its IPv6 /48's, which
// covers both tiers, or the IPv4 address's own.
func addressLock(prefix, addr string) string {
	if network := shop.NetworkOf(addr); network != "" {
		return prefix + ".network:" + network
	}
	return prefix + ".address:" + addr
}

// countCodes answers errTooMany when the codes sent within rateWindow to
// email from addr, to email, from addr, or from addr's IPv6 /48 (network,
// "" for none; shop.DefaultNetworkMultiple times an address's) reach their
// limits.
func countCodes(tx *gorm.DB, email, addr, network string) error {
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
	if network != "" {
		limits = append(limits, struct {
			where string
			args  []any
			max   int64
		}{byNetwork, []any{network}, perAddrCodes * shop.DefaultNetworkMultiple})
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
