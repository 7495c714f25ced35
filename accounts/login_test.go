package accounts_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/accounts"
	"shop/database/dbtest"
	"shop/notify"
)

// startFlow opens the login page and asks for a code for email, answering
// the status of that answer and its page.
func (e *env) startFlow(t *testing.T, email string) (int, string) {
	t.Helper()
	return e.startFlowIn(t, browser(), email)
}

// startFlowIn is startFlow in the browser b.
func (e *env) startFlowIn(t *testing.T, b *http.Client, email string) (int, string) {
	t.Helper()
	_, challenge := pkce()
	_, page := read(t)(b.Get(e.authorizeURL(e.clientID, e.redirect, challenge, e.url+"/mcp")))
	return read(t)(b.PostForm(e.url+"/login/email", url.Values{"csrf": {csrfOf(t, page)}, "email": {email}}))
}

// TestLoginLimits: codes are rate-limited per email and per address, and
// the page a code is asked from says the same whether or not the email has
// an account.
func TestLoginLimits(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)

		t.Run("PerEmail", func(t *testing.T) {
			for i := range 5 {
				if status, page := e.startFlow(t, "many@example.com"); status != http.StatusOK {
					t.Fatalf("code %d: %d\n%s", i+1, status, page)
				}
			}
			if status, page := e.startFlow(t, "many@example.com"); status != http.StatusTooManyRequests || !strings.Contains(page, "Too many codes") {
				t.Fatalf("sixth code to one email: %d", status)
			}
		})

		t.Run("PerAddress", func(t *testing.T) {
			sent := 5 // by PerEmail, from the same address
			for ; sent < 20; sent++ {
				if status, _ := e.startFlow(t, "addr"+string(rune('a'+sent))+"@example.com"); status != http.StatusOK {
					t.Fatalf("code %d from one address: %d", sent+1, status)
				}
			}
			if status, _ := e.startFlow(t, "fresh@example.com"); status != http.StatusTooManyRequests {
				t.Fatalf("code %d from one address: %d", sent+1, status)
			}
		})

		t.Run("SamePageForEveryEmail", func(t *testing.T) {
			db.Exec("DELETE FROM login_flows") // a new hour, as far as the limits know
			if _, err := accounts.Ensure(context.Background(), db, "known@example.com"); err != nil {
				t.Fatal(err)
			}
			_, known := e.startFlow(t, "known@example.com")
			_, unknown := e.startFlow(t, "unknown@example.com")
			clean := func(page, email string) string {
				return csrfRE.ReplaceAllString(strings.ReplaceAll(page, email, "EMAIL"), "")
			}
			if clean(known, "known@example.com") != clean(unknown, "unknown@example.com") {
				t.Errorf("the code page differs for an email with an account:\n%s\n---\n%s", known, unknown)
			}
		})
	})
}

// TestDeleteAccountRevokes: deleting an account deletes its grants, so its
// tokens stop working.
func TestDeleteAccountRevokes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		verifier, challenge := pkce()
		code := e.authorize(t, e.clientID, e.redirect, challenge, "gone@example.com")
		_, tk := e.exchange(t, e.clientID, e.redirect, code, verifier)
		b, err := e.as.Verify(ctx, tk.AccessToken)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("DELETE FROM accounts WHERE id = ?", b.AccountID).Error; err != nil {
			t.Fatal(err)
		}
		var left int64
		db.Raw("SELECT COUNT(*) FROM oauth_grants WHERE account_id = ?", b.AccountID).Scan(&left)
		if _, err := e.as.Verify(ctx, tk.AccessToken); !errors.Is(err, accounts.ErrInvalidToken) || left != 0 {
			t.Fatalf("after deleting the account: %v, %d grants left", err, left)
		}
		if status, next := e.refresh(t, e.clientID, tk.RefreshToken); status != http.StatusBadRequest || next.AccessToken != "" {
			t.Fatalf("refresh after deleting the account: %d", status)
		}
	})
}

// TestSweep: expired login flows and grants are deleted, live ones kept;
// a sign-in code's email goes when its code expires, other emails stay.
func TestSweep(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		verifier, challenge := pkce()
		code := e.authorize(t, e.clientID, e.redirect, challenge, "sweep@example.com")
		e.exchange(t, e.clientID, e.redirect, code, verifier)
		e.startFlow(t, "open@example.com")
		other := notify.Email{Key: "ord_sweep/confirmation", Ref: "ord_sweep", Kind: "confirmation", To: "sweep@example.com",
			Subject: "Your order", Text: "Thank you.", HTML: "<p>Thank you.</p>"}
		if err := notify.Enqueue(context.Background(), db, other); err != nil {
			t.Fatal(err)
		}
		count := func(table string) (n int64) { db.Table(table).Count(&n); return n }
		codeEmails := func() (n int64) { db.Table("emails").Where("kind = 'login_code'").Count(&n); return n }
		flows, grants, mails := count("login_flows"), count("oauth_grants"), codeEmails()
		if mails == 0 {
			t.Fatal("no sign-in code email to sweep")
		}
		if n, err := accounts.Sweep(context.Background(), db, time.Now()); err != nil || n != 0 {
			t.Fatalf("sweep now: %d %v", n, err)
		}
		soon, err := accounts.Sweep(context.Background(), db, time.Now().Add(11*time.Minute))
		if err != nil || codeEmails() != 0 || count("emails") != 1 {
			t.Fatalf("sweep after the codes' ten minutes: %d code emails and %d emails left, want 0 and the order's (%v)", codeEmails(), count("emails"), err)
		}
		later, err := accounts.Sweep(context.Background(), db, time.Now().Add(31*24*time.Hour))
		if n := soon + later; err != nil || n != flows+grants+mails || count("login_flows")+count("oauth_grants") != 0 {
			t.Fatalf("sweeps: %d rows of %d flows, %d grants and %d code emails (%v)", n, flows, grants, mails, err)
		}
	})
}

// TestLoginCodeExpires: a sign-in code is refused after its ten minutes,
// even typed right.
func TestLoginCodeExpires(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		e := newEnv(t, db)
		_, challenge := pkce()
		b := browser()
		_, page := read(t)(b.Get(e.authorizeURL(e.clientID, e.redirect, challenge, e.url+"/mcp")))
		csrf := csrfOf(t, page)
		read(t)(b.PostForm(e.url+"/login/email", url.Values{"csrf": {csrf}, "email": {"late@example.com"}}))
		db.Exec("UPDATE login_flows SET code_expires_at = ? WHERE email = 'late@example.com'", time.Now().Add(-time.Second).UTC())
		status, page := read(t)(b.PostForm(e.url+"/login/code", url.Values{"csrf": {csrf}, "code": {e.lastCode(t, "late@example.com")}}))
		if status != http.StatusForbidden || strings.Contains(page, `value="allow"`) {
			t.Fatalf("an expired code: %d", status)
		}
	})
}
