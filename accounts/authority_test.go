package accounts_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/accounts"
	"shop/database/dbtest"
	"shop/i18n"
)

// The checks that keep a buyer's authority theirs (docs/security.md,
// docs/security.md): the pages name where the code goes, a refusal never
// redirects, the scopes granted are the ones the buyer saw, and tokens are
// only what they say.

// pastGrace moves every rotated refresh token's first use an hour back,
// well past the grace.
func pastGrace(t *testing.T, db *gorm.DB) {
	t.Helper()
	if err := db.Exec("UPDATE oauth_grants SET rotated_at = ? WHERE rotated_at IS NOT NULL", time.Now().Add(-time.Hour).UTC()).Error; err != nil {
		t.Fatal(err)
	}
}

// TestRegistrationSites: a registration whose redirect URIs lead to two
// sites is refused; one site (subdomains of it) and the loopback beside it
// are registered.
func TestRegistrationSites(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		cases := []struct {
			name      string
			redirects []string
			status    int
		}{
			{"TwoSites", []string{"https://chatgpt.com/connector_platform_oauth_redirect", "https://attacker.example/cb"}, http.StatusBadRequest},
			{"SiteAndIP", []string{"https://host.example/cb", "https://203.0.113.7/cb"}, http.StatusBadRequest},
			{"OneSite", []string{"https://app.host.example/cb", "https://host.example/other"}, http.StatusCreated},
			{"SiteAndLoopback", []string{"https://host.example/cb", "http://127.0.0.1:9/cb", "http://localhost:8/cb"}, http.StatusCreated},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, got := e.register(t, "Some Host", tc.redirects...)
				if status != tc.status || (status == http.StatusBadRequest && got != "invalid_redirect_uri") {
					t.Fatalf("register %v: %d %q, want %d", tc.redirects, status, got, tc.status)
				}
			})
		}
	})
}

// TestPagesNameTheApp: the email and consent pages show the host of the
// redirect URI the request uses (not the registration's first), say when
// the client registered itself, and show its name without control or
// bidirectional characters; a metadata document's client is shown with
// the document's host.
func TestPagesNameTheApp(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		loopback := "http://127.0.0.1:9/cb"
		status, id := e.register(t, "Chat\u202eG\x07PT\n", "https://chatgpt.com/connector_platform_oauth_redirect", loopback)
		if status != http.StatusCreated {
			t.Fatalf("register: %d %s", status, id)
		}
		_, challenge := pkce()
		b := browser()
		status, page := read(t)(b.Get(e.url + "/oauth/authorize?" + e.authorizeQuery(id, loopback, challenge).Encode()))
		if status != http.StatusOK {
			t.Fatalf("authorize: %d\n%s", status, page)
		}
		self := "registered itself; the shop has not checked its name"
		for _, want := range []string{`<strong>ChatGPT</strong> (<span class="host">127.0.0.1</span>)`, self} {
			if !strings.Contains(page, want) {
				t.Errorf("the email page lacks %q:\n%s", want, page)
			}
		}
		if strings.Contains(page, "chatgpt.com") || strings.Contains(page, "\u202e") {
			t.Errorf("the email page names chatgpt.com or keeps a bidirectional character:\n%s", page)
		}
		// The email page shown again (a bad email) names it the same way.
		_, page = read(t)(b.PostForm(e.url+"/login/email", url.Values{"csrf": {csrfOf(t, page)}, "email": {"not an email"}}))
		if !strings.Contains(page, `(<span class="host">127.0.0.1</span>)`) || !strings.Contains(page, self) {
			t.Errorf("the email page shown again:\n%s", page)
		}

		_, _, page = e.consentPage(t, e.url+"/oauth/authorize?"+e.authorizeQuery(id, loopback, challenge).Encode(), "ann@example.com")
		if !strings.Contains(page, `(<span class="host">127.0.0.1</span>)`) || !strings.Contains(page, self) || strings.Contains(page, "chatgpt.com") {
			t.Errorf("the consent page:\n%s", page)
		}

		// A metadata document's client: the document's host, not "registered itself".
		_, _, page = e.consentPage(t, e.url+"/oauth/authorize?"+e.authorizeQuery(e.clientID, e.redirect, challenge).Encode(), "ann@example.com")
		docHost, _ := url.Parse(e.clientID)
		if !strings.Contains(page, `<strong>Test Host</strong> (<span class="host">`+docHost.Hostname()+`</span>)`) || strings.Contains(page, self) {
			t.Errorf("the consent page of a metadata document's client:\n%s", page)
		}
	})
}

// TestConsentScopes: a client that asks for no scope gets the least one,
// never every scope; payments is a line of its own, unticked for a client
// that registered itself (granted only when the buyer ticks it) and
// ticked for a metadata document's client.
func TestConsentScopes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		redirect := "http://127.0.0.1:9/cb"
		_, id := e.register(t, "Host", redirect)
		box := `id="scope-payments"`
		cases := []struct {
			name, client, redirect, scope string
			tick                          bool
			ticked                        bool // the box as the page shows it; false when there is none
			want                          string
		}{
			{"NoScope", id, redirect, "", false, false, "orders:read"},
			{"SelfRegisteredUnticked", id, redirect, "orders:read payments", false, false, "orders:read"},
			{"SelfRegisteredTicked", id, redirect, "orders:read payments", true, false, "orders:read payments"},
			{"MetadataDocument", e.clientID, e.redirect, "account payments", true, true, "account payments"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				verifier, challenge := pkce()
				q := e.authorizeQuery(tc.client, tc.redirect, challenge)
				if tc.scope != "" {
					q.Set("scope", tc.scope)
				}
				b, csrf, page := e.consentPage(t, e.url+"/oauth/authorize?"+q.Encode(), "scopes@example.com")
				if hasBox := strings.Contains(page, box); hasBox != strings.Contains(tc.scope, "payments") {
					t.Errorf("payments box shown %v for scope %q:\n%s", hasBox, tc.scope, page)
				}
				if ticked := strings.Contains(page, box+` name="payments" value="on" checked`); ticked != tc.ticked {
					t.Errorf("payments box ticked %v, want %v:\n%s", ticked, tc.ticked, page)
				}
				if strings.Contains(page, "see and change your account") != strings.Contains(tc.scope, "account") {
					t.Errorf("the consent page's scopes for %q:\n%s", tc.scope, page)
				}
				form := url.Values{}
				if tc.tick {
					form.Set("payments", "on")
				}
				loc := e.allow(t, b, csrf, form)
				status, tk := e.exchange(t, tc.client, tc.redirect, loc.Query().Get("code"), verifier)
				if status != http.StatusOK || tk.Scope != tc.want {
					t.Fatalf("token: %d scope %q, want %q", status, tk.Scope, tc.want)
				}
			})
		}
	})
}

// TestAuthorizeRefusalsStayHome: a request the shop refuses at
// /oauth/authorize is answered on the shop's own page, never by a redirect
// to the client (anyone may register one: no open redirector).
func TestAuthorizeRefusalsStayHome(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		evil := "https://attacker.example/cb"
		_, id := e.register(t, "Evil", evil)
		_, challenge := pkce()
		cases := []struct {
			name, message string
			change        func(url.Values)
		}{
			{"NoPKCE", "sign-in request the shop cannot accept", func(q url.Values) { q.Del("code_challenge") }},
			{"PlainPKCE", "sign-in request the shop cannot accept", func(q url.Values) { q.Set("code_challenge_method", "plain") }},
			{"UnknownScope", "sign-in request the shop cannot accept", func(q url.Values) { q.Set("scope", "admin") }},
			{"OtherResource", "sign-in request the shop cannot accept", func(q url.Values) { q.Set("resource", "https://other.example/mcp") }},
			{"Token", "sign-in request the shop cannot accept", func(q url.Values) { q.Set("response_type", "token") }},
			{"UnknownClient", "not known to the shop", func(q url.Values) { q.Set("client_id", "client_nobody") }},
			{"RedirectNotRegistered", "did not register", func(q url.Values) { q.Set("redirect_uri", "https://attacker.example/other") }},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				q := e.authorizeQuery(id, evil, challenge)
				q.Set("state", "state-1234567")
				tc.change(q)
				resp, err := browser().Get(e.url + "/oauth/authorize?" + q.Encode())
				status, page := read(t)(resp, err)
				if loc := resp.Header.Get("Location"); loc != "" || status < 400 || status >= 500 {
					t.Fatalf("refused with %d, Location %q", status, loc)
				}
				if !strings.Contains(page, `id="login-message"`) || !strings.Contains(page, tc.message) || !strings.Contains(page, `id="login-detail"`) {
					t.Errorf("the refusal page lacks %q:\n%s", tc.message, page)
				}
			})
		}
	})
}

// TestStatelessAuthorize: an authorization request with PKCE S256 and no
// state links, and its redirect carries no state; a state that is sent,
// however short or long, comes back unchanged.
func TestStatelessAuthorize(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		for _, state := range []string{"", "x", strings.Repeat("s~ é/", 300)} {
			t.Run(map[bool]string{true: "None", false: "Sent"}[state == ""], func(t *testing.T) {
				verifier, challenge := pkce()
				q := e.authorizeQuery(e.clientID, e.redirect, challenge)
				if state != "" {
					q.Set("state", state)
				}
				b, csrf := e.login(t, e.url+"/oauth/authorize?"+q.Encode(), "stateless@example.com")
				loc := e.allow(t, b, csrf, nil)
				back := loc.Query()
				if _, sent := back["state"]; sent != (state != "") || back.Get("state") != state {
					t.Fatalf("redirect %s: want state %q", loc, state)
				}
				if status, tk := e.exchange(t, e.clientID, e.redirect, back.Get("code"), verifier); status != http.StatusOK {
					t.Fatalf("exchange: %d %+v", status, tk)
				}
			})
		}
	})
}

// TestRefreshGrace: two refreshes of one token at once both succeed, and
// both new token pairs work; a use of the old token after the grace is a
// reuse, which revokes the family.
func TestRefreshGrace(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		tk := e.link(t, "grace@example.com")

		var wg sync.WaitGroup
		got := make([]tokens, 2)
		statuses := make([]int, 2)
		for i := range got {
			wg.Go(func() { statuses[i], got[i] = e.refresh(t, e.clientID, tk.RefreshToken) })
		}
		wg.Wait()
		for i, next := range got {
			if statuses[i] != http.StatusOK || next.AccessToken == "" {
				t.Fatalf("concurrent refresh %d: %d %+v", i, statuses[i], next)
			}
			if _, err := e.as.Verify(ctx, next.AccessToken); err != nil {
				t.Fatalf("the access token of refresh %d: %v", i, err)
			}
		}
		// Each worker goes on with its own new refresh token.
		if status, next := e.refresh(t, e.clientID, got[0].RefreshToken); status != http.StatusOK {
			t.Fatalf("refreshing the first new token: %d %+v", status, next)
		}

		pastGrace(t, db)
		if status, again := e.refresh(t, e.clientID, tk.RefreshToken); status != http.StatusBadRequest || again.AccessToken != "" {
			t.Fatalf("the old refresh token after the grace: %d %+v", status, again)
		}
		if status, after := e.refresh(t, e.clientID, got[1].RefreshToken); status != http.StatusBadRequest {
			t.Fatalf("the family's other refresh token after a reuse: %d %+v", status, after)
		}
		for i, next := range got {
			if _, err := e.as.Verify(ctx, next.AccessToken); !errors.Is(err, accounts.ErrInvalidToken) {
				t.Errorf("access token %d of the family after a reuse: %v", i, err)
			}
		}
	})
}

// TestRefreshTokenIsNoBearer: a refresh token is not an access token.
func TestRefreshTokenIsNoBearer(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		tk := e.link(t, "bearer@example.com")
		if _, err := e.as.Verify(context.Background(), tk.RefreshToken); !errors.Is(err, accounts.ErrInvalidToken) {
			t.Fatalf("a refresh token verified as an access token: %v", err)
		}
		if _, err := e.as.Verify(context.Background(), tk.AccessToken); err != nil {
			t.Fatalf("the access token: %v", err)
		}
	})
}

// TestAuthorityPagesLanguage: what the pages add for the buyer's authority
// (the self-registered note, the payments line, a refusal and its code
// line) is in each of the shop's languages.
func TestAuthorityPagesLanguage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		redirect := "http://127.0.0.1:9/cb"
		_, id := e.register(t, "Some Host", redirect)
		for i, lang := range i18n.Languages {
			t.Run(lang, func(t *testing.T) {
				l := i18n.Named(lang)
				_, challenge := pkce()
				q := e.authorizeQuery(id, redirect, challenge)
				q.Set("scope", "orders:read payments")
				b := browser()
				b.Transport = langTransport(lang)
				_, page := read(t)(b.Get(e.url + "/oauth/authorize?" + q.Encode()))
				want := []string{l.T("login_self_registered", "client", "Some Host")}
				csrf := csrfOf(t, page)
				email := "authority" + string(rune('a'+i)) + "@example.com"
				read(t)(b.PostForm(e.url+"/login/email", url.Values{"csrf": {csrf}, "email": {email}}))
				_, consent := read(t)(b.PostForm(e.url+"/login/code", url.Values{"csrf": {csrf}, "code": {e.lastCode(t, email)}}))
				q.Set("redirect_uri", "https://elsewhere.example/cb")
				_, refused := read(t)(b.Get(e.url + "/oauth/authorize?" + q.Encode()))
				english := []string{"registered itself", "saved with the shop", "asked for your sign-in", "For the app's makers"}
				if lang == "en" {
					english = nil
				}
				checkPage(t, "the email page", html.UnescapeString(page), lang, want, english)
				checkPage(t, "the consent page", html.UnescapeString(consent), lang, append(want, l.T("scope_payments")), english)
				checkPage(t, "the refusal page", html.UnescapeString(refused), lang, []string{l.T("login_bad_redirect"), l.T("login_error_code", "code", "invalid_request")}, english)
			})
		}
	})
}
