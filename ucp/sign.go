package ucp

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/go-jose/go-jose/v4"
)

// signRequest signs r, whose body is body, with the shop's signing key as
// UCP's signatures.md has it (REST Request Signing, RFC 9421): it sets
// Content-Digest, Signature-Input and Signature (label sig1, ES256, keyid
// the key's kid in the profile's keys[]), covering the method, authority,
// path (and query), the body's digest and type, and the headers of covered
// that r carries. The signature base is built by the same code that
// verifies agents' signatures.
func signRequest(r *http.Request, body []byte, key *ecdsa.PrivateKey, covered []string, now time.Time) error {
	jwk, ok := signingKey(key)
	if !ok {
		return errors.New("sign: the shop has no P-256 signing key")
	}
	r.Header.Set("Content-Digest", contentDigest(sha256.Sum256(body)))
	names := []string{"@method", "@authority", "@path"}
	if r.URL.RawQuery != "" {
		names = append(names, "@query")
	}
	names = append(names, "content-digest", "content-type")
	for _, h := range covered {
		if r.Header.Get(h) != "" {
			names = append(names, h)
		}
	}
	params := httpsfv.InnerList{Params: httpsfv.NewParams()}
	for _, n := range names {
		params.Items = append(params.Items, httpsfv.NewItem(n))
	}
	params.Params.Add("created", now.Unix())
	params.Params.Add("keyid", jwk.KeyID)
	params.Params.Add("alg", "ecdsa-p256-sha256")
	base, err := signatureBase(r, names, params)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	digest := sha256.Sum256([]byte(base))
	rr, ss, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	sig := make([]byte, 64) // ES256: r||s, each 32 bytes
	rr.FillBytes(sig[:32])
	ss.FillBytes(sig[32:])
	inputs, sigs := httpsfv.NewDictionary(), httpsfv.NewDictionary()
	inputs.Add("sig1", params)
	sigs.Add("sig1", httpsfv.NewItem(sig))
	in, err := httpsfv.Marshal(inputs)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	out, err := httpsfv.Marshal(sigs)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	r.Header.Set("Signature-Input", in)
	r.Header.Set("Signature", out)
	return nil
}

// unixTime is t as Webhook-Timestamp carries it.
func unixTime(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// VerifySignature verifies the RFC 9421 signature of r, whose body is
// body, against keys (a profile's keys[]), as a platform verifies the
// shop's webhooks and the shop verifies agents' REST requests: nil when
// one of r's signatures verifies.
func VerifySignature(r *http.Request, body []byte, keys []jose.JSONWebKey) error {
	if e := verifyRequest(r, len(body) > 0, sha256.Sum256(body), keys, time.Now()); e != nil {
		return e
	}
	return nil
}
