package accounts_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/accounts"
	"shop/database/dbtest"
)

// TestLink links an account end to end, through a client metadata document
// and through dynamic registration: the token names the account, its email
// and the scopes granted, for the shop's /mcp only; refreshing rotates it.
func TestLink(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		ctx := context.Background()

		t.Run("Metadata", func(t *testing.T) {
			var as, pr map[string]any
			_, body := read(t)(http.Get(e.url + "/.well-known/oauth-authorization-server"))
			json.Unmarshal([]byte(body), &as)
			_, body = read(t)(http.Get(e.url + "/.well-known/oauth-protected-resource/mcp"))
			json.Unmarshal([]byte(body), &pr)
			if as["issuer"] != e.url || as["client_id_metadata_document_supported"] != true ||
				as["authorization_response_iss_parameter_supported"] != true || as["code_challenge_methods_supported"].([]any)[0] != "S256" {
				t.Errorf("authorization server metadata %v", as)
			}
			if pr["resource"] != e.url+"/mcp" || pr["authorization_servers"].([]any)[0] != e.url {
				t.Errorf("protected resource metadata %v", pr)
			}
		})

		t.Run("ClientMetadataDocument", func(t *testing.T) {
			verifier, challenge := pkce()
			code := e.authorize(t, e.clientID, e.redirect, challenge, "Ann@Example.com")
			status, tk := e.exchange(t, e.clientID, e.redirect, code, verifier)
			if status != http.StatusOK || tk.AccessToken == "" || tk.RefreshToken == "" {
				t.Fatalf("exchange: %d %+v", status, tk)
			}
			if tk.ExpiresIn < 3500 || tk.ExpiresIn > 3600 {
				t.Errorf("expires_in %d, want about an hour", tk.ExpiresIn)
			}
			b, err := e.as.Verify(ctx, tk.AccessToken)
			if err != nil || b.AccountEmail != "ann@example.com" || !b.HasScope("orders:read") || !b.HasScope("account") || b.HasScope("payments") {
				t.Fatalf("verify: %+v %v", b, err)
			}
			status, next := e.refresh(t, e.clientID, tk.RefreshToken)
			if status != http.StatusOK || next.RefreshToken == tk.RefreshToken {
				t.Fatalf("refresh: %d %+v", status, next)
			}
			if b2, err := e.as.Verify(ctx, next.AccessToken); err != nil || b2.AccountID != b.AccountID {
				t.Fatalf("verify refreshed: %+v %v", b2, err)
			}
			// No token row holds a token or its signature in clear.
			var leaked int64
			db.Raw("SELECT COUNT(*) FROM oauth_grants WHERE signature_hash = ? OR signature_hash = ? OR form LIKE ?",
				tk.AccessToken, tk.RefreshToken, "%"+code+"%").Scan(&leaked)
			if leaked != 0 {
				t.Error("a token or code is stored in clear")
			}
		})

		t.Run("DynamicRegistration", func(t *testing.T) {
			redirect := "http://127.0.0.1:9/callback"
			status, body := read(t)(http.Post(e.url+"/oauth/register", "application/json",
				strings.NewReader(`{"client_name":"Old Host","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`)))
			var reg struct {
				ClientID string `json:"client_id"`
			}
			if json.Unmarshal([]byte(body), &reg); status != http.StatusCreated || reg.ClientID == "" {
				t.Fatalf("register: %d %s", status, body)
			}
			verifier, challenge := pkce()
			code := e.authorize(t, reg.ClientID, redirect, challenge, "bob@example.com")
			status, tk := e.exchange(t, reg.ClientID, redirect, code, verifier)
			if status != http.StatusOK {
				t.Fatalf("exchange: %d %+v", status, tk)
			}
			if b, err := e.as.Verify(ctx, tk.AccessToken); err != nil || b.AccountEmail != "bob@example.com" {
				t.Fatalf("verify: %+v %v", b, err)
			}
		})

		t.Run("Deny", func(t *testing.T) {
			_, challenge := pkce()
			b, csrf := e.login(t, e.authorizeURL(e.clientID, e.redirect, challenge, e.url+"/mcp"), "cy@example.com")
			resp, err := b.PostForm(e.url+"/login/consent", url.Values{"csrf": {csrf}, "decision": {"deny"}})
			read(t)(resp, err)
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if q := loc.Query(); q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("iss") != e.url {
				t.Fatalf("deny redirected to %s", loc)
			}
		})
	})
}

// TestRefusals: each check of the authorization server, refusing what it
// must (issue 47's list).
func TestRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		linked := func(t *testing.T, email string) (verifier, code string) {
			verifier, challenge := pkce()
			return verifier, e.authorize(t, e.clientID, e.redirect, challenge, email)
		}

		t.Run("WrongVerifier", func(t *testing.T) {
			_, code := linked(t, "a@example.com")
			other, _ := pkce()
			if status, tk := e.exchange(t, e.clientID, e.redirect, code, other); status != http.StatusBadRequest || tk.AccessToken != "" {
				t.Fatalf("wrong verifier: %d %+v", status, tk)
			}
		})

		t.Run("ReplayedCode", func(t *testing.T) {
			verifier, code := linked(t, "a@example.com")
			status, first := e.exchange(t, e.clientID, e.redirect, code, verifier)
			if status != http.StatusOK {
				t.Fatalf("first exchange: %d %+v", status, first)
			}
			if status, tk := e.exchange(t, e.clientID, e.redirect, code, verifier); status != http.StatusBadRequest || tk.AccessToken != "" {
				t.Fatalf("replayed code: %d %+v", status, tk)
			}
			if _, err := e.as.Verify(ctx, first.AccessToken); !errors.Is(err, accounts.ErrInvalidToken) {
				t.Errorf("the token of a replayed code still works: %v", err)
			}
		})

		t.Run("ExpiredCode", func(t *testing.T) {
			verifier, code := linked(t, "a@example.com")
			db.Exec("UPDATE oauth_grants SET expires_at = ? WHERE kind = 'code' AND active", time.Now().Add(-time.Minute).UTC())
			if status, tk := e.exchange(t, e.clientID, e.redirect, code, verifier); status != http.StatusBadRequest || tk.AccessToken != "" {
				t.Fatalf("expired code: %d %+v", status, tk)
			}
		})

		t.Run("RedirectNotInDocument", func(t *testing.T) {
			_, challenge := pkce()
			resp, err := browser().Get(e.authorizeURL(e.clientID, e.redirect+"/elsewhere", challenge, e.url+"/mcp"))
			status, page := read(t)(resp, err)
			if status == http.StatusOK || strings.Contains(resp.Header.Get("Location"), "elsewhere") || strings.Contains(page, `name="csrf"`) {
				t.Fatalf("foreign redirect_uri: %d %s %s", status, resp.Header.Get("Location"), page)
			}
		})

		t.Run("OtherResource", func(t *testing.T) {
			_, challenge := pkce()
			resp, err := browser().Get(e.authorizeURL(e.clientID, e.redirect, challenge, "https://other.example/mcp"))
			status, page := read(t)(resp, err)
			if status != http.StatusBadRequest || strings.Contains(page, `name="csrf"`) || resp.Header.Get("Location") != "" || !strings.Contains(page, "invalid_request") {
				t.Fatalf("authorize for another resource: %d %s\n%s", status, resp.Header.Get("Location"), page)
			}
			verifier, code := linked(t, "a@example.com")
			status, tk := e.token(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {e.clientID}, "code": {code},
				"redirect_uri": {e.redirect}, "code_verifier": {verifier}, "resource": {"https://other.example/mcp"}})
			if status != http.StatusBadRequest || tk.AccessToken != "" {
				t.Fatalf("token for another resource: %d %+v", status, tk)
			}
			// A token whose audience is another resource is refused by /mcp.
			verifier, code = linked(t, "a@example.com")
			_, tk = e.exchange(t, e.clientID, e.redirect, code, verifier)
			db.Exec("UPDATE oauth_grants SET audience = 'https://other.example/mcp' WHERE kind = 'access'")
			if _, err := e.as.Verify(ctx, tk.AccessToken); !errors.Is(err, accounts.ErrInvalidToken) {
				t.Fatalf("a token for another resource verified: %v", err)
			}
		})

		t.Run("RevokedRefreshToken", func(t *testing.T) {
			verifier, code := linked(t, "a@example.com")
			_, tk := e.exchange(t, e.clientID, e.redirect, code, verifier)
			status, body := read(t)(http.PostForm(e.url+"/oauth/revoke", url.Values{"client_id": {e.clientID}, "token": {tk.RefreshToken}, "token_type_hint": {"refresh_token"}}))
			if status != http.StatusOK {
				t.Fatalf("revoke: %d %s", status, body)
			}
			if status, next := e.refresh(t, e.clientID, tk.RefreshToken); status != http.StatusBadRequest || next.AccessToken != "" {
				t.Fatalf("revoked refresh token: %d %+v", status, next)
			}
			if _, err := e.as.Verify(ctx, tk.AccessToken); !errors.Is(err, accounts.ErrInvalidToken) {
				t.Errorf("the access token of a revoked grant still works: %v", err)
			}
		})

		t.Run("RefreshTokenUsedTwice", func(t *testing.T) {
			verifier, code := linked(t, "a@example.com")
			_, tk := e.exchange(t, e.clientID, e.redirect, code, verifier)
			status, next := e.refresh(t, e.clientID, tk.RefreshToken)
			if status != http.StatusOK {
				t.Fatalf("refresh: %d %+v", status, next)
			}
			pastGrace(t, db)
			if status, again := e.refresh(t, e.clientID, tk.RefreshToken); status != http.StatusBadRequest || again.AccessToken != "" {
				t.Fatalf("refresh token used twice: %d %+v", status, again)
			}
			if status, after := e.refresh(t, e.clientID, next.RefreshToken); status != http.StatusBadRequest || after.AccessToken != "" {
				t.Fatalf("the family's newest refresh token still works: %d %+v", status, after)
			}
			if _, err := e.as.Verify(ctx, next.AccessToken); !errors.Is(err, accounts.ErrInvalidToken) {
				t.Errorf("the family's access token still works: %v", err)
			}
		})

		t.Run("ConsentWithoutCSRF", func(t *testing.T) {
			_, challenge := pkce()
			b, _ := e.login(t, e.authorizeURL(e.clientID, e.redirect, challenge, e.url+"/mcp"), "a@example.com")
			resp, err := b.PostForm(e.url+"/login/consent", url.Values{"decision": {"allow"}})
			if status, _ := read(t)(resp, err); status != http.StatusForbidden || resp.Header.Get("Location") != "" {
				t.Fatalf("consent without csrf: %d %s", status, resp.Header.Get("Location"))
			}
			resp, err = b.PostForm(e.url+"/login/consent", url.Values{"csrf": {"forged"}, "decision": {"allow"}})
			if status, _ := read(t)(resp, err); status != http.StatusForbidden || resp.Header.Get("Location") != "" {
				t.Fatalf("consent with a forged csrf: %d %s", status, resp.Header.Get("Location"))
			}
		})

		t.Run("SixthCode", func(t *testing.T) {
			_, challenge := pkce()
			b := browser()
			_, page := read(t)(b.Get(e.authorizeURL(e.clientID, e.redirect, challenge, e.url+"/mcp")))
			csrf := csrfOf(t, page)
			read(t)(b.PostForm(e.url+"/login/email", url.Values{"csrf": {csrf}, "email": {"six@example.com"}}))
			right := e.lastCode(t, "six@example.com")
			wrong := "000000"
			if right == wrong {
				wrong = "111111"
			}
			for i := range 5 {
				if status, _ := read(t)(b.PostForm(e.url+"/login/code", url.Values{"csrf": {csrf}, "code": {wrong}})); status != http.StatusUnprocessableEntity {
					t.Fatalf("wrong code %d: %d", i+1, status)
				}
			}
			status, page := read(t)(b.PostForm(e.url+"/login/code", url.Values{"csrf": {csrf}, "code": {right}}))
			if status != http.StatusForbidden || strings.Contains(page, `value="allow"`) {
				t.Fatalf("sixth try (the right code): %d", status)
			}
		})

		t.Run("PrivateClientMetadataURL", func(t *testing.T) {
			var conns atomic.Int32
			doc := httptest.NewUnstartedServer(http.NotFoundHandler())
			doc.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			doc.StartTLS()
			t.Cleanup(doc.Close)
			strict := newStrictEnv(t, db)
			_, challenge := pkce()
			clientID := doc.URL + "/client.json" // https://127.0.0.1:…
			resp, err := browser().Get(strict.authorizeURL(clientID, "https://host.example/cb", challenge, strict.url+"/mcp"))
			status, page := read(t)(resp, err)
			if status == http.StatusOK || strings.Contains(page, `name="csrf"`) {
				t.Fatalf("client on a private address: %d", status)
			}
			if n := conns.Load(); n != 0 {
				t.Fatalf("the shop connected %d times to a client metadata URL on a loopback address", n)
			}
		})
	})
}

// newStrictEnv is an authorization server as in production: its fetcher
// refuses loopback and private addresses.
func newStrictEnv(t *testing.T, db *gorm.DB) *env {
	t.Helper()
	return newEnvWith(t, db, false)
}
