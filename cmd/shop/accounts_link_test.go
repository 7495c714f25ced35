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
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/contract"
	"shop/mcptest"
	"shop/notify/smtptest"
)

const linkNode = "../../accounts/linktest/node_modules/.bin/node"

// TestAccountLink links a buyer's account end to end as a host does: the
// TypeScript MCP SDK's OAuth client (accounts/linktest/run.mjs) discovers
// the shop's authorization server from /mcp's protected resource metadata,
// names itself by a client metadata document served on 127.0.0.1 over
// https (and, separately, registers dynamically, and links with a provider
// that has no state(), so that no state is sent), sends the buyer to the
// login with PKCE S256; headless Chromium types the email, the code the
// shop sent to a real SMTP server, and allows; the client exchanges the
// code, calls /mcp with the token and refreshes it. With the token, the
// buyer's orders include the one they placed as a guest with that email
// before linking, and a new session starts with the account's email;
// without one, an account tool answers the linking challenge in its
// _meta. /mcp answers 401 with the challenge for a token it does not know.
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
	guestOrders := map[string]string{}
	modes := []string{"cimd", "dcr", "stateless"}
	for _, mode := range modes {
		guestOrders[mode] = guestPurchase(t, shopURL, mode+"@example.com")
	}

	for _, mode := range modes {
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
			client, scopes := signInAndAllow(t, ctx, asked.Authorize, email, mail)
			if want := map[string]string{"cimd": "Link Test (127.0.0.1)", "dcr": "Link Test (dcr) (127.0.0.1)", "stateless": "Link Test (127.0.0.1)"}[mode]; !strings.Contains(client, want) {
				t.Errorf("the login page names the client %q, want %q", client, want)
			}
			if !strings.Contains(scopes, "see your orders") {
				t.Errorf("the consent page's scopes: %q", scopes)
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
			if (mode != "dcr") != (res.ClientID == docURL) {
				t.Errorf("%s linked as client %q", mode, res.ClientID)
			}
			if s := res.Schemes["search_products"]; len(s) == 0 || s[0].Type != "noauth" {
				t.Errorf("search_products' securitySchemes %+v, want noauth", s)
			}
			if status, _ := mcpWithToken(t, shopURL, res.AccessToken); status != http.StatusOK {
				t.Errorf("/mcp with the refreshed token: %d", status)
			}
			checkLinkedBuyer(t, shopURL, res.AccessToken, email, guestOrders[mode])
		})
	}

	t.Run("AccountToolWithoutToken", func(t *testing.T) {
		res := call(t, connect(t, shopURL), "list_my_orders", map[string]any{})
		challenges, _ := res.Meta["mcp/www_authenticate"].([]any)
		want := `Bearer resource_metadata="` + shopURL + `/.well-known/oauth-protected-resource/mcp"`
		if !res.IsError || len(challenges) != 1 || !strings.HasPrefix(fmt.Sprint(challenges[0]), want) {
			t.Fatalf("list_my_orders without a token: isError %v, _meta %v; want isError and the challenge %s…", res.IsError, res.Meta, want)
		}
	})

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

// guestPurchase buys a mug on /mcp as a guest with email, paying in the
// sandbox, and answers the order's id.
func guestPurchase(t *testing.T, shopURL, email string) string {
	t.Helper()
	cs := connect(t, shopURL)
	res := call(t, cs, "create_checkout_session", map[string]any{
		"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 1}},
		"buyer": map[string]any{"email": email},
		"fulfillment_address": map[string]any{"name": "Guest", "line_one": "1 Market St", "city": "San Francisco",
			"state": "CA", "country": "US", "postal_code": "94105"},
	})
	s := structured[contract.Session](t, res)
	if res.IsError || s.Status != contract.SessionReady {
		t.Fatalf("a guest's session: %s %s", s.Status, text(res))
	}
	res = call(t, cs, "complete_checkout", map[string]any{"checkout_session_id": s.ID,
		"payment_data": map[string]any{"token": "pm_card_visa", "provider": "stripe"}})
	if s = structured[contract.Session](t, res); res.IsError || s.Order == nil {
		t.Fatalf("a guest's payment: %s", text(res))
	}
	return s.Order.ID
}

// checkLinkedBuyer calls /mcp with a linked buyer's token: list_my_orders
// shows the order they placed as a guest with their email before linking,
// get_my_order answers it with its receipt link (which opens), and a new
// session starts with the account's email.
func checkLinkedBuyer(t *testing.T, shopURL, token, email, guestOrder string) {
	t.Helper()
	cs := connectWith(t, shopURL+"/mcp", &http.Client{Transport: bearer{token}})
	res := call(t, cs, "list_my_orders", map[string]any{})
	mine := structured[struct {
		Orders []contract.Order `json:"orders"`
	}](t, res)
	if res.IsError || len(mine.Orders) != 1 || mine.Orders[0].ID != guestOrder {
		t.Fatalf("list_my_orders with the token: %s; want the guest order %s", text(res), guestOrder)
	}
	res = call(t, cs, "get_my_order", map[string]any{"order_id": guestOrder})
	one := structured[struct {
		Order contract.Order `json:"order"`
	}](t, res)
	if res.IsError || one.Order.ID != guestOrder || one.Order.Receipt.Email != email || one.Order.PermalinkURL == "" {
		t.Fatalf("get_my_order %s: %s", guestOrder, text(res))
	}
	resp, err := http.Get(one.Order.PermalinkURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the receipt link %s: %s", one.Order.PermalinkURL, resp.Status)
	}
	res = call(t, cs, "create_checkout_session", map[string]any{"items": []map[string]any{{"id": "enamel-camp-mug-cream", "quantity": 1}}})
	if s := structured[contract.Session](t, res); res.IsError || s.Buyer == nil || s.Buyer.Email != email {
		t.Errorf("a linked buyer's new session: %s; want the buyer email %s filled in", text(res), email)
	}
}

// connectWith joins an MCP client (mcptest's) to endpoint through hc.
func connectWith(t *testing.T, endpoint string, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := mcptest.NewClient(t, "shop-link-test", nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// mcpWithToken calls search_products on /mcp with token as its bearer
// token (none when empty) and answers the status and WWW-Authenticate.
func mcpWithToken(t *testing.T, shopURL, token string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_products","arguments":{"query":"mug"}}}`
	status, challenge, _ := mcptest.PostBearer(t, shopURL+"/mcp", token, body)
	return status, challenge
}

// mailedCode waits for the sign-in email to email and reads its six-digit
// code (the shop's other emails, such as order confirmations, are skipped).
func mailedCode(t *testing.T, mail *smtptest.Server, email string) string {
	t.Helper()
	signIn := regexp.MustCompile(`sign in to .* is (\d{6})\b`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, m := range mail.Messages() {
			if len(m.To) != 1 || m.To[0] != email {
				continue
			}
			parsed, err := m.Parse()
			if err != nil {
				t.Fatalf("email to %s: %v", email, err)
			}
			if code := signIn.FindStringSubmatch(parsed.Parts["text/plain"]); code != nil {
				return code[1]
			}
		}
	}
	t.Fatalf("no sign-in code mailed to %s in 30s", email)
	return ""
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
