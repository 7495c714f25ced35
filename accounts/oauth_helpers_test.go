package accounts_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/accounts"
	"shop/webfetch"
)

// env is an authorization server on 127.0.0.1 with a client's metadata
// document served beside it, on a fresh database.
type env struct {
	db       *gorm.DB
	as       *accounts.Server
	url      string
	clientID string // the metadata document's URL
	redirect string
	docs     map[string]string // path → document served by the client's server
}

func newEnv(t *testing.T, db *gorm.DB) *env {
	t.Helper()
	return newEnvWith(t, db, true)
}

func newEnvWith(t *testing.T, db *gorm.DB, loopback bool) *env {
	t.Helper()
	e := &env{db: db, docs: map[string]string{}}
	client := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := e.docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, doc)
	}))
	t.Cleanup(client.Close)
	e.clientID, e.redirect = client.URL+"/client.json", client.URL+"/callback"
	e.docs["/client.json"] = `{"client_id":"` + e.clientID + `","client_name":"Test Host","redirect_uris":["` + e.redirect + `"],"token_endpoint_auth_method":"none"}`

	ts := httptest.NewUnstartedServer(nil)
	ts.Start()
	t.Cleanup(ts.Close)
	e.url = ts.URL
	key := make([]byte, 32)
	rand.Read(key)
	as, err := accounts.New(db, accounts.Options{PublicURL: ts.URL, Key: key, Shop: "Northwind Goods", Emails: true, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Fetch: webfetch.New(webfetch.Options{AllowLoopback: loopback})})
	if err != nil {
		t.Fatal(err)
	}
	e.as = as
	h := as.Handler()
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get(testAddress); a != "" { // as server's rate limiter names the client
			r = r.WithContext(shop.WithBuyer(r.Context(), shop.Buyer{Address: a}))
		}
		h.ServeHTTP(w, r)
	})
	return e
}

// testAddress is the header that names a test request's client address.
const testAddress = "X-Test-Address"

// from is a browser whose requests come from the client address addr.
func from(addr string) *http.Client {
	b := browser()
	b.Transport = addressed(addr)
	return b
}

// addressed sends requests from the client address it names.
type addressed string

func (a addressed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(testAddress, string(a))
	return http.DefaultTransport.RoundTrip(r)
}

// browser is a buyer's browser: cookies kept, redirects not followed.
func browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// pkce is a code verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	b := make([]byte, 32)
	rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func (e *env) authorizeURL(clientID, redirect, challenge, resource string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"orders:read account"},
		"state": {"state-1234567"}, "resource": {resource}}
	return e.url + "/oauth/authorize?" + q.Encode()
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no csrf field in page:\n%s", body)
	}
	return html.UnescapeString(m[1])
}

// read answers a response's status and body: read(t)(http.Get(…)).
func read(t *testing.T) func(*http.Response, error) (int, string) {
	return func(resp *http.Response, err error) (int, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}

// lastCode is the one-time code of the last login email in the outbox.
func (e *env) lastCode(t *testing.T, email string) string {
	t.Helper()
	var body string
	if err := e.db.Raw("SELECT body_text FROM emails WHERE recipient = lower(?) AND kind = 'login_code' ORDER BY created_at DESC LIMIT 1", email).Scan(&body).Error; err != nil || body == "" {
		t.Fatalf("no login email to %s (%v)", email, err)
	}
	m := regexp.MustCompile(`\b(\d{6})\b`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no code in %q", body)
	}
	return m[1]
}

// login drives the pages as a buyer up to the consent page and answers its
// CSRF token and the browser.
func (e *env) login(t *testing.T, authorizeURL, email string) (*http.Client, string) {
	t.Helper()
	b, csrf, _ := e.consentPage(t, authorizeURL, email)
	return b, csrf
}

// consentPage drives the pages as a buyer up to the consent page and
// answers the browser, the CSRF token and the page.
func (e *env) consentPage(t *testing.T, authorizeURL, email string) (*http.Client, string, string) {
	t.Helper()
	b := browser()
	status, page := read(t)(b.Get(authorizeURL))
	if status != http.StatusOK {
		t.Fatalf("authorize: %d\n%s", status, page)
	}
	csrf := csrfOf(t, page)
	status, page = read(t)(b.PostForm(e.url+"/login/email", url.Values{"csrf": {csrf}, "email": {email}}))
	if status != http.StatusOK || !strings.Contains(page, "one-time-code") {
		t.Fatalf("email: %d\n%s", status, page)
	}
	status, page = read(t)(b.PostForm(e.url+"/login/code", url.Values{"csrf": {csrf}, "code": {e.lastCode(t, email)}}))
	if status != http.StatusOK || !strings.Contains(page, `value="allow"`) {
		t.Fatalf("code: %d\n%s", status, page)
	}
	return b, csrf, page
}

// allow answers the consent page of b's flow with form (decision allow
// added) and answers where the shop redirected.
func (e *env) allow(t *testing.T, b *http.Client, csrf string, form url.Values) *url.URL {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", csrf)
	form.Set("decision", "allow")
	resp, err := b.PostForm(e.url+"/login/consent", form)
	status, page := read(t)(resp, err)
	if status != http.StatusSeeOther {
		t.Fatalf("consent: %d\n%s", status, page)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// register registers a client dynamically and answers the status and its
// id (or error).
func (e *env) register(t *testing.T, name string, redirects ...string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": redirects, "token_endpoint_auth_method": "none"})
	status, answer := read(t)(http.Post(e.url+"/oauth/register", "application/json", strings.NewReader(string(body))))
	var reg struct {
		ClientID string `json:"client_id"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal([]byte(answer), &reg); err != nil {
		t.Fatalf("register: %d %s", status, answer)
	}
	if status != http.StatusCreated {
		return status, reg.Error
	}
	return status, reg.ClientID
}

// authorizeQuery is an authorization request's query, PKCE S256 with
// challenge, for the shop's /mcp, with no scope and no state.
func (e *env) authorizeQuery(clientID, redirect, challenge string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "resource": {e.url + "/mcp"}}
}

// authorize links email's account for the client and answers the
// authorization code the redirect carries.
func (e *env) authorize(t *testing.T, clientID, redirect, challenge, email string) string {
	t.Helper()
	b, csrf := e.login(t, e.authorizeURL(clientID, redirect, challenge, e.url+"/mcp"), email)
	resp, err := b.PostForm(e.url+"/login/consent", url.Values{"csrf": {csrf}, "decision": {"allow"}})
	status, page := read(t)(resp, err)
	if status != http.StatusSeeOther {
		t.Fatalf("consent: %d\n%s", status, page)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if !strings.HasPrefix(loc.String(), redirect+"?") {
		t.Fatalf("redirected to %s, want %s", loc, redirect)
	}
	q := loc.Query()
	if q.Get("iss") != e.url || q.Get("state") != "state-1234567" || q.Get("code") == "" {
		t.Fatalf("redirect %s: want iss %s, the state and a code", loc, e.url)
	}
	return q.Get("code")
}

// tokens is a token endpoint's answer.
type tokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
	Scope        string `json:"scope"`
	Error        string `json:"error"`
}

func (e *env) token(t *testing.T, form url.Values) (int, tokens) {
	t.Helper()
	status, body := read(t)(http.PostForm(e.url+"/oauth/token", form))
	var tk tokens
	if err := json.Unmarshal([]byte(body), &tk); err != nil {
		t.Fatalf("token: %d %s", status, body)
	}
	return status, tk
}

func (e *env) exchange(t *testing.T, clientID, redirect, code, verifier string) (int, tokens) {
	return e.token(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {e.url + "/mcp"}})
}

func (e *env) refresh(t *testing.T, clientID, refreshToken string) (int, tokens) {
	return e.token(t, url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {refreshToken},
		"resource": {e.url + "/mcp"}})
}

// link links email's account for the metadata document's client and
// answers the first tokens.
func (e *env) link(t *testing.T, email string) tokens {
	t.Helper()
	verifier, challenge := pkce()
	status, tk := e.exchange(t, e.clientID, e.redirect, e.authorize(t, e.clientID, e.redirect, challenge, email), verifier)
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %+v", status, tk)
	}
	return tk
}
