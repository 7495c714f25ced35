package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"shop/notify/smtptest"
)

// The buyer's side of linking an account in the browser tests: the shop's
// login pages played in Chromium, and (for tests that need a linked
// buyer's token rather than a test of the client) a plain OAuth client in
// Go that links as a host does, through the shop's real authorization
// server: no token is made any other way.

// signInAndAllow plays the buyer in the browser tab ctx on the shop's login
// pages: it opens authorize, types email and the code the shop mailed there,
// ticks payments when the consent asks for it unticked, and allows. It answers the client the email page names and the scopes the
// consent page lists; the browser then follows the redirect to the client.
func signInAndAllow(t *testing.T, ctx context.Context, authorize, email string, mail *smtptest.Server) (client, scopes string) {
	t.Helper()
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	if err := chromedp.Do(ctx, chromedp.Navigate(authorize), chromedp.WaitVisible(css("#email"))); err != nil {
		t.Fatalf("email page: %v", err)
	}
	client, err := chromedp.Run(ctx, chromedp.Text(css("main p")))
	if err != nil {
		t.Fatalf("email page: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(css("#email"), email), chromedp.Click(css("#email-submit")),
		chromedp.WaitVisible(css("#code"))); err != nil {
		t.Fatalf("email page: %v", err)
	}
	code := mailedCode(t, mail, email)
	if err := chromedp.Do(ctx, chromedp.SendKeys(css("#code"), code), chromedp.Click(css("#code-submit")),
		chromedp.WaitVisible(css("#allow"))); err != nil {
		t.Fatalf("code page: %v", err)
	}
	if scopes, err = chromedp.Run(ctx, chromedp.Text(css("#scopes"))); err != nil {
		t.Fatalf("consent page: %v", err)
	}
	tick := `(b => { if (b && !b.checked) b.click(); })(document.getElementById("scope-payments"))`
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](tick), chromedp.Click(css("#allow"))); err != nil {
		t.Fatalf("consent page: %v", err)
	}
	return client, scopes
}

// getJSONDoc fetches a JSON document into v.
func getJSONDoc(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// postJSONDoc posts body (JSON, or a form when it is url.Values) to u and
// decodes the answer into v, answering the status.
func postJSONDoc(t *testing.T, u string, body any, v any) int {
	t.Helper()
	var resp *http.Response
	var err error
	if form, ok := body.(url.Values); ok {
		resp, err = http.PostForm(u, form)
	} else {
		b, _ := json.Marshal(body)
		resp, err = http.Post(u, "application/json", strings.NewReader(string(b)))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		t.Fatalf("POST %s: %s: %v", u, resp.Status, err)
	}
	return resp.StatusCode
}

// linkBuyer links the account of email with the shop at shopURL as a host
// does and answers its access token for scope: it discovers the
// authorization server from /mcp's protected resource metadata, registers
// dynamically with a loopback redirect, sends the buyer to the
// authorization endpoint with PKCE S256 and the resource, where the buyer
// signs in and allows in a new tab of parent's browser (the code mailed to
// mail), and exchanges the code the redirect brings.
func linkBuyer(t *testing.T, parent context.Context, shopURL, email, scope string, mail *smtptest.Server) string {
	t.Helper()
	resource := shopURL + "/mcp"
	var prm struct {
		Servers []string `json:"authorization_servers"`
	}
	getJSONDoc(t, shopURL+"/.well-known/oauth-protected-resource/mcp", &prm)
	if len(prm.Servers) == 0 {
		t.Fatal("the protected resource metadata names no authorization server")
	}
	var as struct {
		Authorize string `json:"authorization_endpoint"`
		Token     string `json:"token_endpoint"`
		Register  string `json:"registration_endpoint"`
	}
	getJSONDoc(t, strings.TrimRight(prm.Servers[0], "/")+"/.well-known/oauth-authorization-server", &as)

	landed := make(chan url.Values, 1)
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r) // the browser's favicon.ico
			return
		}
		select {
		case landed <- r.URL.Query():
		default:
		}
		io.WriteString(w, "linked: you can close this tab")
	}))
	t.Cleanup(callback.Close)
	redirect := callback.URL + "/callback"
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if status := postJSONDoc(t, as.Register, map[string]any{"client_name": "Widget Test Host", "redirect_uris": []string{redirect},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"token_endpoint_auth_method": "none"}, &reg); status != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("registration: %d, client %q", status, reg.ClientID)
	}

	verifier, state := rand.Text()+rand.Text(), rand.Text() // PKCE wants 43 characters or more

	sum := sha256.Sum256([]byte(verifier))
	authorize := as.Authorize + "?" + url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect},
		"scope": {scope}, "state": {state}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"}, "resource": {resource}}.Encode()
	ctx, cancel := chromedp.NewContext(parent)
	defer cancel()
	signInAndAllow(t, ctx, authorize, email, mail)
	var back url.Values
	select {
	case back = <-landed:
	case <-time.After(30 * time.Second):
		t.Fatal("the browser never reached the host's callback")
	}
	if back.Get("state") != state || back.Get("code") == "" {
		t.Fatalf("the redirect brought %v, want a code and the state sent", back)
	}

	var tk struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
		Error       string `json:"error_description"`
	}
	status := postJSONDoc(t, as.Token, url.Values{"grant_type": {"authorization_code"}, "client_id": {reg.ClientID}, "code": {back.Get("code")},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {resource}}, &tk)
	granted := strings.Fields(tk.Scope)
	slices.Sort(granted)
	want := strings.Fields(scope)
	slices.Sort(want)
	if status != http.StatusOK || tk.AccessToken == "" || !slices.Equal(granted, want) {
		t.Fatalf("token: %d, scope %q (want %q): %s", status, tk.Scope, scope, tk.Error)
	}
	return tk.AccessToken
}

// linkedEmail is an email no other test links, for a buyer of test t.
func linkedEmail(t *testing.T) string {
	return fmt.Sprintf("%s@example.com", strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
}
