package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"shop/contract"
	"shop/database"
)

// SaveOrderAddress keeps the address of a linked buyer's order for their
// next checkouts, in tx, the order's own transaction (checkout calls it
// through its Options.SaveAddress when the session's save_address is true):
// the default address when the account has none, an ordinary one
// otherwise. An address the account has already (the same fields), an
// account at MaxAddresses, or one deleted meanwhile leaves the account as
// it is: the order never fails for it.
func (d *Data) SaveOrderAddress(ctx context.Context, tx *gorm.DB, accountID string, a contract.Address) error {
	tx = tx.WithContext(ctx)
	var acct accountRow
	err := tx.Clauses(database.Lock()).Select("id").Where("id = ?", accountID).Take(&acct).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock account: %w", err)
	}
	var rows []addressRow
	if err := tx.Where("account_id = ?", accountID).Find(&rows).Error; err != nil {
		return fmt.Errorf("read addresses of %s: %w", accountID, err)
	}
	hasDefault := false
	for _, r := range rows {
		var have contract.Address
		if err := json.Unmarshal([]byte(r.Address), &have); err == nil && have == a {
			return nil
		}
		hasDefault = hasDefault || r.IsDefault
	}
	if len(rows) >= MaxAddresses {
		return nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("address: %w", err)
	}
	row := addressRow{ID: newAddressID(), AccountID: accountID, Address: string(b), IsDefault: !hasDefault,
		CreatedAt: database.Now(tx).UTC().Truncate(time.Microsecond)}
	if err := tx.Create(&row).Error; err != nil {
		return fmt.Errorf("save the order's address: %w", err)
	}
	return nil
}
