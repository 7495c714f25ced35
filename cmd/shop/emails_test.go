package main

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/notify/smtptest"
)

// quiet is how long a test waits, after the emails it expects arrived, for
// one that should not: a few of the workers' one-second rounds.
const quiet = 3 * time.Second

// TestEmails runs the real binary with an SMTP server on 127.0.0.1: a
// purchase's confirmation arrives once, also when the process ends right
// after the order was written and starts again, and when two replicas share
// the database.
func TestEmails(t *testing.T) {
	bin := buildShop(t)

	t.Run("Purchase", func(t *testing.T) {
		srv := smtptest.Start(t)
		p := runShop(t, bin, t.TempDir()+"/shop.db", []string{"SHOP_SMTP_URL=" + srv.URL})
		if want := "emails=\"from Northwind Goods <orders@northwind.example> through " + srv.URL + "\""; !strings.Contains(p.startLine, want) {
			t.Errorf("start line %q lacks %q", p.startLine, want)
		}
		s := connect(t, "http://"+p.addr)
		cs := readySession(t, s)
		done := session(t, complete(t, s, cs.ID, "pm_card_visa"))
		if done.Status != checkout.Completed {
			t.Fatalf("%s %+v", done.Status, done.Messages)
		}
		confirmationOnce(t, srv, done)
	})

	t.Run("Off", func(t *testing.T) {
		p := runShop(t, bin, t.TempDir()+"/shop.db", nil)
		if want := `emails="off: SHOP_SMTP_URL is unset"`; !strings.Contains(p.startLine, want) {
			t.Errorf("start line %q lacks %q", p.startLine, want)
		}
	})

	t.Run("CrashAfterOrder", func(t *testing.T) {
		srv := smtptest.Start(t)
		db := t.TempDir() + "/shop.db"
		cs := payUntilFault(t, runShop(t, bin, db, []string{"SHOP_SMTP_URL=" + srv.URL, "SHOP_TEST_FAULT=after_order"}))
		if counts := rows(t, db, "orders", "emails"); counts["orders"] != 1 || counts["emails"] != 1 {
			t.Fatalf("after the crash: %v; want the order and its email written", counts)
		}
		p := runShop(t, bin, db, []string{"SHOP_SMTP_URL=" + srv.URL})
		got := session(t, call(t, connect(t, "http://"+p.addr), "get_checkout_session", map[string]any{"checkout_session_id": cs.ID}))
		confirmationOnce(t, srv, got)
	})

	t.Run("TwoReplicas", func(t *testing.T) {
		srv := smtptest.Start(t)
		dsn := dbtest.DSN(t, database.Postgres)
		env := []string{"SHOP_SMTP_URL=" + srv.URL}
		a, b := runShop(t, bin, dsn, env), runShop(t, bin, dsn, env)
		const n = 4
		for i := range n {
			s := connect(t, "http://"+[]*process{a, b}[i%2].addr)
			cs := readySession(t, s)
			if done := session(t, complete(t, s, cs.ID, "pm_card_visa")); done.Status != checkout.Completed {
				t.Fatalf("%s %+v", done.Status, done.Messages)
			}
		}
		srv.Wait(t, n, 15*time.Second)
		time.Sleep(quiet)
		seen := srv.Subjects(t)
		if len(seen) != n || srv.Tries() != n {
			t.Fatalf("%d distinct confirmations in %d tries, want %d in %d: %v", len(seen), srv.Tries(), n, n, seen)
		}
	})
}

// confirmationOnce waits for the confirmation of the completed session's
// order, checks it names the order, and that no second one follows.
func confirmationOnce(t *testing.T, srv *smtptest.Server, done checkout.Session) {
	t.Helper()
	if done.Order == nil {
		t.Fatalf("no order: %+v", done)
	}
	srv.Wait(t, 1, 15*time.Second)
	time.Sleep(quiet)
	got := srv.Messages()
	if len(got) != 1 || srv.Tries() != 1 {
		t.Fatalf("%d messages in %d tries, want 1", len(got), srv.Tries())
	}
	p, err := got[0].Parse()
	if err != nil {
		t.Fatal(err)
	}
	number := done.Order.Receipt.Number
	if subj := p.Header.Get("Subject"); !strings.Contains(subj, "your order "+strconv.FormatInt(number, 10)+" is confirmed") {
		t.Errorf("subject %q", subj)
	}
	if to := strings.Join(got[0].To, ","); to != "ada@example.com" {
		t.Errorf("sent to %s", to)
	}
	// The receipt's link, from whichever process wrote the order (a restarted one listens elsewhere).
	link, err := url.Parse(done.Order.PermalinkURL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Parts["text/plain"], link.RequestURI()) {
		t.Errorf("the confirmation lacks the receipt's link %s:\n%s", link.RequestURI(), p.Parts["text/plain"])
	}
}
