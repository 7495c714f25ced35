package ucp

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/go-jose/go-jose/v4"
)

// An RFC 9421 HTTP message signature of a REST request, verified as UCP's
// signatures.md has it (REST Request Verification): no Go library of RFC
// 9421 resolves on the module proxy (yaronf/httpsign, remitly-oss/httpsig-go
// and common-fate/httpsig do not), so the signature base is built here, its
// structured fields read with httpsfv.

// Bounds of a signature check, so that what it costs is small and known
// before the signer is trusted: the body is bounded by the REST binding
// (maxRESTBody) and hashed once, whatever the labels; the signature
// headers are bounded; at most maxVerified labels are verified (RFC 9421
// §4.3 lets a verifier choose), those whose keyid names no key of the
// agent's costing no more than a lookup.
const (
	maxSignatureHeaders = 8 << 10
	maxVerified         = 3
	// SignatureWindow is how far a signature's created may be from the
	// shop's clock; a signature whose expires has passed is refused too.
	SignatureWindow = 5 * time.Minute
)

// sigError is why a request's signatures do not authenticate it: its UCP
// code (signature_missing, signature_invalid, key_not_found,
// digest_mismatch, algorithm_unsupported) and what to fix.
type sigError struct{ code, content string }

func (e *sigError) Error() string { return e.code + ": " + e.content }

// signed reports whether r carries a signature.
func signed(r *http.Request) bool {
	return r.Header.Get("Signature-Input") != "" || r.Header.Get("Signature") != ""
}

// contentDigest is the Content-Digest of a body whose SHA-256 is sum.
func contentDigest(sum [sha256.Size]byte) string {
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}

// verifyRequest verifies r's signatures against keys, the agent's, at
// time now: one that verifies authenticates r; when none does, the first
// one's failure is returned. hasBody says whether r has a body, sum is its
// SHA-256, computed once by the caller.
func verifyRequest(r *http.Request, hasBody bool, sum [sha256.Size]byte, keys []jose.JSONWebKey, now time.Time) *sigError {
	in, sg := r.Header.Values("Signature-Input"), r.Header.Values("Signature")
	if headerBytes(in)+headerBytes(sg) > maxSignatureHeaders {
		return &sigError{"signature_invalid", fmt.Sprintf("Signature-Input and Signature hold more than %d bytes: send one signature, or two", maxSignatureHeaders)}
	}
	inputs, err := httpsfv.UnmarshalDictionary(in)
	if err != nil || len(inputs.Names()) == 0 {
		return &sigError{"signature_invalid", "Signature-Input is not an RFC 8941 dictionary of signature labels"}
	}
	sigs, err := httpsfv.UnmarshalDictionary(sg)
	if err != nil {
		return &sigError{"signature_invalid", "Signature is not an RFC 8941 dictionary of signatures"}
	}
	if d := r.Header.Get("Content-Digest"); d != "" && d != contentDigest(sum) {
		return &sigError{"digest_mismatch", "Content-Digest is not the sha-256 of the body's bytes"}
	}
	var first *sigError
	verified := 0
	for _, label := range inputs.Names() {
		key, base, sig, e := prepare(r, hasBody, keys, inputs, sigs, label, now)
		if e == nil {
			if verified == maxVerified {
				break
			}
			verified++
			if e = checkSignature(key, base, sig); e == nil {
				return nil
			}
		}
		if first == nil {
			first = e
		}
	}
	if first == nil {
		first = &sigError{"signature_invalid", fmt.Sprintf("none of the first %d signatures verifies", maxVerified)}
	}
	return first
}

func headerBytes(values []string) int {
	n := 0
	for _, v := range values {
		n += len(v)
	}
	return n
}

// prepare does the cheap checks of the signature labelled label (its key
// is the agent's, it covers what it must, it is fresh) and returns its
// key, signature base and signature, for checkSignature.
func prepare(r *http.Request, hasBody bool, keys []jose.JSONWebKey, inputs, sigs *httpsfv.Dictionary, label string, now time.Time) (jose.JSONWebKey, string, []byte, *sigError) {
	var none jose.JSONWebKey
	m, _ := inputs.Get(label)
	params, ok := m.(httpsfv.InnerList)
	if !ok {
		return none, "", nil, &sigError{"signature_invalid", "Signature-Input " + label + " is not an inner list of components"}
	}
	sm, _ := sigs.Get(label)
	item, ok := sm.(httpsfv.Item)
	sig, isBytes := item.Value.([]byte)
	if !ok || !isBytes {
		return none, "", nil, &sigError{"signature_invalid", "Signature has no byte sequence labelled " + label}
	}
	keyid, _ := params.Params.Get("keyid")
	kid, _ := keyid.(string)
	i := slices.IndexFunc(keys, func(k jose.JSONWebKey) bool { return k.KeyID == kid })
	if kid == "" || i < 0 {
		return none, "", nil, &sigError{"key_not_found", "keyid " + kid + " is not one of the keys[] of the agent's profile"}
	}
	var names []string
	for _, it := range params.Items {
		name, ok := it.Value.(string)
		if !ok || len(it.Params.Names()) > 0 {
			return none, "", nil, &sigError{"signature_invalid", "the signature covers a component this shop does not read: cover plain components and header fields"}
		}
		names = append(names, name)
	}
	if missing := uncovered(r, hasBody, names); missing != "" {
		return none, "", nil, &sigError{"signature_invalid", "the signature does not cover " + missing + ", which this request carries"}
	}
	if e := fresh(params.Params, now); e != nil {
		return none, "", nil, e
	}
	base, err := signatureBase(r, names, params)
	if err != nil {
		return none, "", nil, &sigError{"signature_invalid", err.Error()}
	}
	return keys[i], base, sig, nil
}

// fresh checks a signature's created (required, within SignatureWindow of
// now) and expires (when sent, not past): a signature is not taken
// outside its window, whoever replays it.
func fresh(params *httpsfv.Params, now time.Time) *sigError {
	v, ok := params.Get("created")
	created, isInt := v.(int64)
	if !ok || !isInt {
		return &sigError{"signature_invalid", "the signature has no created parameter: sign with created=<the Unix time now>"}
	}
	if d := now.Sub(time.Unix(created, 0)); d > SignatureWindow || d < -SignatureWindow {
		return &sigError{"signature_invalid", fmt.Sprintf("the signature's created is more than %v from the shop's clock: sign again with the time now", SignatureWindow)}
	}
	if v, ok := params.Get("expires"); ok {
		expires, isInt := v.(int64)
		if !isInt || now.Unix() > expires {
			return &sigError{"signature_invalid", "the signature's expires has passed: sign again"}
		}
	}
	return nil
}

// uncovered names a component the request carries that a signature of it
// must cover ("" when all are).
func uncovered(r *http.Request, hasBody bool, names []string) string {
	required := []string{"@method", "@authority", "@path"}
	if r.URL.RawQuery != "" {
		required = append(required, "@query")
	}
	if hasBody {
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
