package ucp

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dunglas/httpsfv"
	"github.com/go-jose/go-jose/v4"
)

// An RFC 9421 HTTP message signature of a REST request, verified as UCP's
// signatures.md has it (REST Request Verification): no Go library of RFC
// 9421 resolves on the module proxy (yaronf/httpsign, remitly-oss/httpsig-go
// and common-fate/httpsig do not), so the signature base is built here, its
// structured fields read with httpsfv.

// sigError is why a request's signatures do not authenticate it: its UCP
// code (signature_invalid, key_not_found, digest_mismatch,
// algorithm_unsupported) and what to fix.
type sigError struct{ code, content string }

func (e *sigError) Error() string { return e.code + ": " + e.content }

// signed reports whether r carries a signature.
func signed(r *http.Request) bool {
	return r.Header.Get("Signature-Input") != "" || r.Header.Get("Signature") != ""
}

// verifyRequest verifies r's signatures (body is its body) against keys,
// the agent's: one that verifies authenticates r; when none does, the
// first one's failure is returned.
func verifyRequest(r *http.Request, body []byte, keys []jose.JSONWebKey) *sigError {
	inputs, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature-Input"))
	if err != nil || len(inputs.Names()) == 0 {
		return &sigError{"signature_invalid", "Signature-Input is not an RFC 8941 dictionary of signature labels"}
	}
	sigs, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature"))
	if err != nil {
		return &sigError{"signature_invalid", "Signature is not an RFC 8941 dictionary of signatures"}
	}
	var first *sigError
	for _, label := range inputs.Names() {
		e := verifyOne(r, body, keys, inputs, sigs, label)
		if e == nil {
			return nil
		}
		if first == nil {
			first = e
		}
	}
	return first
}

// verifyOne verifies the signature labelled label.
func verifyOne(r *http.Request, body []byte, keys []jose.JSONWebKey, inputs, sigs *httpsfv.Dictionary, label string) *sigError {
	m, _ := inputs.Get(label)
	params, ok := m.(httpsfv.InnerList)
	if !ok {
		return &sigError{"signature_invalid", "Signature-Input " + label + " is not an inner list of components"}
	}
	sm, _ := sigs.Get(label)
	item, ok := sm.(httpsfv.Item)
	sig, isBytes := item.Value.([]byte)
	if !ok || !isBytes {
		return &sigError{"signature_invalid", "Signature has no byte sequence labelled " + label}
	}
	keyid, _ := params.Params.Get("keyid")
	kid, _ := keyid.(string)
	i := slices.IndexFunc(keys, func(k jose.JSONWebKey) bool { return k.KeyID == kid })
	if kid == "" || i < 0 {
		return &sigError{"key_not_found", "keyid " + kid + " is not one of the keys[] of the agent's profile"}
	}
	var names []string
	for _, it := range params.Items {
		name, ok := it.Value.(string)
		if !ok || len(it.Params.Names()) > 0 {
			return &sigError{"signature_invalid", "the signature covers a component this shop does not read: cover plain components and header fields"}
		}
		names = append(names, name)
	}
	if missing := uncovered(r, body, names); missing != "" {
		return &sigError{"signature_invalid", "the signature does not cover " + missing + ", which this request carries"}
	}
	if slices.Contains(names, "content-digest") {
		sum := sha256.Sum256(body)
		want := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
		if r.Header.Get("Content-Digest") != want {
			return &sigError{"digest_mismatch", "Content-Digest is not the sha-256 of the body's bytes"}
		}
	}
	base, err := signatureBase(r, names, params)
	if err != nil {
		return &sigError{"signature_invalid", err.Error()}
	}
	return checkSignature(keys[i], base, sig)
}

// uncovered names a component the request carries that a signature of it
// must cover ("" when all are).
func uncovered(r *http.Request, body []byte, names []string) string {
	required := []string{"@method", "@authority", "@path"}
	if r.URL.RawQuery != "" {
		required = append(required, "@query")
	}
	if len(body) > 0 {
		required = append(required, "content-digest", "content-type")
	}
	for _, h := range []string{"Idempotency-Key", "UCP-Agent", "Signature-Agent"} {
		if r.Header.Get(h) != "" {
			required = append(required, strings.ToLower(h))
		}
	}
	for _, c := range required {
		if !slices.Contains(names, c) {
			return c
		}
	}
	return ""
}

// signatureBase is RFC 9421's signature base (§2.5) of the components names
// and the signature's parameters.
func signatureBase(r *http.Request, names []string, params httpsfv.InnerList) (string, error) {
	var b strings.Builder
	for _, name := range names {
		v, err := componentValue(r, name)
		if err != nil {
			return "", err
		}
		b.WriteString(`"` + name + `": ` + v + "\n")
	}
	p, err := httpsfv.Marshal(params)
	if err != nil {
		return "", errors.New("the signature's parameters cannot be serialized")
	}
	b.WriteString(`"@signature-params": ` + p)
	return b.String(), nil
}

// componentValue is a covered component's value (RFC 9421 §2.1, §2.2),
// read from the request as it came (its target before any prefix was
// stripped).
func componentValue(r *http.Request, name string) (string, error) {
	target, err := url.ParseRequestURI(r.RequestURI)
	if err != nil {
		target = r.URL
	}
	switch name {
	case "@method":
		return r.Method, nil
	case "@authority":
		return strings.ToLower(r.Host), nil
	case "@path":
		return target.EscapedPath(), nil
	case "@query":
		return "?" + target.RawQuery, nil
	}
	if strings.HasPrefix(name, "@") || name != strings.ToLower(name) {
		return "", errors.New("the signature covers " + name + ", which this shop does not read")
	}
	values := r.Header.Values(name)
	if len(values) == 0 {
		return "", errors.New("the signature covers " + name + ", which the request does not carry")
	}
	for i, v := range values {
		values[i] = strings.TrimSpace(v)
	}
	return strings.Join(values, ", "), nil
}

// checkSignature verifies sig of base with key: ES256 (raw r||s) or EdDSA.
func checkSignature(key jose.JSONWebKey, base string, sig []byte) *sigError {
	switch pub := key.Key.(type) {
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() || (key.Algorithm != "" && key.Algorithm != "ES256") {
			break
		}
		if len(sig) != 64 {
			return &sigError{"signature_invalid", "an ES256 signature is 64 bytes, r||s"}
		}
		sum := sha256.Sum256([]byte(base))
		rr, ss := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if !ecdsa.Verify(pub, sum[:], rr, ss) {
			return &sigError{"signature_invalid", "the signature does not verify with key " + key.KeyID}
		}
		return nil
	case ed25519.PublicKey:
		if subtle.ConstantTimeEq(int32(len(sig)), ed25519.SignatureSize) == 0 || !ed25519.Verify(pub, []byte(base), sig) {
			return &sigError{"signature_invalid", "the signature does not verify with key " + key.KeyID}
		}
		return nil
	}
	return &sigError{"algorithm_unsupported", "key " + key.KeyID + " is neither ES256 (P-256) nor EdDSA (Ed25519)"}
}
