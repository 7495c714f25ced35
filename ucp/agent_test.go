package ucp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shop"
	"shop/webfetch"
)

// code is the UCP code in a protocol error's data.
func code(t *testing.T, err error) string {
	t.Helper()
	var pe *shop.ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("want a *shop.ProtocolError, got %v", err)
	}
	var data struct {
		Code    string `json:"code"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(pe.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Code == "profile_unreachable" && strings.Contains(data.Content, "not a public address") {
		return "private_address" // refused before connecting
	}
	return data.Code
}

func TestProfilesGet(t *testing.T) {
	fetches := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches[r.URL.Path]++
		switch r.URL.Path {
		case "/ok.json":
			w.Header().Set("Cache-Control", "public, max-age=60")
			w.Write([]byte(`{"ucp": {"version": "2026-04-08", "capabilities": {"dev.ucp.shopping.checkout": [{"version": "2026-04-08"}]}}}`))
		case "/redirect.json":
			http.Redirect(w, r, "/ok.json", http.StatusFound)
		case "/huge.json":
			w.Write([]byte(`{"ucp": {"version": "2026-04-08", "x": "` + strings.Repeat("a", maxProfileBytes) + `"}}`))
		case "/noversion.json":
			w.Write([]byte(`{"ucp": {"capabilities": {}}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	now := time.Date(2026, 4, 8, 12, 0, 0, 0, time.UTC)
	p := newProfiles(true)
	p.now = func() time.Time { return now }
	ctx := context.Background()

	cases := []struct{ url, code string }{
		{"", "invalid_profile_url"},
		{"ftp://example.com/p.json", "invalid_profile_url"},
		{"https://user:pw@example.com/p.json", "invalid_profile_url"},
		{"/relative.json", "invalid_profile_url"},
		{"https://192.168.0.10/p.json", "private_address"},
		{"https://[fe80::1]/p.json", "private_address"},
		{srv.URL + "/redirect.json", "profile_unreachable"},
		{srv.URL + "/missing.json", "profile_unreachable"},
		{srv.URL + "/huge.json", "profile_malformed"},
		{srv.URL + "/noversion.json", "profile_malformed"},
	}
	for _, c := range cases {
		if _, err := p.get(ctx, c.url); code(t, err) != c.code {
			t.Errorf("get(%q): %s, want %s", c.url, code(t, err), c.code)
		}
	}
	if fetches["/ok.json"] != 0 {
		t.Errorf("a redirect was followed")
	}

	for range 3 {
		prof, err := p.get(ctx, srv.URL+"/ok.json")
		if err != nil || prof.Version != "2026-04-08" {
			t.Fatalf("get: %+v %v", prof, err)
		}
	}
	if fetches["/ok.json"] != 1 {
		t.Errorf("fetched %d times within the TTL, want 1", fetches["/ok.json"])
	}
	now = now.Add(61 * time.Second)
	if _, err := p.get(ctx, srv.URL+"/ok.json"); err != nil || fetches["/ok.json"] != 2 {
		t.Errorf("after the TTL: %v, %d fetches, want 2", err, fetches["/ok.json"])
	}

	strict := newProfiles(false)
	if _, err := strict.get(ctx, srv.URL+"/ok.json"); code(t, err) != "invalid_profile_url" {
		t.Errorf("http on loopback without the test flag: %s", code(t, err))
	}
	if _, err := strict.get(ctx, "https"+strings.TrimPrefix(srv.URL, "http")+"/ok.json"); code(t, err) != "private_address" {
		t.Errorf("https on loopback without the test flag: %s", code(t, err))
	}
}

func TestNegotiate(t *testing.T) {
	agent := func(caps map[string]string) *agentProfile {
		p := &agentProfile{Version: Version, Capabilities: map[string][]agentCapability{}}
		for name, version := range caps {
			p.Capabilities[name] = []agentCapability{{Version: version}}
		}
		return p
	}
	cases := []struct {
		name string
		caps map[string]string
		want []string
	}{
		{"All", map[string]string{CapCheckout: Version, CapFulfillment: Version, CapDiscount: Version, CapCart: Version},
			[]string{CapCheckout, CapFulfillment, CapDiscount, CapCart}},
		{"OrphanExtension", map[string]string{CapFulfillment: Version, CapCart: Version}, []string{CapCart}},
		{"OtherParent", map[string]string{CapDiscount: Version, CapCart: Version}, []string{CapDiscount, CapCart}},
		{"OtherVersion", map[string]string{CapCheckout: "2026-01-11", CapFulfillment: Version}, nil},
		{"Unknown", map[string]string{"com.example.thing": Version}, nil},
		{"PreviousRelease", map[string]string{CapCheckout: PreviousVersion, CapCart: Version}, []string{CapCart}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := negotiate(agent(c.caps), Version)
			if len(got) != len(c.want) {
				t.Errorf("negotiated %v, want %v", got, c.want)
			}
			for _, w := range c.want {
				if !got[w] {
					t.Errorf("negotiated %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestCheckoutPath(t *testing.T) {
	cases := map[string]string{
		"$.items":                           "$.line_items",
		"$.items[2].id":                     "$.line_items[2].item.id",
		"$.items[0].quantity":               "$.line_items[0].quantity",
		"$.line_items[1].item.quantity":     "$.line_items[1].quantity",
		"$.fulfillment_address":             "$.fulfillment.methods[0].destinations[0]",
		"$.fulfillment_address.city":        "$.fulfillment.methods[0].destinations[0].address_locality",
		"$.fulfillment_address.line_one":    "$.fulfillment.methods[0].destinations[0].street_address",
		"$.fulfillment_option_id":           "$.fulfillment.methods[0].groups[0].selected_option_id",
		"$.promo_code":                      "$.discounts.codes",
		"$.checkout_session_id":             "$.id",
		"$.payment_data.token":              "$.payment.instruments[0].credential.token",
		"$.buyer.email":                     "$.buyer.email",
		`$.meta["idempotency-key"]`:         `$.meta["idempotency-key"]`,
		"$.fulfillment_address.postal_code": "$.fulfillment.methods[0].destinations[0].postal_code",
	}
	for in, want := range cases {
		if got := checkoutPath(in); got != want {
			t.Errorf("checkoutPath(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestProfilesOneFetchAtATime(t *testing.T) {
	var fetches atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		<-release
		w.Write([]byte(`{"ucp": {"version": "2026-04-08", "capabilities": {}}}`))
	}))
	defer srv.Close()
	p := newProfiles(true)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			_, err := p.get(context.Background(), srv.URL+"/agent.json")
			errs <- err
		})
	}
	time.Sleep(100 * time.Millisecond) // let them all ask
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("ten callers at once fetched the profile %d times, want once", n)
	}
}

// TestProfilesHostFailureCached: a host that does not answer in time fails
// all its profile URLs for failedProfileTTL without being asked again,
// while a profile that is merely missing fails only its own URL; and no
// error echoes the status the agent's server answered.
func TestProfilesHostFailureCached(t *testing.T) {
	var hits atomic.Int32
	release := make(chan struct{})
	profile := `{"ucp": {"version": "2026-04-08", "capabilities": {}}}`
	stalls := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/slow.json" {
			<-release
		}
		w.Write([]byte(profile))
	}))
	defer stalls.Close()
	defer close(release)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/teapot.json" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		w.Write([]byte(profile))
	}))
	defer other.Close()
	now := time.Date(2026, 4, 8, 12, 0, 0, 0, time.UTC)
	p := newProfiles(true)
	p.now = func() time.Time { return now }
	p.fetcher = webfetch.New(webfetch.Options{AllowLoopback: true, HeaderTimeout: 200 * time.Millisecond})
	ctx := context.Background()

	if _, err := p.get(ctx, stalls.URL+"/slow.json"); code(t, err) != "profile_unreachable" {
		t.Fatalf("a stalled profile: %v", err)
	}
	start := time.Now()
	if _, err := p.get(ctx, stalls.URL+"/other.json"); code(t, err) != "profile_unreachable" || hits.Load() != 1 {
		t.Errorf("another profile of the failed host: %v, %d requests to it, want the host's failure without asking", err, hits.Load())
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("the host's cached failure took %v", d)
	}
	now = now.Add(failedProfileTTL + time.Second)
	if _, err := p.get(ctx, stalls.URL+"/other.json"); err != nil {
		t.Errorf("after failedProfileTTL: %v", err)
	}

	_, err := p.get(ctx, other.URL+"/teapot.json")
	var pe *shop.ProtocolError
	if !errors.As(err, &pe) || strings.Contains(string(pe.Data)+pe.Message, "418") {
		t.Errorf("a profile answering 418: %v, which echoes the status or is no protocol error", err)
	}
	if _, err := p.get(ctx, other.URL+"/agent.json"); err != nil {
		t.Errorf("a URL's failure failed its host: %v", err)
	}
}

// TestProfilesSlowHostStallsOnlyItself: 32 slow profile URLs of one host
// take that host's share of the fetch slots, not everyone's: a new agent
// on another host gets its profile at once.
func TestProfilesSlowHostStallsOnlyItself(t *testing.T) {
	release := make(chan struct{})
	var slowHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slow/") {
			slowHits.Add(1)
			<-release
		}
		w.Write([]byte(`{"ucp": {"version": "2026-04-08", "capabilities": {}}}`))
	}))
	defer srv.Close()
	p := newProfiles(true)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() { _, _ = p.get(context.Background(), fmt.Sprintf("%s/slow/%d.json", srv.URL, i)) })
	}
	deadline := time.Now().Add(5 * time.Second)
	for slowHits.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/agent.json"
	start := time.Now()
	if _, err := p.get(context.Background(), other); err != nil {
		t.Errorf("a new agent on another host: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("a new agent on another host waited %v behind a slow one", d)
	}
	if n := slowHits.Load(); n > 4 {
		t.Errorf("%d fetches of the slow host at once, want its share of 4", n)
	}
	close(release)
	wg.Wait()
}
