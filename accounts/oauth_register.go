package accounts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop"
	"shop/database"
)

// The budget of dynamic client registration (docs/limits.md): what one
// registration may store is bounded, identical metadata is stored once,
// one client address registers at most registrationsPerHour new clients,
// and a client that never got an authorization is deleted a day after it
// registered (Sweep), so a stranger's registrations cost the shop a few
// hundred kilobytes a day at most.
const (
	maxRegisteredRedirects = 5
	maxRegisteredURILen    = 512
	registrationsPerHour   = 10
	unusedClientLife       = 24 * time.Hour
)

// budgetError refuses a registration past the address's budget; wait is
// how long until its oldest registration of the hour leaves the count.
type budgetError struct{ wait time.Duration }

func (e *budgetError) Error() string { return "too many registrations from this address" }

// retryAfter is e's wait in whole seconds, at least one, for Retry-After.
func (e *budgetError) retryAfter() string {
	return strconv.Itoa(max(1, int(e.wait.Round(time.Second)/time.Second)))
}

// checkSize refuses metadata larger than the shop stores, with RFC 7591's
// error code and a description naming the field.
func (reg registration) checkSize() (code, desc string) {
	if n := len(reg.RedirectURIs); n > maxRegisteredRedirects {
		return "invalid_redirect_uri", fmt.Sprintf("redirect_uris: at most %d URIs (%d were sent)", maxRegisteredRedirects, n)
	}
	for i, u := range reg.RedirectURIs {
		if len(u) > maxRegisteredURILen {
			return "invalid_redirect_uri", fmt.Sprintf("redirect_uris[%d]: at most %d characters (%d were sent)", i, maxRegisteredURILen, len(u))
		}
	}
	if n := utf8.RuneCountInString(reg.ClientName); n > maxClientNameLen || !utf8.ValidString(reg.ClientName) {
		return "invalid_client_metadata", fmt.Sprintf("client_name: at most %d characters of UTF-8 (%d were sent)", maxClientNameLen, n)
	}
	return "", ""
}

// metadataHash identifies a registration's metadata: what the shop keeps
// of it, the name and the redirect URIs in their order.
func (reg registration) metadataHash() string {
	b, _ := json.Marshal([]any{reg.ClientName, reg.RedirectURIs})
	return hash(string(b))
}

// save stores the registration from addr, or answers the client already
// registered with the same metadata (from any address: its id is no
// secret, and the code goes where the metadata says either way). A new
// client is refused with a *budgetError past the address's budget.
func (c *clients) save(ctx context.Context, reg registration, addr string) (clientRow, error) {
	sum := reg.metadataHash()
	uris, err := json.Marshal(reg.RedirectURIs)
	if err != nil {
		return clientRow{}, fmt.Errorf("encode redirect URIs: %w", err)
	}
	var row clientRow
	err = database.Transact(ctx, c.db, func(tx *gorm.DB) error {
		err := tx.Where("metadata_hash = ?", sum).Take(&row).Error
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err // found (nil), or failed
		}
		// The address's registrations are counted one transaction at a
		// time (its /48's, for an IPv6 address: both tiers).
		if err := database.LockKey(tx, addressLock("oauth.register", addr)); err != nil {
			return err
		}
		now := database.Now(tx).UTC()
		network := shop.NetworkOf(addr)
		if err := registrationBudget(tx, "address = ?", addr, registrationsPerHour, now); err != nil {
			return err
		}
		if network != "" {
			if err := registrationBudget(tx, byNetwork, network, registrationsPerHour*shop.DefaultNetworkMultiple, now); err != nil {
				return err
			}
		}
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		row = clientRow{ID: "client_" + hex.EncodeToString(b), Name: reg.ClientName, RedirectURIs: string(uris),
			MetadataHash: &sum, Address: addr, Network: network, CreatedAt: now}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil || res.RowsAffected == 1 {
			return res.Error
		}
		// The same metadata was registered at the same moment: that client
		// (read into a new row: gorm would look for this row's id too).
		var theirs clientRow
		err = tx.Where("metadata_hash = ?", sum).Take(&theirs).Error
		row = theirs
		return err
	})
	var budget *budgetError
	if err != nil && !errors.As(err, &budget) {
		return clientRow{}, fmt.Errorf("register client: %w", err)
	}
	return row, err
}

// authorized records that client id got an authorization code, which
// keeps a registered client from the sweep of unused ones.
func (c *clients) authorized(ctx context.Context, id string, now time.Time) error {
	err := c.db.WithContext(ctx).Model(&clientRow{}).Where("id = ? AND authorized_at IS NULL", id).
		Update("authorized_at", now.UTC()).Error
	if err != nil {
		return fmt.Errorf("mark client authorized: %w", err)
	}
	return nil
}

// sweepUnusedClients deletes the registered clients that never got an
// authorization code within unusedClientLife of registering.
func sweepUnusedClients(ctx context.Context, db *gorm.DB, now time.Time) (int64, error) {
	res := db.WithContext(ctx).Where("authorized_at IS NULL AND created_at < ?", now.Add(-unusedClientLife).UTC()).Delete(&clientRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("sweep unused clients: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// registrationBudget answers a *budgetError, in tx, when the clients
// registered in the hour before now from value (where names the column:
// the address, or its /48) reach max.
func registrationBudget(tx *gorm.DB, where, value string, max int64, now time.Time) error {
	var n int64
	if err := tx.Model(&clientRow{}).Where(where, value).Where("created_at > ?", now.Add(-time.Hour)).Count(&n).Error; err != nil {
		return fmt.Errorf("count registrations: %w", err)
	}
	if n < max {
		return nil
	}
	var oldest clientRow
	if err := tx.Select("created_at").Where(where, value).Where("created_at > ?", now.Add(-time.Hour)).Order("created_at").Take(&oldest).Error; err != nil {
		return fmt.Errorf("read registrations: %w", err)
	}
	return &budgetError{wait: oldest.CreatedAt.Add(time.Hour).Sub(now)}
}
