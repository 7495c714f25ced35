package server_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/accounts"
	"shop/database/dbtest"
	"shop/mcptest"
	"shop/server"
	"shop/webfetch"
)

// TestBearerAuth: /mcp with a token the shop issued acts as that buyer (an
// account tool sees the account and its email); without one it is a guest,
// whom the account tool refuses with the challenge; with an unknown token
// it answers 401 and the challenge.
func TestBearerAuth(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ts, as := accountsServer(t, db)
		serveWhoami(t, ts, as, server.Options{})

		token := link(t, db, ts.URL, "Linked@Example.com")
		status, _, body := callWhoami(t, ts.URL, token)
		var got struct {
			StructuredContent shop.Buyer
		}
		json.Unmarshal(rpcResult(body), &got)
		if b := got.StructuredContent; status != http.StatusOK || b.AccountID == "" || b.AccountEmail != "linked@example.com" || !b.HasScope(shop.ScopeOrdersRead) {
			t.Fatalf("whoami with the token: %d %s", status, body)
		}
		status, _, body = callWhoami(t, ts.URL, "")
		if status != http.StatusOK || !strings.Contains(string(body), `"isError":true`) || !strings.Contains(string(body), `mcp/www_authenticate`) ||
			!strings.Contains(string(body), as.ResourceMetadataURL()) {
			t.Fatalf("whoami as a guest: %d %s", status, body)
		}
		// tools/list declares the tool's securitySchemes at the top of its
		// descriptor and in its _meta.
		status, _, body = post(t, ts.URL, "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		var listed struct {
			Tools []struct {
				SecuritySchemes []shop.SecurityScheme
				Meta            struct{ SecuritySchemes []shop.SecurityScheme } `json:"_meta"`
			}
		}
		json.Unmarshal(rpcResult(body), &listed)
		want := []shop.SecurityScheme{{Type: "oauth2", Scopes: []string{shop.ScopeOrdersRead}}}
		if len(listed.Tools) != 1 || !reflect.DeepEqual(listed.Tools[0].SecuritySchemes, want) || !reflect.DeepEqual(listed.Tools[0].Meta.SecuritySchemes, want) {
			t.Fatalf("tools/list: %d %s", status, body)
		}
		status, challenge, _ := callWhoami(t, ts.URL, token+"x")
		if status != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+as.ResourceMetadataURL()+`"`) {
			t.Fatalf("an unknown token: %d %q", status, challenge)
		}
	})
}

// TestRefreshTokenAtMCP: a refresh token (30 days) is no bearer token at
// /mcp, where only access tokens (an hour) are: 401 with the challenge.
func TestRefreshTokenAtMCP(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ts, as := accountsServer(t, db)
		serveWhoami(t, ts, as, server.Options{})
		access, refresh := linkTokens(t, db, ts.URL, "refresh@example.com")
		if status, _, body := callWhoami(t, ts.URL, access); status != http.StatusOK {
			t.Fatalf("the access token: %d %s", status, body)
		}
		status, challenge, body := callWhoami(t, ts.URL, refresh)
		if status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) {
			t.Fatalf("the refresh token at /mcp: %d %q %s", status, challenge, body)
		}
	})
}

// accountsServer starts a test server (its handler set by serveWhoami) and
// the buyers' authorization server at its URL.
func accountsServer(t *testing.T, db *gorm.DB) (*httptest.Server, *accounts.Server) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	ts.Start()
	t.Cleanup(ts.Close)
	key := make([]byte, 32)
	rand.Read(key)
	as, err := accounts.New(db, accounts.Options{PublicURL: ts.URL, Key: key, Shop: "Shop", Emails: true,
		Fetch: webfetch.New(webfetch.Options{AllowLoopback: true})})
	if err != nil {
		t.Fatal(err)
	}
	return ts, as
}

// serveWhoami makes ts serve a shop with o and as, whose /mcp has one
// account tool, whoami, answering the caller's shop.Buyer.
func serveWhoami(t *testing.T, ts *httptest.Server, as *accounts.Server, o server.Options) {
	t.Helper()
	whoami := shop.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`), Auth: shop.AuthRequirement{Scopes: []string{shop.ScopeOrdersRead}},
		Handle: func(ctx context.Context, _ json.RawMessage) (*shop.Result, error) {
			return &shop.Result{Structured: shop.BuyerFrom(ctx), Text: "you"}, nil
		}}
	o.PublicURL, o.Accounts = ts.URL, as
	o.MCP = server.NewMCP(server.MCPOptions{Name: "shop", Tools: []shop.Tool{whoami},
		Challenge: func(s []string) string { return as.Challenge("insufficient_scope", s) }})
	srv, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv.Handler()
}

func callWhoami(t *testing.T, base, token string) (int, string, []byte) {
	t.Helper()
	return post(t, base, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
}

// post sends a JSON-RPC request to /mcp with token as its bearer token
// (none when empty) and answers the status, WWW-Authenticate and body.
func post(t *testing.T, base, token, rpc string) (int, string, []byte) {
	t.Helper()
	return mcptest.PostBearer(t, base+"/mcp", token, rpc)
}

func rpcResult(body []byte) json.RawMessage {
	var env struct{ Result json.RawMessage }
	json.Unmarshal(body, &env)
	return env.Result
}

// link registers a client, signs email in through the pages (the code read
// from the outbox), allows, and answers the access token.
func link(t *testing.T, db *gorm.DB, base, email string) string {
	t.Helper()
	access, _ := linkTokens(t, db, base, email)
	return access
}

// linkTokens links as link does and answers the access and refresh tokens.
func linkTokens(t *testing.T, db *gorm.DB, base, email string) (access, refresh string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(resp *http.Response, err error) (*http.Response, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	redirect := "http://127.0.0.1:9/cb"
	_, body := do(http.Post(base+"/oauth/register", "application/json", strings.NewReader(`{"redirect_uris":["`+redirect+`"]}`)))
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.Unmarshal([]byte(body), &reg)
	v := make([]byte, 32)
	rand.Read(v)
	verifier := base64.RawURLEncoding.EncodeToString(v)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}, "state": {"state-12345678"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {base + "/mcp"}}
	_, page := do(b.Get(base + "/oauth/authorize?" + q.Encode()))
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("authorize: %s", page)
	}
	csrf := m[1]
	do(b.PostForm(base+"/login/email", url.Values{"csrf": {csrf}, "email": {email}}))
	var text string
	db.Raw("SELECT body_text FROM emails WHERE kind = 'login_code' AND recipient = ?", strings.ToLower(email)).Scan(&text)
	code := regexp.MustCompile(`\d{6}`).FindString(text)
	do(b.PostForm(base+"/login/code", url.Values{"csrf": {csrf}, "code": {code}}))
	resp, _ := do(b.PostForm(base+"/login/consent", url.Values{"csrf": {csrf}, "decision": {"allow"}}))
	loc, _ := url.Parse(resp.Header.Get("Location"))
	_, body = do(http.PostForm(base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {reg.ClientID},
		"code": {loc.Query().Get("code")}, "redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {base + "/mcp"}}))
	var tk struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if json.Unmarshal([]byte(body), &tk); tk.AccessToken == "" || tk.RefreshToken == "" {
		t.Fatalf("no tokens: %s", body)
	}
	return tk.AccessToken, tk.RefreshToken
}
