package ucp

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/go-jose/go-jose/v4"
)

// TestSignatureBaseRFC9421: RFC 9421's own example B.2.6 (a request signed
// with Ed25519, deterministic): the signature base built here is the RFC's,
// and the RFC's signature verifies with its test key; the same signature
// of another body's request does not.
func TestSignatureBaseRFC9421(t *testing.T) {
	r := httptest.NewRequest("POST", "/foo?param=Value&Pet=dog", strings.NewReader(`{"hello": "world"}`))
	r.Host = "example.com"
	r.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Length", "18")
	r.Header.Set("Signature-Input", `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`)
	r.Header.Set("Signature", `sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`)
	var key jose.JSONWebKey
	if err := json.Unmarshal([]byte(`{"kty":"OKP","crv":"Ed25519","kid":"test-key-ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`), &key); err != nil {
		t.Fatal(err)
	}
	inputs, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature-Input"))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := inputs.Get("sig-b26")
	params := m.(httpsfv.InnerList)
	names := []string{"date", "@method", "@path", "@authority", "content-type", "content-length"}
	base, err := signatureBase(r, names, params)
	want := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	if err != nil || base != want {
		t.Fatalf("signature base:\n%s\n%v\nwant:\n%s", base, err, want)
	}
	sig, _ := base64.StdEncoding.DecodeString("wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==")
	if e := checkSignature(key, base, sig); e != nil {
		t.Errorf("the RFC's signature: %v", e)
	}
	if e := checkSignature(key, strings.Replace(base, "18", "19", 1), sig); e == nil || e.code != "signature_invalid" {
		t.Errorf("a changed base: %v, want signature_invalid", e)
	}
	// UCP asks more of a request's signature than B.2.6 covers: its query
	// and body (signatures.md, REST Request Verification).
	if e := verifyRequest(r, true, sha256.Sum256([]byte(`{"hello": "world"}`)), []jose.JSONWebKey{key}, time.Unix(1618884473, 0)); e == nil || e.code != "signature_invalid" || !strings.Contains(e.content, "@query") {
		t.Errorf("B.2.6 under UCP's coverage rule: %v", e)
	}
}
