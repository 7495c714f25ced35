package purchase

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// --account: the run links the buyer's account first, as an MCP host does
// (docs/accounts.md) with the buyer at the keyboard: it discovers the
// authorization server from /mcp's protected resource metadata (RFC 9728),
// registers itself dynamically (RFC 7591) with a loopback redirect URI it
// listens on, sends the buyer to the authorization endpoint with PKCE S256
// and the resource (RFC 8707), and plays the buyer on the shop's login
// pages, which work without JavaScript: it posts the email, reads the
// one-time code from the email the shop sent to --smtp-capture, posts it
// and allows the consent with the page's CSRF token. The shop redirects to
// the loopback URI with the code and iss (RFC 9207), which the run
// exchanges for the access token its MCP requests then carry.

// linkScopes are the scopes the run asks for: the buyer's orders and account.
const linkScopes = "orders:read account"

// oauthLink is what linking learns on the way.
type oauthLink struct {
	issuer, authorize, token, register string
	clientID, redirect                 string
	verifier, state                    string
	callback                           chan url.Values
	srv                                *http.Server
	web                                *http.Client // the buyer's browser: cookies, no redirects followed
	accessToken                        string
}

// getJSON fetches a JSON document of the shop's into v.
func (p *purchaser) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// discover reads /mcp's protected resource metadata (its path form) and the
// authorization server's metadata, and checks what the run relies on.
func (p *purchaser) discover(ctx context.Context) (string, error) {
	mcpURL, err := url.Parse(p.o.URL)
	if err != nil {
		return "", err
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := p.getJSON(ctx, mcpURL.Scheme+"://"+mcpURL.Host+"/.well-known/oauth-protected-resource"+mcpURL.Path, &prm); err != nil {
		return "", err
	}
	if prm.Resource != p.o.URL || len(prm.AuthorizationServers) == 0 {
		return "", fmt.Errorf("protected resource metadata: resource %q (want %s), authorization servers %v", prm.Resource, p.o.URL, prm.AuthorizationServers)
	}
	issuer := prm.AuthorizationServers[0]
	var asm struct {
		Issuer        string   `json:"issuer"`
		Authorize     string   `json:"authorization_endpoint"`
		Token         string   `json:"token_endpoint"`
		Register      string   `json:"registration_endpoint"`
		PKCE          []string `json:"code_challenge_methods_supported"`
		ISSParameter  bool     `json:"authorization_response_iss_parameter_supported"`
		ScopesAllowed []string `json:"scopes_supported"`
	}
	if err := p.getJSON(ctx, strings.TrimRight(issuer, "/")+"/.well-known/oauth-authorization-server", &asm); err != nil {
		return "", err
	}
	switch {
	case asm.Issuer != issuer:
		return "", fmt.Errorf("the authorization server's issuer %q is not %q, which named it", asm.Issuer, issuer)
	case !slices.Equal(asm.PKCE, []string{"S256"}) || !asm.ISSParameter:
		return "", fmt.Errorf("code_challenge_methods_supported %v (want [S256]), iss parameter %v (want true)", asm.PKCE, asm.ISSParameter)
	}
	for _, e := range []string{asm.Authorize, asm.Token, asm.Register} {
		if !strings.HasPrefix(e, issuer+"/") {
			return "", fmt.Errorf("endpoint %q is not under the issuer %s", e, issuer)
		}
	}
	p.link = &oauthLink{issuer: issuer, authorize: asm.Authorize, token: asm.Token, register: asm.Register}
	return fmt.Sprintf("issuer %s, PKCE %v, scopes %v", issuer, asm.PKCE, asm.ScopesAllowed), nil
}

// registerClient listens on a loopback port for the redirect and registers
// the run as a client with that redirect URI.
func (p *purchaser) registerClient(ctx context.Context) (string, error) {
	l := p.link
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	l.redirect = "http://" + ln.Addr().String() + "/callback"
	l.callback = make(chan url.Values, 1)
	l.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case l.callback <- r.URL.Query():
		default:
		}
		_, _ = io.WriteString(w, "linked: you can close this tab")
	})}
	go func() { _ = l.srv.Serve(ln) }()

	body, _ := json.Marshal(map[string]any{"client_name": "shop purchase", "redirect_uris": []string{l.redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
	var reg struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
		Error        string   `json:"error_description"`
	}
	status, err := p.post(ctx, p.http, l.register, "application/json", string(body), &reg)
	if err != nil {
		return "", err
	}
	if status != http.StatusCreated || reg.ClientID == "" || !slices.Equal(reg.RedirectURIs, []string{l.redirect}) {
		return "", fmt.Errorf("registration: %d, client %q, redirect URIs %v: %s", status, reg.ClientID, reg.RedirectURIs, reg.Error)
	}
	l.clientID = reg.ClientID
	return fmt.Sprintf("client %s, redirect %s", reg.ClientID, l.redirect), nil
}

// post sends a body to u and decodes a JSON answer into v (when not nil),
// answering the status.
func (p *purchaser) post(ctx context.Context, hc *http.Client, u, contentType, body string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			return resp.StatusCode, fmt.Errorf("POST %s: %d %.200q: %w", u, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode, nil
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// page requests a login page as the buyer's browser and answers its status,
// its body and the response.
func (l *oauthLink) page(ctx context.Context, method, u string, form url.Values) (int, string, *http.Response, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return 0, "", nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := l.web.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), resp, err
}

// signIn plays the buyer on the shop's pages, up to the redirect to the
// loopback URI, and answers the authorization code.
func (p *purchaser) signIn(ctx context.Context, email string) (string, error) {
	l := p.link
	jar, _ := cookiejar.New(nil)
	l.web = &http.Client{Jar: jar, Transport: p.http.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	l.verifier, l.state = randomString(), randomString()
	sum := sha256.Sum256([]byte(l.verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {l.clientID}, "redirect_uri": {l.redirect}, "scope": {linkScopes},
		"state": {l.state}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {p.o.URL}}
	status, page, _, err := l.page(ctx, http.MethodGet, l.authorize+"?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	m := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil || !strings.Contains(page, `type="email"`) {
		return "", fmt.Errorf("the email page: %d %.300q", status, page)
	}
	csrf := m[1]
	origin := strings.TrimSuffix(l.issuer, "/")
	if status, page, _, err = l.page(ctx, http.MethodPost, origin+"/login/email", url.Values{"csrf": {csrf}, "email": {email}}); err != nil {
		return "", err
	}
	if status != http.StatusOK || !strings.Contains(page, `autocomplete="one-time-code"`) {
		return "", fmt.Errorf("the code page: %d %.300q", status, page)
	}
	code, err := p.mail.code(ctx, email)
	if err != nil {
		return "", err
	}
	if status, page, _, err = l.page(ctx, http.MethodPost, origin+"/login/code", url.Values{"csrf": {csrf}, "code": {code}}); err != nil {
		return "", err
	}
	if status != http.StatusOK || !strings.Contains(page, `value="allow"`) {
		return "", fmt.Errorf("the consent page: %d %.300q", status, page)
	}
	status, page, resp, err := l.page(ctx, http.MethodPost, origin+"/login/consent", url.Values{"csrf": {csrf}, "decision": {"allow"}})
	if err != nil {
		return "", err
	}
	loc := resp.Header.Get("Location")
	if status != http.StatusSeeOther || !strings.HasPrefix(loc, l.redirect+"?") {
		return "", fmt.Errorf("allowing redirected %d to %q, want %s: %.300q", status, loc, l.redirect, page)
	}
	// The browser follows the redirect to the loopback listener.
	if _, _, _, err := l.page(ctx, http.MethodGet, loc, nil); err != nil {
		return "", err
	}
	var back url.Values
	select {
	case back = <-l.callback:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	switch {
	case back.Get("state") != l.state:
		return "", fmt.Errorf("the redirect's state %q is not the one sent", back.Get("state"))
	case back.Get("iss") != l.issuer:
		return "", fmt.Errorf("the redirect's iss %q, want %s", back.Get("iss"), l.issuer)
	case back.Get("code") == "":
		return "", fmt.Errorf("no code in the redirect: %v", back)
	}
	return back.Get("code"), nil
}

// exchange trades the authorization code for tokens.
func (p *purchaser) exchange(ctx context.Context, code string) (string, error) {
	l := p.link
	form := url.Values{"grant_type": {"authorization_code"}, "client_id": {l.clientID}, "code": {code},
		"redirect_uri": {l.redirect}, "code_verifier": {l.verifier}, "resource": {p.o.URL}}
	var tk struct {
		AccessToken  string `json:"access_token"`
		TokenType    string `json:"token_type"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int    `json:"expires_in"`
		Scope        string `json:"scope"`
		Error        string `json:"error_description"`
	}
	status, err := p.post(ctx, p.http, l.token, "application/x-www-form-urlencoded", form.Encode(), &tk)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK || tk.AccessToken == "" || !strings.EqualFold(tk.TokenType, "bearer") || tk.RefreshToken == "" {
		return "", fmt.Errorf("token: %d, type %q: %s", status, tk.TokenType, tk.Error)
	}
	if tk.ExpiresIn <= 0 || tk.ExpiresIn > 3600 {
		return "", fmt.Errorf("the access token lives %ds, want at most an hour", tk.ExpiresIn)
	}
	l.accessToken = tk.AccessToken
	return fmt.Sprintf("bearer token for %q, %ds, with a refresh token", tk.Scope, tk.ExpiresIn), nil
}

// linkAccount runs the linking steps; it reports whether the run may go on.
func (p *purchaser) linkAccount(ctx context.Context) bool {
	if !p.step("account: discover", func() (string, error) { return p.discover(ctx) }) {
		return false
	}
	if !p.step("account: register", func() (string, error) { return p.registerClient(ctx) }) {
		return false
	}
	var code string
	if !p.step("account: sign in", func() (d string, err error) {
		code, err = p.signIn(ctx, purchaseBuyer.Email)
		return "as " + purchaseBuyer.Email + ": email, one-time code by email, consent allowed; code and iss on the loopback redirect", err
	}) {
		return false
	}
	return p.step("account: token", func() (string, error) { return p.exchange(ctx, code) })
}

// myOrders checks, with the token, that list_my_orders shows the order the
// run placed, newest first.
func (p *purchaser) myOrders(ctx context.Context) (string, error) {
	var mine struct {
		Orders []struct {
			ID      string `json:"id"`
			Receipt struct {
				Email string `json:"email"`
			} `json:"receipt"`
		} `json:"orders"`
	}
	if _, err := p.call(ctx, "list_my_orders", map[string]any{}, &mine); err != nil {
		return "", err
	}
	if len(mine.Orders) == 0 || mine.Orders[0].ID != p.done.Order.ID {
		var ids []string
		for _, o := range mine.Orders {
			ids = append(ids, o.ID)
		}
		return "", fmt.Errorf("the buyer's orders %v do not start with the run's %s", ids, p.done.Order.ID)
	}
	return fmt.Sprintf("%d of the buyer's orders, the newest %s", len(mine.Orders), mine.Orders[0].ID), nil
}

// closeLink stops the loopback listener.
func (p *purchaser) closeLink() {
	if p.link != nil && p.link.srv != nil {
		_ = p.link.srv.Close()
	}
}

// withBearer sends the access token with every request of the MCP client.
type withBearer struct {
	token string
	next  http.RoundTripper
}

func (b withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

var errNoMailbox = errors.New("--account needs --smtp-capture ADDR: the run reads the sign-in code from the email the shop sends there")
