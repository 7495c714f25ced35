package accounts

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// An authorization request waits for the buyer's sign-in in the pages'
// forms, not in the database: GET /oauth/authorize seals it (AES-256-GCM,
// with a key derived from Options.Key, so every replica opens it) into the
// form's csrf field, bound to the browser by the hash of the flow cookie,
// and each form posts it back. A stranger's authorization requests
// therefore store nothing; a flow's row is written only when a code is
// sent, within the sign-in codes' limits (docs/limits.md).

// pending is a sealed authorization request.
type pending struct {
	Flow    string `json:"f"` // hash of the flow cookie it is bound to
	Query   []byte `json:"q"` // the authorization request's query, byte for byte
	Client  string `json:"c"` // the client's name, for the pages
	Expires int64  `json:"e"` // Unix seconds
}

// Why a sealed request is refused.
var (
	errSealForged  = errors.New("the sign-in form was not the shop's")
	errSealExpired = errors.New("the sign-in form expired")
)

// sealAD binds a sealed value to its use.
var sealAD = []byte("shop login request")

// newSealer is the AEAD that seals pending requests, its key derived from key.
func newSealer(key []byte) (cipher.AEAD, error) {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("shop login requests"))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("accounts: login request key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("accounts: login request key: %w", err)
	}
	return aead, nil
}

// seal is p sealed into text a form may carry.
func (s *Server) seal(p pending) string {
	plain, _ := json.Marshal(p)
	nonce := make([]byte, s.sealer.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(s.sealer.Seal(nonce, nonce, plain, sealAD))
}

// open is the pending request sealed in text, if the shop sealed it and it
// has not expired at now.
func (s *Server) open(text string, now time.Time) (pending, error) {
	var p pending
	b, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil || len(b) < s.sealer.NonceSize() {
		return p, errSealForged
	}
	n := s.sealer.NonceSize()
	plain, err := s.sealer.Open(nil, b[:n], b[n:], sealAD)
	if err != nil || json.Unmarshal(plain, &p) != nil {
		return p, errSealForged
	}
	if now.Unix() >= p.Expires {
		return p, errSealExpired
	}
	return p, nil
}
