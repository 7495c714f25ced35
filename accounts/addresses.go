package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database"
)

// MaxAddresses bounds the addresses an account keeps.
const MaxAddresses = 10

// SavedAddress is one of an account's addresses.
type SavedAddress struct {
	// ID is the address's id, "addr_…", for remove_my_address and
	// set_my_default_address.
	ID string `json:"id"`
	contract.Address
	// Default is whether new checkout sessions start with this address.
	Default   bool      `json:"default"`
	CreatedAt time.Time `json:"created_at"`
}

// addressRow is a row of account_addresses; Address is the contract's
// Address as JSON.
type addressRow struct {
	ID        string `gorm:"primaryKey"`
	AccountID string
	Address   string
	IsDefault bool
	CreatedAt time.Time
}

func (addressRow) TableName() string { return "account_addresses" }

func (r addressRow) saved() (SavedAddress, error) {
	s := SavedAddress{ID: r.ID, Default: r.IsDefault, CreatedAt: r.CreatedAt.UTC()}
	if err := json.Unmarshal([]byte(r.Address), &s.Address); err != nil {
		return SavedAddress{}, fmt.Errorf("address %s: %w", r.ID, err)
	}
	return s, nil
}

// errNoAddress is the answer for an address id that is not one of the
// buyer's, whether it exists or not.
var errNoAddress = shop.Errorf(shop.NotFound, "$.address_id", "no address of yours has this id; get_my_account lists them")

// Addresses returns the account's addresses, oldest first.
func (d *Data) Addresses(ctx context.Context, accountID string) ([]SavedAddress, error) {
	var rows []addressRow
	if err := d.db.WithContext(ctx).Where("account_id = ?", accountID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read addresses of %s: %w", accountID, err)
	}
	out := make([]SavedAddress, 0, len(rows))
	for _, r := range rows {
		s, err := r.saved()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// DefaultAddress returns the account's default address, nil when it has
// none: what its new checkout sessions start with.
func (d *Data) DefaultAddress(ctx context.Context, accountID string) (*contract.Address, error) {
	var row addressRow
	err := d.db.WithContext(ctx).Where("account_id = ? AND is_default = ?", accountID, true).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read default address of %s: %w", accountID, err)
	}
	s, err := row.saved()
	if err != nil {
		return nil, err
	}
	return &s.Address, nil
}

// AddAddress checks a (as a checkout session would), saves it for the
// account, the default when makeDefault or when it is the account's first,
// and returns it. An account keeps at most MaxAddresses.
//
// Errors: those of the address check at $.address.*, invalid $.address
// when the account has MaxAddresses already.
func (d *Data) AddAddress(ctx context.Context, accountID string, a contract.Address, makeDefault bool) (SavedAddress, error) {
	a, err := d.check(a, "$.address")
	if err != nil {
		return SavedAddress{}, err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return SavedAddress{}, fmt.Errorf("address: %w", err)
	}
	var out SavedAddress
	err = d.transact(ctx, accountID, func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&addressRow{}).Where("account_id = ?", accountID).Count(&n).Error; err != nil {
			return fmt.Errorf("count addresses: %w", err)
		}
		if n >= MaxAddresses {
			return shop.Errorf(shop.Invalid, "$.address", "you have %d saved addresses, the most an account keeps; remove one first (remove_my_address)", n)
		}
		makeDefault = makeDefault || n == 0
		if makeDefault {
			if err := clearDefault(tx, accountID); err != nil {
				return err
			}
		}
		row := addressRow{ID: newAddressID(), AccountID: accountID, Address: string(b), IsDefault: makeDefault,
			CreatedAt: database.Now(tx).UTC().Truncate(time.Microsecond)}
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("save address: %w", err)
		}
		out, err = row.saved()
		return err
	})
	return out, err
}

// RemoveAddress removes one of the account's addresses. When it was the
// default, the most recently saved of the others becomes the default.
//
// Errors: not_found $.address_id.
func (d *Data) RemoveAddress(ctx context.Context, accountID, addressID string) error {
	return d.transact(ctx, accountID, func(tx *gorm.DB) error {
		var row addressRow
		err := tx.Where("id = ? AND account_id = ?", addressID, accountID).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return errNoAddress
		}
		if err != nil {
			return fmt.Errorf("read address: %w", err)
		}
		if err := tx.Delete(&addressRow{}, "id = ?", row.ID).Error; err != nil {
			return fmt.Errorf("remove address: %w", err)
		}
		if !row.IsDefault {
			return nil
		}
		var next addressRow
		err = tx.Where("account_id = ?", accountID).Order("created_at DESC, id DESC").Take(&next).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read addresses: %w", err)
		}
		return tx.Model(&addressRow{}).Where("id = ?", next.ID).Update("is_default", true).Error
	})
}

// SetDefault makes one of the account's addresses its default.
//
// Errors: not_found $.address_id.
func (d *Data) SetDefault(ctx context.Context, accountID, addressID string) error {
	return d.transact(ctx, accountID, func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&addressRow{}).Where("id = ? AND account_id = ?", addressID, accountID).Count(&n).Error; err != nil {
			return fmt.Errorf("read address: %w", err)
		}
		if n == 0 {
			return errNoAddress
		}
		if err := clearDefault(tx, accountID); err != nil {
			return err
		}
		return tx.Model(&addressRow{}).Where("id = ?", addressID).Update("is_default", true).Error
	})
}

// transact runs fn in a transaction that holds the account's row locked (on
// PostgreSQL; SQLite has one writer), so that changes to one account's
// addresses happen one after the other: the bound on their number and the
// one default hold under concurrent calls. A deleted account is not_found.
func (d *Data) transact(ctx context.Context, accountID string, fn func(tx *gorm.DB) error) error {
	return database.Transact(ctx, d.db, func(tx *gorm.DB) error {
		var row accountRow
		err := tx.Clauses(database.Lock()).Select("id").Where("id = ?", accountID).Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return errGone
		}
		if err != nil {
			return fmt.Errorf("lock account: %w", err)
		}
		return fn(tx)
	})
}

// clearDefault makes none of the account's addresses the default.
func clearDefault(tx *gorm.DB, accountID string) error {
	err := tx.Model(&addressRow{}).Where("account_id = ? AND is_default = ?", accountID, true).Update("is_default", false).Error
	if err != nil {
		return fmt.Errorf("clear default address: %w", err)
	}
	return nil
}

// newAddressID is an address id: "addr_" and 96 random bits in hex.
func newAddressID() string { return "addr_" + newID()[len("acct_"):][:24] }
