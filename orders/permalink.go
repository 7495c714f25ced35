package orders

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// MinReceiptKeyLen is the shortest receipt key accepted, in bytes.
const MinReceiptKeyLen = 32

// receiptKeySetting names the settings row that keeps a generated key.
const receiptKeySetting = "receipt_key"

// PermalinkURL is PublicURL + "/orders/" + id + "?t=" +
// base64url(HMAC-SHA256(key, "receipt:" + id)): the receipt page's address,
// which only the shop can make.
func (o *Orders) PermalinkURL(id string) string {
	return o.publicURL + "/orders/" + id + "?t=" + base64.RawURLEncoding.EncodeToString(o.mac(id))
}

func (o *Orders) mac(id string) []byte {
	m := hmac.New(sha256.New, o.key)
	m.Write([]byte("receipt:" + id))
	return m.Sum(nil)
}

// validToken reports whether token is the permalink token of id, comparing
// in constant time.
func (o *Orders) validToken(id, token string) bool {
	got, err := base64.RawURLEncoding.Strict().DecodeString(token) // one spelling per token
	if err != nil || len(got) != sha256.Size {
		return false
	}
	return hmac.Equal(got, o.mac(id))
}

// settingRow is a row of settings.
type settingRow struct {
	Name  string `gorm:"primaryKey"`
	Value string
}

func (settingRow) TableName() string { return "settings" }

// LoadReceiptKey returns the HMAC key of receipt links. When fromEnv (the
// value of SHOP_RECEIPT_KEY) is set, it is the key: at least 32 bytes after
// trimming spaces, otherwise an error naming SHOP_RECEIPT_KEY. Else it is the
// key kept in the settings table under "receipt_key", generated (32 random
// bytes, hex) and stored the first time. Replicas starting together end with
// one key: each inserts its own unless a key is there, then all read the one
// that was kept.
func LoadReceiptKey(ctx context.Context, db *gorm.DB, fromEnv string) ([]byte, error) {
	if fromEnv != "" {
		key := strings.TrimSpace(fromEnv)
		if len(key) < MinReceiptKeyLen {
			return nil, fmt.Errorf("SHOP_RECEIPT_KEY is %d bytes long; set at least %d (for example the output of `openssl rand -hex 32`), or unset it to let the shop keep a generated key in its database",
				len(key), MinReceiptKeyLen)
		}
		return []byte(key), nil
	}
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	db = db.WithContext(ctx)
	err := db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "name"}}, DoNothing: true}).
		Create(&settingRow{Name: receiptKeySetting, Value: hex.EncodeToString(b[:])}).Error
	if err != nil {
		return nil, fmt.Errorf("store the receipt key: %w", err)
	}
	var row settingRow
	if err := db.Where("name = ?", receiptKeySetting).Take(&row).Error; err != nil {
		return nil, fmt.Errorf("read the receipt key: %w", err)
	}
	if len(row.Value) < MinReceiptKeyLen {
		return nil, errors.New("the receipt key kept in the settings table is too short; delete its row (name 'receipt_key') to have a new one generated, or set SHOP_RECEIPT_KEY")
	}
	return []byte(row.Value), nil
}
