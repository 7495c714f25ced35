package ucp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/go-jose/go-jose/v4"
)

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// leastCPU is the least CPU time of a few runs of fn (after a collection
// each, so that no earlier garbage is charged to it): the machine's other
// load adds to some runs, never takes away from one.
func leastCPU(t *testing.T, fn func()) time.Duration {
	t.Helper()
	best := time.Duration(1 << 62)
	for range 5 {
		runtime.GC()
		start := cpuTime(t)
		fn()
		best = min(best, cpuTime(t)-start)
	}
	return best
}

// signedREST is a REST request of an agent whose profile is profile, with
// body, carrying labels signatures of key (keyid kid): the good ones
// (their indexes) sign the request, the others are 64 random bytes, each
// covering what UCP asks and fresh, so that only the cryptography tells
// them apart.
func signedREST(t *testing.T, method, path, profile string, body []byte, key *ecdsa.PrivateKey, kid string, labels int, good ...int) *http.Request {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(string(body)))
	r.Host = "shop.example"
	r.Header.Set("UCP-Agent", `profile="`+profile+`"`)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", "550e8400-e29b-41d4-a716-446655440000")
	sum := sha256.Sum256(body)
	r.Header.Set("Content-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":")
	inputs, sigs := httpsfv.NewDictionary(), httpsfv.NewDictionary()
	names := []string{"@method", "@authority", "@path", "content-digest", "content-type", "ucp-agent", "idempotency-key"}
	for i := range labels {
		params := httpsfv.InnerList{Params: httpsfv.NewParams()}
		for _, n := range names {
			params.Items = append(params.Items, httpsfv.NewItem(n))
		}
		params.Params.Add("created", time.Now().Unix())
		params.Params.Add("keyid", kid)
		params.Params.Add("nonce", fmt.Sprint(i))
		sig := make([]byte, 64)
		_, _ = rand.Read(sig)
		for _, g := range good {
			if g == i {
				base, err := signatureBase(r, names, params)
				if err != nil {
					t.Fatal(err)
				}
				d := sha256.Sum256([]byte(base))
				rr, ss, err := ecdsa.Sign(rand.Reader, key, d[:])
				if err != nil {
					t.Fatal(err)
				}
				rr.FillBytes(sig[:32])
				ss.FillBytes(sig[32:])
			}
		}
		inputs.Add(fmt.Sprintf("sig%d", i), params)
		sigs.Add(fmt.Sprintf("sig%d", i), httpsfv.NewItem(sig))
	}
	in, err := httpsfv.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	out, err := httpsfv.Marshal(sigs)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Signature-Input", in)
	r.Header.Set("Signature", out)
	return r
}

// TestSignatureCost: the largest body the REST binding takes, with 20
// signature labels whose keyid is the agent's, costs under 20 ms of CPU to
// refuse (none verifies) or to verify (the third does): the body is
// bounded and hashed once, at most a few labels are verified, the agent's
// keys come from its cached profile. A body over the bound is refused
// before any of it is hashed.
func TestSignatureCost(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwk, _ := json.Marshal(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "agent-2026", Algorithm: "ES256", Use: "sig"})
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		fmt.Fprintf(w, `{"ucp": {"version": %q, "capabilities": {"dev.ucp.shopping.checkout": [{"version": %q}]}}, "keys": [%s]}`, Version, Version, jwk)
	}))
	defer agent.Close()
	profile := agent.URL + "/agent.json"
	u := New(Options{AllowLoopbackProfiles: true})
	rest := u.REST()
	largest := []byte(`{"line_items": [], "note": "` + strings.Repeat("a", maxRESTBody-30) + `"}`)
	if len(largest) != maxRESTBody {
		t.Fatalf("body of %d bytes, want %d", len(largest), maxRESTBody)
	}
	const bound = 20 * time.Millisecond
	serve := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		rest.ServeHTTP(w, r)
		return w
	}
	// The profile is fetched once, as the first call of an agent does.
	_ = serve(signedREST(t, "PUT", RESTPath+"/checkout-sessions/cs_x", profile, []byte("{}"), key, "agent-2026", 1))

	var w *httptest.ResponseRecorder
	refuse := leastCPU(t, func() {
		w = serve(signedREST(t, "PUT", RESTPath+"/checkout-sessions/cs_x", profile, largest, key, "agent-2026", 20))
	})
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "signature_invalid") {
		t.Fatalf("20 bad signatures: HTTP %d %s", w.Code, w.Body)
	}
	t.Logf("refusing %d bytes with 20 labels: %v of CPU (with building the request)", len(largest), refuse)
	if refuse > bound {
		t.Errorf("refusing the largest body with 20 labels cost %v of CPU, want under %v", refuse, bound)
	}

	var authErr error
	verify := leastCPU(t, func() {
		r := signedREST(t, "PUT", RESTPath+"/checkout-sessions/cs_x", profile, largest, key, "agent-2026", 20, 2)
		meta, _, _, _ := restMeta(r, restOp{changes: true})
		authErr = u.authenticate(r, meta, true, sha256.Sum256(largest))
	})
	if authErr != nil {
		t.Fatalf("20 labels, the third good: %v", authErr)
	}
	t.Logf("verifying %d bytes with 20 labels: %v of CPU (with building the request)", len(largest), verify)
	if verify > bound {
		t.Errorf("verifying the largest body with 20 labels cost %v of CPU, want under %v", verify, bound)
	}

	// Many labels are refused for their size, before any is parsed; of a
	// few, only the first maxVerified are verified.
	// The requests are built first: signing 1,000 labels is the test's
	// work, not the shop's (and slow under the race detector).
	var built []*http.Request
	for range 5 {
		built = append(built, signedREST(t, "PUT", RESTPath+"/checkout-sessions/cs_x", profile, largest, key, "agent-2026", 1000))
	}
	many := leastCPU(t, func() {
		w, built = serve(built[0]), built[1:]
	})
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "hold more than") {
		t.Errorf("1,000 labels: HTTP %d %s, want 401 saying the signature headers are too large", w.Code, w.Body)
	}
	if many > bound {
		t.Errorf("refusing the largest body with 1,000 labels cost %v of CPU, want under %v", many, bound)
	}
	late := signedREST(t, "PUT", RESTPath+"/checkout-sessions/cs_x", profile, largest, key, "agent-2026", maxVerified+1, maxVerified)
	meta, _, _, _ := restMeta(late, restOp{changes: true})
	if err := u.authenticate(late, meta, true, sha256.Sum256(largest)); err == nil {
		t.Errorf("a good signature after %d bad ones was verified: at most %d are", maxVerified, maxVerified)
	}

	over := signedREST(t, "GET", RESTPath+"/checkout-sessions/cs_x", profile, []byte(strings.Repeat(" ", 1<<20)), key, "agent-2026", 20)
	if w := serve(over); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a GET with a body of 1 MiB: HTTP %d %s, want 413", w.Code, w.Body)
	}
}
