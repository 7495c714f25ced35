package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"shop/database"
	"shop/database/dbtest"
)

// rfc9421Signer signs a REST request as UCP's signatures.md has a platform
// do it (REST Request Signing), written out here from the specification's
// text: ES256, raw r||s, the components @method, @authority, @path,
// @query when there is one, ucp-agent, idempotency-key when sent, and
// content-digest and content-type with a body. skip leaves a component out.
func rfc9421Signer(key *ecdsa.PrivateKey, kid, skip string, tamper func(r *http.Request)) func(r *http.Request, body []byte) {
	return rfc9421SignerAt(key, kid, skip, 0, 0, tamper)
}

// omitCreated makes rfc9421SignerAt sign without created.
const omitCreated = time.Duration(math.MinInt64)

// rfc9421SignerAt is rfc9421Signer with created that far from now (none
// for omitCreated), and expires that far from now when not 0.
func rfc9421SignerAt(key *ecdsa.PrivateKey, kid, skip string, created, expires time.Duration, tamper func(r *http.Request)) func(r *http.Request, body []byte) {
	return func(r *http.Request, body []byte) {
		comps := []string{"@method", "@authority", "@path"}
		values := map[string]string{"@method": r.Method, "@authority": r.URL.Host, "@path": r.URL.EscapedPath()}
		if r.URL.RawQuery != "" {
			comps, values["@query"] = append(comps, "@query"), "?"+r.URL.RawQuery
		}
		comps, values["ucp-agent"] = append(comps, "ucp-agent"), r.Header.Get("UCP-Agent")
		if k := r.Header.Get("Idempotency-Key"); k != "" {
			comps, values["idempotency-key"] = append(comps, "idempotency-key"), k
		}
		if len(body) > 0 {
			sum := sha256.Sum256(body)
			r.Header.Set("Content-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":")
			comps = append(comps, "content-digest", "content-type")
			values["content-digest"], values["content-type"] = r.Header.Get("Content-Digest"), r.Header.Get("Content-Type")
		}
		var quoted []string
		var base strings.Builder
		for _, c := range comps {
			if c == skip {
				continue
			}
			quoted = append(quoted, `"`+c+`"`)
			fmt.Fprintf(&base, "%q: %s\n", c, values[c])
		}
		params := fmt.Sprintf(`(%s);created=%d;keyid="%s"`, strings.Join(quoted, " "), time.Now().Add(created).Unix(), kid)
		if created == omitCreated {
			params = fmt.Sprintf(`(%s);keyid="%s"`, strings.Join(quoted, " "), kid)
		}
		if expires != 0 {
			params += fmt.Sprintf(";expires=%d", time.Now().Add(expires).Unix())
		}
		base.WriteString(`"@signature-params": ` + params)
		digest := sha256.Sum256([]byte(base.String()))
		rr, ss, err := ecdsa.Sign(rand.Reader, key, digest[:])
		if err != nil {
			panic(err)
		}
		sig := make([]byte, 64)
		rr.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
		r.Header.Set("Signature-Input", "sig1="+params)
		r.Header.Set("Signature", "sig1=:"+base64.StdEncoding.EncodeToString(sig)+":")
		if tamper != nil {
			tamper(r)
		}
	}
}

// TestUCPRESTSignatures: a REST request signed with a key of the agent's
// profile's keys[] is served; one whose signature does not verify, names
// an unknown key, covers too little or whose body changed is refused with
// UCP's signature errors; so is an unsigned request of that agent
// (signature_missing) and a signature without created, created more than
// 5 minutes from now or expires passed; a signature of an agent that
// publishes no keys is not checked. On SQLite and PostgreSQL.
func TestUCPRESTSignatures(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwk, _ := json.Marshal(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "agent-2026", Algorithm: "ES256", Use: "sig"})
	signedProfile := strings.ReplaceAll(agentProfileJSON, "2026-04-08", "2026-08-25")
	signedProfile = signedProfile[:strings.LastIndex(signedProfile, "}")] + `, "keys": [` + string(jwk) + `, {"kty": "RSA", "kid": "odd", "n": "x", "e": "AQAB"}]}`
	profiles := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Write([]byte(signedProfile))
	}))
	t.Cleanup(profiles.Close)
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) { testUCPRESTSignatures(t, d, profiles.URL+"/agent.json", key, other) })
	}
}

func testUCPRESTSignatures(t *testing.T, d database.Dialect, profile string, key, other *ecdsa.PrivateKey) {
	shop := startShop(t, dbtest.DSN(t, d), ucpEnv)
	agents := serveAgentProfiles(t)
	cart := map[string]any{"line_items": ucpLine(ucpVariant, 1)}
	signed := restAgent{shop.url, profile, rfc9421Signer(key, "agent-2026", "", nil)}
	made := restDecode[struct{ ID string }](t, signed.do(t, "POST", "/carts", uuid(t), cart), 201, "cart_response")
	_ = restDecode[map[string]any](t, signed.do(t, "GET", "/carts/"+made.ID, "", nil), 200, "cart_response")
	_ = restDecode[map[string]any](t, signed.do(t, "GET", "/orders/ord_aaaaaaaaaaaaaaaaaaaaaaaaaa?email=a@example.com", "", nil), 200, "order_response")
	for _, tc := range []struct {
		name   string
		sign   func(*http.Request, []byte)
		status int
		code   string
		reads  bool // a GET of the same agent is refused alike
	}{
		{"OtherKey", rfc9421Signer(other, "agent-2026", "", nil), 401, "signature_invalid", false},
		{"UnknownKey", rfc9421Signer(key, "agent-2025", "", nil), 401, "key_not_found", false},
		{"UnreadableKey", rfc9421Signer(key, "odd", "", nil), 401, "key_not_found", false},
		{"KeyNotCovered", rfc9421Signer(key, "agent-2026", "idempotency-key", nil), 401, "signature_invalid", false},
		{"BodyChanged", rfc9421Signer(key, "agent-2026", "", func(r *http.Request) {
			changed := `{"line_items":[{"item":{"id":"` + ucpVariant + `"},"quantity":9}]}`
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(changed)), int64(len(changed))
		}), 400, "digest_mismatch", false},
		{"Garbled", rfc9421Signer(key, "agent-2026", "", func(r *http.Request) { r.Header.Set("Signature", "sig1=:AAAA:") }), 401, "signature_invalid", false},
		// Signed means signed: an agent whose profile publishes keys signs
		// every request, inside the window.
		{"Unsigned", nil, 401, "signature_missing", true},
		{"CreatedLongAgo", rfc9421SignerAt(key, "agent-2026", "", -10*time.Minute, 0, nil), 401, "signature_invalid", true},
		{"CreatedAhead", rfc9421SignerAt(key, "agent-2026", "", 10*time.Minute, 0, nil), 401, "signature_invalid", true},
		{"Expired", rfc9421SignerAt(key, "agent-2026", "", -time.Minute, -time.Second, nil), 401, "signature_invalid", true},
		{"NoCreated", rfc9421SignerAt(key, "agent-2026", "", omitCreated, 0, nil), 401, "signature_invalid", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := restAgent{shop.url, profile, tc.sign}
			if code := protocolCode(t, a.do(t, "POST", "/carts", uuid(t), cart), tc.status); code != tc.code {
				t.Errorf("code %q, want %q", code, tc.code)
			}
			if tc.reads {
				if code := protocolCode(t, a.do(t, "GET", "/carts/"+made.ID, "", nil), tc.status); code != tc.code {
					t.Errorf("GET: code %q, want %q", code, tc.code)
				}
			}
		})
	}
	// Within the window, with expires still ahead, the signature is taken.
	fresh := restAgent{shop.url, profile, rfc9421SignerAt(key, "agent-2026", "", -4*time.Minute, time.Minute, nil)}
	_ = restDecode[map[string]any](t, fresh.do(t, "GET", "/carts/"+made.ID, "", nil), 200, "cart_response")
	// An agent whose profile publishes no keys: its signature is not checked.
	unkeyed := restAgent{shop.url, agents.URL + "/agent-2026-08-25.json", rfc9421Signer(other, "whatever", "", nil)}
	_ = restDecode[map[string]any](t, unkeyed.do(t, "POST", "/carts", uuid(t), cart), 201, "cart_response")
}
