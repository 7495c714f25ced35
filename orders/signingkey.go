package orders

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// signingKeySetting names the settings row that keeps a generated signing key.
const signingKeySetting = "signing_key"

// LoadSigningKey returns the shop's ECDSA P-256 signing key, whose public
// half the UCP profile publishes (keys[]) for agents to verify what the
// shop signs. When fromEnv (the value of SHOP_SIGNING_KEY) is set, it is the
// key: a PEM "PRIVATE KEY" (PKCS #8) or "EC PRIVATE KEY" (SEC 1) of a P-256
// key, as `openssl ecparam -name prime256v1 -genkey` writes it. Else it is
// the key kept in the settings table under "signing_key" (PKCS #8, base64),
// generated and stored the first time; replicas starting together end with
// one key, as with LoadReceiptKey.
func LoadSigningKey(ctx context.Context, db *gorm.DB, fromEnv string) (*ecdsa.PrivateKey, error) {
	if strings.TrimSpace(fromEnv) != "" {
		block, _ := pem.Decode([]byte(strings.TrimSpace(fromEnv)))
		if block == nil {
			return nil, errors.New("SHOP_SIGNING_KEY is not PEM: set an ECDSA P-256 private key (`openssl ecparam -name prime256v1 -genkey -noout`), or unset it to let the shop keep a generated key in its database")
		}
		key, err := parseSigningKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("SHOP_SIGNING_KEY: %w", err)
		}
		return key, nil
	}
	fresh, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate the signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(fresh)
	if err != nil {
		return nil, fmt.Errorf("encode the signing key: %w", err)
	}
	db = db.WithContext(ctx)
	err = db.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "name"}}, DoNothing: true}).
		Create(&settingRow{Name: signingKeySetting, Value: base64.StdEncoding.EncodeToString(der)}).Error
	if err != nil {
		return nil, fmt.Errorf("store the signing key: %w", err)
	}
	var row settingRow
	if err := db.Where("name = ?", signingKeySetting).Take(&row).Error; err != nil {
		return nil, fmt.Errorf("read the signing key: %w", err)
	}
	kept, err := base64.StdEncoding.DecodeString(row.Value)
	if err == nil {
		var key *ecdsa.PrivateKey
		if key, err = parseSigningKey(kept); err == nil {
			return key, nil
		}
	}
	return nil, fmt.Errorf("the signing key kept in the settings table (name 'signing_key') cannot be read (%w); delete its row to have a new one generated, or set SHOP_SIGNING_KEY", err)
}

// parseSigningKey reads a P-256 private key, PKCS #8 or SEC 1.
func parseSigningKey(der []byte) (*ecdsa.PrivateKey, error) {
	var key *ecdsa.PrivateKey
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		ec, ok := k.(*ecdsa.PrivateKey)
		if !ok {
			return nil, errors.New("the key is not an ECDSA key: send a P-256 one")
		}
		key = ec
	} else if key, err = x509.ParseECPrivateKey(der); err != nil {
		return nil, errors.New("the key is neither PKCS #8 nor SEC 1: send a P-256 private key")
	}
	if key.Curve != elliptic.P256() {
		return nil, errors.New("the key is not on P-256: send a P-256 (prime256v1) key")
	}
	return key, nil
}
