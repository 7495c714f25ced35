package accounts_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/accounts"
	"shop/database/dbtest"
)

// randomText is n random URL-safe characters: what no database compresses.
func randomText(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// maximalRegistration is the largest registration the shop takes, made
// unique by i: five redirect URIs of 512 characters and a 100-character name.
func maximalRegistration(i int) string {
	uris := make([]string, 5)
	for k := range uris {
		u := "https://host.example/cb/"
		uris[k] = u + randomText(512-len(u))
	}
	name := fmt.Sprintf("%03d %s", i, strings.Repeat("n", 96))
	b, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": uris, "token_endpoint_auth_method": "none"})
	return string(b)
}

// registration is /oauth/register's answer.
type registration struct {
	status   int
	header   http.Header
	ClientID string `json:"client_id"`
	Error    string `json:"error"`
	Desc     string `json:"error_description"`
}

// registerFrom posts a registration from the client address addr.
func (e *env) registerFrom(t *testing.T, addr, body string) registration {
	t.Helper()
	resp, err := from(addr).Post(e.url+"/oauth/register", "application/json", strings.NewReader(body))
	status, text := read(t)(resp, err)
	reg := registration{status: status, header: resp.Header}
	if err := json.Unmarshal([]byte(text), &reg); err != nil {
		t.Fatalf("register: %d %s", status, text)
	}
	return reg
}

// TestRegistrationBudget: what a registration stores is bounded, the same
// metadata is stored once, one address registers a few clients an hour
// (200 maximal registrations grow the database by less than 256 KiB), and
// a client that never got an authorization is deleted after a day.
func TestRegistrationBudget(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)

		t.Run("Bounds", func(t *testing.T) {
			uris := func(n int, long int) string {
				var list []string
				for i := range n {
					list = append(list, fmt.Sprintf(`"https://a.example/cb%d"`, i))
				}
				if long > 0 {
					list = append(list, `"https://a.example/`+strings.Repeat("x", long)+`"`)
				}
				return "[" + strings.Join(list, ",") + "]"
			}
			for _, tc := range []struct {
				name, body, code, field string
			}{
				{"SixRedirectURIs", `{"redirect_uris":` + uris(6, 0) + `}`, "invalid_redirect_uri", "redirect_uris: at most 5"},
				{"LongRedirectURI", `{"redirect_uris":` + uris(1, 500) + `}`, "invalid_redirect_uri", "redirect_uris[1]: at most 512"},
				{"LongName", `{"client_name":"` + strings.Repeat("é", 101) + `","redirect_uris":` + uris(1, 0) + `}`, "invalid_client_metadata", "client_name: at most 100"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					reg := e.registerFrom(t, "192.0.2.1", tc.body)
					if reg.status != http.StatusBadRequest || reg.Error != tc.code || !strings.HasPrefix(reg.Desc, tc.field) {
						t.Errorf("%d %s %q, want 400 %s %q…", reg.status, reg.Error, reg.Desc, tc.code, tc.field)
					}
				})
			}
			if reg := e.registerFrom(t, "192.0.2.1", maximalRegistration(0)); reg.status != http.StatusCreated {
				t.Errorf("the largest registration allowed: %d %s", reg.status, reg.Desc)
			}
		})

		t.Run("SameMetadata", func(t *testing.T) {
			body := `{"client_name":"Again","redirect_uris":["https://again.example/cb"]}`
			first := e.registerFrom(t, "192.0.2.2", body)
			for i := range 12 { // more than an address's budget: the same client is no new one
				again := e.registerFrom(t, fmt.Sprintf("192.0.2.%d", 2+i%2), body)
				if again.status != http.StatusCreated || again.ClientID != first.ClientID {
					t.Fatalf("registration %d of the same metadata: %d %q, want %q", i+2, again.status, again.ClientID, first.ClientID)
				}
			}
			var rows int64
			db.Raw("SELECT COUNT(*) FROM oauth_clients WHERE name = 'Again'").Scan(&rows)
			if rows != 1 {
				t.Errorf("%d rows for one metadata, want 1", rows)
			}
		})

		t.Run("Flood", func(t *testing.T) {
			before := dbtest.Size(t, db)
			created := 0
			for i := range 200 {
				switch reg := e.registerFrom(t, "203.0.113.9", maximalRegistration(i)); reg.status {
				case http.StatusCreated:
					created++
				case http.StatusTooManyRequests:
					if after, err := strconv.Atoi(reg.header.Get("Retry-After")); err != nil || after < 3500 || after > 3600 || reg.Desc == "" {
						t.Fatalf("refusal %d without Retry-After or a description: %+v", i, reg)
					}
				default:
					t.Fatalf("registration %d: %d %s", i, reg.status, reg.Desc)
				}
			}
			if grown := dbtest.Size(t, db) - before; grown >= 256<<10 {
				t.Errorf("200 maximal registrations from one address grew the database by %d KiB", grown>>10)
			}
			if created != 10 {
				t.Errorf("%d registrations from one address in an hour, want 10", created)
			}
			if reg := e.registerFrom(t, "203.0.113.10", maximalRegistration(200)); reg.status != http.StatusCreated {
				t.Errorf("another address's registration: %d %s", reg.status, reg.Desc)
			}
		})

		t.Run("Concurrent", func(t *testing.T) {
			var created, same atomic.Int32
			ids := make(chan string, 40)
			var wg sync.WaitGroup
			for i := range 40 {
				wg.Go(func() {
					body := maximalRegistration(300 + i) // 20 new clients, then the same one 20 times
					if i >= 20 {
						body = `{"client_name":"Together","redirect_uris":["https://together.example/cb"]}`
					}
					reg := e.registerFrom(t, "203.0.113.77", body)
					switch {
					case i < 20 && reg.status == http.StatusCreated:
						created.Add(1)
					case i >= 20 && reg.status == http.StatusCreated:
						same.Add(1)
						ids <- reg.ClientID
					}
				})
			}
			wg.Wait()
			close(ids)
			distinct := map[string]bool{}
			for id := range ids {
				distinct[id] = true
			}
			// The one "Together" client may be among the address's ten.
			if n := created.Load(); n > 10 || n < 9 {
				t.Errorf("%d of 20 concurrent registrations from one address stored, want 10 (9 when Together took one)", n)
			}
			if len(distinct) > 1 {
				t.Errorf("20 concurrent registrations of the same metadata made %d clients", len(distinct))
			}
		})

		t.Run("UnusedDeletedAfterADay", func(t *testing.T) {
			unused := e.registerFrom(t, "192.0.2.3", `{"redirect_uris":["http://127.0.0.1:9/unused"]}`)
			used := e.registerFrom(t, "192.0.2.3", `{"redirect_uris":["http://127.0.0.1:9/used"]}`)
			_, challenge := pkce()
			e.authorize(t, used.ClientID, "http://127.0.0.1:9/used", challenge, "used@example.com")
			exists := func(id string) bool {
				var n int64
				db.Raw("SELECT COUNT(*) FROM oauth_clients WHERE id = ?", id).Scan(&n)
				return n == 1
			}
			ctx := context.Background()
			if _, err := accounts.Sweep(ctx, db, time.Now().Add(23*time.Hour)); err != nil || !exists(unused.ClientID) {
				t.Fatalf("within a day: the unused client is gone (%v)", err)
			}
			if _, err := accounts.Sweep(ctx, db, time.Now().Add(25*time.Hour)); err != nil || exists(unused.ClientID) || !exists(used.ClientID) {
				t.Fatalf("after a day: unused kept %v, used kept %v (%v); want false, true", exists(unused.ClientID), exists(used.ClientID), err)
			}
		})
	})
}

// TestAuthorizeStoresNothing: a stranger's authorization requests, with a
// state of 2 KB, store nothing (200 of them grow the database by less
// than 256 KiB); the state comes back unchanged at the end of a sign-in;
// the request a form carries is bound to the browser it was given to and
// expires with the sign-in (30 minutes).
func TestAuthorizeStoresNothing(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		state := randomText(2048)
		_, challenge := pkce()
		q := url.Values{"response_type": {"code"}, "client_id": {e.clientID}, "redirect_uri": {e.redirect},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"orders:read"},
			"state": {state}, "resource": {e.url + "/mcp"}}
		authorizeURL := e.url + "/oauth/authorize?" + q.Encode()

		t.Run("Flood", func(t *testing.T) {
			stranger := from("203.0.113.50")
			before := dbtest.Size(t, db)
			for i := range 200 {
				if status, page := read(t)(stranger.Get(authorizeURL)); status != http.StatusOK {
					t.Fatalf("authorization request %d: %d\n%s", i, status, page)
				}
			}
			if grown := dbtest.Size(t, db) - before; grown >= 256<<10 {
				t.Errorf("200 authorization requests grew the database by %d KiB", grown>>10)
			}
		})

		t.Run("StateEchoed", func(t *testing.T) {
			state := randomText(7000) + ` "<&>é%+` // the longest query the shop takes is 8 KiB
			q.Set("state", state)
			b, csrf := e.login(t, e.url+"/oauth/authorize?"+q.Encode(), "state@example.com")
			resp, err := b.PostForm(e.url+"/login/consent", url.Values{"csrf": {csrf}, "decision": {"allow"}})
			read(t)(resp, err)
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if got := loc.Query().Get("state"); got != state || loc.Query().Get("code") == "" {
				t.Fatalf("redirect %.200s…: the state came back changed (%d characters) or without a code", loc, len(got))
			}
		})

		t.Run("Expires", func(t *testing.T) {
			b := browser()
			_, page := read(t)(b.Get(authorizeURL))
			accounts.SetClock(e.as, func() time.Time { return time.Now().Add(31 * time.Minute) })
			defer accounts.SetClock(e.as, time.Now)
			status, _ := read(t)(b.PostForm(e.url+"/login/email", url.Values{"csrf": {csrfOf(t, page)}, "email": {"late@example.com"}}))
			if status != http.StatusBadRequest {
				t.Fatalf("a sign-in form after 31 minutes: %d, want 400", status)
			}
		})

		t.Run("BoundToBrowser", func(t *testing.T) {
			_, page := read(t)(browser().Get(authorizeURL))
			theirs := csrfOf(t, page)
			mine := browser()
			read(t)(mine.Get(authorizeURL)) // a flow cookie of its own
			status, _ := read(t)(mine.PostForm(e.url+"/login/email", url.Values{"csrf": {theirs}, "email": {"bound@example.com"}}))
			if status != http.StatusForbidden {
				t.Fatalf("another browser's sign-in form: %d, want 403", status)
			}
		})
	})
}

// TestSignInLockOut: a stranger asking for a buyer's sign-in codes from
// their own address exhausts that address's share only; the buyer, from
// theirs, still gets a code, until the email's own larger cap.
func TestSignInLockOut(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		ask := func(addr string) int {
			status, _ := e.startFlowIn(t, from(addr), "victim@example.com")
			return status
		}
		for i := range 5 {
			if status := ask("203.0.113.66"); status != http.StatusOK {
				t.Fatalf("the stranger's code %d: %d", i+1, status)
			}
		}
		if status := ask("203.0.113.66"); status != http.StatusTooManyRequests {
			t.Fatalf("the stranger's sixth code: %d, want 429", status)
		}
		if status := ask("198.51.100.20"); status != http.StatusOK {
			t.Fatalf("the buyer, from their own address, after the stranger's five: %d, want a code", status)
		}
		sent := 6
		for a := 1; sent < 20; a++ {
			for i := 0; i < 5 && sent < 20; i++ {
				if status := ask(fmt.Sprintf("192.0.2.%d", a)); status != http.StatusOK {
					t.Fatalf("code %d to the email: %d", sent+1, status)
				}
				sent++
			}
		}
		if status := ask("198.51.100.21"); status != http.StatusTooManyRequests {
			t.Fatalf("code %d to one email in an hour: %d, want 429", sent+1, status)
		}
	})
}
