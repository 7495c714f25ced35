package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"shop/notify/smtptest"
)

const linkNode = "../../accounts/linktest/node_modules/.bin/node"

// TestAccountLink links a buyer's account end to end as a host does: the
// TypeScript MCP SDK's OAuth client (accounts/linktest/run.mjs) discovers
// the shop's authorization server from /mcp's protected resource metadata,
// names itself by a client metadata document served on 127.0.0.1 over
// https (and, separately, registers dynamically), sends the buyer to the
// login with PKCE S256; headless Chromium types the email, the code the
// shop sent to a real SMTP server, and allows; the client exchanges the
// code, calls /mcp with the token and refreshes it. /mcp answers 401 with
// the challenge for a token it does not know.
func TestAccountLink(t *testing.T) {
	chromium := needChromium(t)
	if _, err := os.Stat(linkNode); err != nil {
		missingTool(t, "no Node in accounts/linktest (cd accounts/linktest && npm ci)")
	}
	bin := buildShop(t)
	mail := smtptest.Start(t)

	// The host's callback (plain http on 127.0.0.1, where Chromium lands)
	// and its client metadata document (https on 127.0.0.1, as the SDK
	// requires; the shop trusts the test server's certificate).
	landed := make(chan string, 1)
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r) // the browser's favicon.ico
			return
		}
		select {
		case landed <- "http://" + r.Host + r.URL.String():
		default:
		}
		io.WriteString(w, "linked: you can close this tab")
	}))
	t.Cleanup(callback.Close)
	redirect := callback.URL + "/callback"
	var docURL string
	docs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		fmt.Fprintf(w, `{"client_id":%q,"client_name":"Link Test","redirect_uris":[%q],"token_endpoint_auth_method":"none"}`, docURL, redirect)
	}))
	t.Cleanup(docs.Close)
	docURL = docs.URL + "/client.json"
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: docs.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	p := runShop(t, bin, filepath.Join(t.TempDir(), "shop.db"), []string{
		"SHOP_SMTP_URL=" + mail.URL, "SHOP_ACCOUNTS_TEST_ALLOW_LOOPBACK=true", "SSL_CERT_FILE=" + ca})
	shopURL := "http://" + p.addr
	bctx := browser(t, chromium)

	for i, mode := range []string{"cimd", "dcr"} {
		t.Run(mode, func(t *testing.T) {
			email := mode + "@example.com"
			cmd := exec.Command(linkNode, "../../accounts/linktest/run.mjs", shopURL, mode, docURL, redirect)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			out := bufio.NewScanner(stdout)
			var asked struct{ Authorize string }
			if !out.Scan() || json.Unmarshal(out.Bytes(), &asked) != nil || asked.Authorize == "" {
				t.Fatalf("no authorization URL from run.mjs: %q\n%s", out.Text(), stderr.String())
			}

			ctx, cancel := chromedp.NewContext(bctx)
			defer cancel()
			ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
			defer cancelTimeout()
			css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
			if err := chromedp.Do(ctx, chromedp.Navigate(asked.Authorize), chromedp.WaitVisible(css("#email"))); err != nil {
				t.Fatalf("email page: %v", err)
			}
			client, err := chromedp.Run(ctx, chromedp.Text(css("main p")))
			if want := map[string]string{"cimd": "Link Test (127.0.0.1)", "dcr": "Link Test (dcr) (127.0.0.1)"}[mode]; err != nil || !strings.Contains(client, want) {
				t.Errorf("the login page names the client %q (%v), want %q", client, err, want)
			}
			if err := chromedp.Do(ctx, chromedp.SendKeys(css("#email"), email), chromedp.Click(css("#email-submit")),
				chromedp.WaitVisible(css("#code"))); err != nil {
				t.Fatalf("email page: %v", err)
			}
			code := mailedCode(t, mail, i+1, email)
			if err := chromedp.Do(ctx, chromedp.SendKeys(css("#code"), code), chromedp.Click(css("#code-submit")),
				chromedp.WaitVisible(css("#allow"))); err != nil {
				t.Fatalf("code page: %v", err)
			}
			scopes, err := chromedp.Run(ctx, chromedp.Text(css("#scopes")))
			if err != nil || !strings.Contains(scopes, "see your orders") {
				t.Errorf("the consent page's scopes: %q %v", scopes, err)
			}
			if err := chromedp.Do(ctx, chromedp.Click(css("#allow"))); err != nil {
				t.Fatalf("consent page: %v", err)
			}
			var back string
			select {
			case back = <-landed:
			case <-time.After(30 * time.Second):
				t.Fatal("the browser never reached the host's callback")
			}
			fmt.Fprintln(stdin, back)
			if !out.Scan() {
				t.Fatalf("run.mjs said nothing more: %v\n%s", cmd.Wait(), stderr.String())
			}
			var res struct {
				OK          bool   `json:"ok"`
				AccessToken string `json:"access_token"`
				ClientID    string `json:"client_id"`
				Schemes     map[string][]struct {
					Type string `json:"type"`
				} `json:"schemes"`
			}
			if err := json.Unmarshal(out.Bytes(), &res); err != nil || !res.OK {
				t.Fatalf("run.mjs: %s %v\n%s", out.Text(), err, stderr.String())
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("run.mjs: %v\n%s", err, stderr.String())
			}
			if (mode == "cimd") != (res.ClientID == docURL) {
				t.Errorf("%s linked as client %q", mode, res.ClientID)
			}
			if s := res.Schemes["search_products"]; len(s) == 0 || s[0].Type != "noauth" {
				t.Errorf("search_products' securitySchemes %+v, want noauth", s)
			}
			if status, _ := mcpWithToken(t, shopURL, res.AccessToken); status != http.StatusOK {
				t.Errorf("/mcp with the refreshed token: %d", status)
			}
		})
	}

	t.Run("InvalidToken", func(t *testing.T) {
		status, challenge := mcpWithToken(t, shopURL, "not-a-token")
		want := regexp.MustCompile(`^Bearer resource_metadata="` + regexp.QuoteMeta(shopURL) + `/\.well-known/oauth-protected-resource/mcp", scope="[^"]+"`)
		if status != http.StatusUnauthorized || !want.MatchString(challenge) {
			t.Fatalf("/mcp with an unknown token: %d %q", status, challenge)
		}
		if status, _ := mcpWithToken(t, shopURL, ""); status != http.StatusOK {
			t.Fatalf("/mcp without a token (a guest): %d", status)
		}
	})
}

// mcpWithToken calls search_products on /mcp with token as its bearer
// token (none when empty) and answers the status and WWW-Authenticate.
func mcpWithToken(t *testing.T, shopURL, token string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_products","arguments":{"query":"mug"}}}`
	req, _ := http.NewRequest("POST", shopURL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// mailedCode waits for the n-th email and reads the six-digit code sent to email.
func mailedCode(t *testing.T, mail *smtptest.Server, n int, email string) string {
	t.Helper()
	msgs := mail.Wait(t, n, 30*time.Second)
	m := msgs[n-1]
	parsed, err := m.Parse()
	if err != nil || len(m.To) != 1 || m.To[0] != email {
		t.Fatalf("email %d to %v: %v", n, m.To, err)
	}
	code := regexp.MustCompile(`\b(\d{6})\b`).FindStringSubmatch(parsed.Parts["text/plain"])
	if code == nil {
		t.Fatalf("no code in %q", parsed.Parts["text/plain"])
	}
	return code[1]
}

// needChromium is the browser, or skips (fails under CI=true) without it.
func needChromium(t *testing.T) string {
	t.Helper()
	if raceDetector {
		t.Skip("the browser tests run without -race: chromedp races with itself")
	}
	chromium := chromiumPath()
	if _, err := os.Stat(chromium); err != nil {
		missingTool(t, "no Chromium at "+chromium)
	}
	return chromium
}

func missingTool(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true requires it (./test.sh installs it)", what)
	}
	t.Skipf("%s: skipping", what)
}
