package ucp

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"

	"github.com/go-jose/go-jose/v4"
)

// signingKey is the JWK of the shop's signing key's public half: an ECDSA
// P-256 key (ES256, UCP's universal baseline), its kid the key's JWK SHA-256
// thumbprint (RFC 7638), so that it names the same key wherever it is
// looked up.
func signingKey(key *ecdsa.PrivateKey) (jose.JSONWebKey, bool) {
	if key == nil || key.Curve != elliptic.P256() {
		return jose.JSONWebKey{}, false
	}
	jwk := jose.JSONWebKey{Key: &key.PublicKey, Algorithm: string(jose.ES256), Use: "sig"}
	thumb, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return jose.JSONWebKey{}, false
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(thumb)
	return jwk, true
}

// publicKeys are the keys the profile publishes: the signing key's public
// half, none when the shop has no signing key.
func (u *UCP) publicKeys() []jose.JSONWebKey {
	if jwk, ok := signingKey(u.signingKey); ok {
		return []jose.JSONWebKey{jwk}
	}
	return nil
}
