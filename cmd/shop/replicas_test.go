package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gorm.io/gorm"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
)

// The replica tests run two or three real `shop serve` processes, each on a
// port of its own, on one PostgreSQL database (docs/architecture.md): whatever
// replica a call reaches, a session is paid once, stock is sold once, and a
// payment left open by a replica that died is settled once by the others.
//
// Every replica shares one MCP client session between its callers (go-sdk
// client sessions multiplex concurrent calls); a client session per caller
// would cost each caller an initialize round trip and push the callers of one
// replica past its per-buyer rate limit (a burst of 150 from 127.0.0.1, which
// names no host user id).

// reconcileGrace is the --reconcile-grace of the replicas that settle a
// payment left open: the attempt must be that old before the reconciler's
// start-up pass takes it (its next pass is a minute later).
const reconcileGrace = time.Second

// The lines of readySession, whose stock a completion takes.
var readyLines = map[string]int64{"enamel-camp-mug-forest-green": 2, "stoneware-coffee-mug-16-oz": 1}

// TestReplicasCompleteOnce: 32 concurrent complete_checkout calls for one
// session, half through each replica, charge once and write one order; every
// caller gets that order or a retryable answer (in_progress, conflict).
func TestReplicasCompleteOnce(t *testing.T) {
	dsn := dbtest.DSN(t, database.Postgres)
	bin := buildShop(t)
	db := openDB(t, dsn)
	reps := replicas(t, bin, dsn, 2)

	cs := readySession(t, reps[0])
	before := stock(t, db, readyLines)

	const callers = 32
	type answer struct {
		replica int
		status  checkout.Status
		order   string
		code    string // of an error answer
		info    bool   // the session came with an info message (in progress: ask again)
	}
	answers := make([]answer, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			<-start
			a := &answers[i]
			a.replica = i % 2
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := reps[a.replica].CallTool(ctx, completeParams(cs.ID, "pm_card_visa"))
			if err != nil {
				t.Errorf("caller %d (replica %d): %v", i, a.replica, err)
				return
			}
			if res.IsError {
				a.code = errorCode(res)
				return
			}
			s, err := decode[checkout.Session](res)
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
				return
			}
			a.status, a.info = s.Status, hasType(s.Messages, checkout.MessageInfo)
			if s.Order != nil {
				a.order = s.Order.ID
			}
		})
	}
	close(start)
	wg.Wait()

	var order string
	tally := map[string]int{}
	for i, a := range answers {
		switch {
		case a.code == "conflict":
			tally["conflict"]++
		case a.code != "":
			t.Errorf("caller %d (replica %d): error %q, want the order or a retryable answer", i, a.replica, a.code)
		case a.status == checkout.Completed && a.order != "":
			tally["order"]++
			if order == "" {
				order = a.order
			}
			if a.order != order {
				t.Errorf("caller %d (replica %d) got order %s, another got %s", i, a.replica, a.order, order)
			}
		case a.status == checkout.InProgress && a.info:
			tally["in_progress"]++
		default:
			t.Errorf("caller %d (replica %d): %+v, want the order or a retryable answer", i, a.replica, a)
		}
	}
	t.Logf("answers: %v", tally)
	if order == "" {
		t.Fatal("no caller got the order")
	}
	for i, s := range reps {
		if got := session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": cs.ID})); got.Status != checkout.Completed || got.Order == nil || got.Order.ID != order {
			t.Errorf("replica %d: session %s, order %+v; want completed with %s", i, got.Status, got.Order, order)
		}
	}
	wantRows(t, dsn, map[string]int64{"orders": 1, "sandbox_charges": 1, "payment_attempts": 1, "stock_holds": 0})
	wantTaken(t, db, before, readyLines)
	wantAttempts(t, db, cs.ID, "succeeded")
	wantCreated(t, db, order)
}

// TestReplicasLastUnits: 20 buyers, half on each replica, race for the last
// 5 units of a variant: 5 sessions become ready and are paid, the others are
// told out_of_stock; 5 orders, 5 charges, stock 0.
func TestReplicasLastUnits(t *testing.T) {
	dsn := dbtest.DSN(t, database.Postgres)
	bin := buildShop(t)
	db := openDB(t, dsn)
	// The stock alone decides who holds (no share of it kept back from
	// buyers the shop cannot verify: docs/limits.md).
	reps := replicas(t, bin, dsn, 2, "--config", demoPolicyWith(t, "unverified_share_percent: 100"))

	const variant, units, buyers = "enamel-camp-mug-cream", 5, 20
	if res := db.Exec("UPDATE variants SET stock = ? WHERE id = ?", units, variant); res.Error != nil || res.RowsAffected != 1 {
		t.Fatalf("set the stock of %s: %v (%d rows)", variant, res.Error, res.RowsAffected)
	}

	type outcome struct {
		ready, paid, outOfStock bool
	}
	outcomes := make([]outcome, buyers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Go(func() {
			<-start
			o, s := &outcomes[i], reps[i%2]
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// Each buyer is a host's user of their own, as ChatGPT's are.
			meta := mcp.Meta{"openai/subject": fmt.Sprintf("user-%d", i)}
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: "create_checkout_session", Arguments: map[string]any{
				"items":               []map[string]any{{"id": variant, "quantity": 1}},
				"fulfillment_address": address,
				"buyer":               map[string]any{"name": fmt.Sprintf("Buyer %d", i), "email": fmt.Sprintf("buyer%d@example.com", i)},
			}})
			if err != nil || res.IsError {
				t.Errorf("buyer %d: create: %v %s", i, err, resultOf(res))
				return
			}
			cs, err := decode[checkout.Session](res)
			if err != nil {
				t.Errorf("buyer %d: %v", i, err)
				return
			}
			switch cs.Status {
			case checkout.Ready:
				o.ready = true
			case checkout.NotReady:
				if !hasCode(cs.Messages, "out_of_stock") {
					t.Errorf("buyer %d: not ready without out_of_stock: %+v", i, cs.Messages)
				}
				o.outOfStock = true
				return
			default:
				t.Errorf("buyer %d: created %s", i, cs.Status)
				return
			}
			res, err = s.CallTool(ctx, completeParams(cs.ID, "pm_card_visa"))
			if err != nil || res.IsError {
				t.Errorf("buyer %d: complete: %v %s", i, err, resultOf(res))
				return
			}
			paid, err := decode[checkout.Session](res)
			if err != nil {
				t.Errorf("buyer %d: %v", i, err)
				return
			}
			if paid.Status != checkout.Completed || paid.Order == nil {
				// A ready session holds its unit: paying it must succeed.
				t.Errorf("buyer %d: a session holding its unit was paid into %s %+v", i, paid.Status, paid.Messages)
				return
			}
			o.paid = true
		})
	}
	close(start)
	wg.Wait()

	var ready, paid, out int
	for _, o := range outcomes {
		ready, paid, out = ready+b2i(o.ready), paid+b2i(o.paid), out+b2i(o.outOfStock)
	}
	if ready != units || paid != units || out != buyers-units {
		t.Errorf("%d ready, %d paid, %d out of stock; want %d, %d, %d", ready, paid, out, units, units, buyers-units)
	}
	wantRows(t, dsn, map[string]int64{"orders": units, "sandbox_charges": units, "payment_attempts": units, "stock_holds": 0})
	if got := stock(t, db, map[string]int64{variant: 0})[variant]; got != 0 {
		t.Errorf("stock of %s: %d, want 0", variant, got)
	}
	var sold int64
	if err := db.Raw("SELECT COALESCE(SUM(quantity), 0) FROM order_lines WHERE variant_id = ?", variant).Scan(&sold).Error; err != nil || sold != units {
		t.Errorf("units of %s in orders: %d (%v), want %d", variant, sold, err, units)
	}
}

// TestReplicaKilledMidPayment: a replica dies between the charge and the
// order; another replica, started after it died, settles the payment by its
// reconciler's start-up pass: one order, one charge.
func TestReplicaKilledMidPayment(t *testing.T) {
	// The process ends itself at the fault point, right after the charge.
	t.Run("Fault", func(t *testing.T) {
		dsn := dbtest.DSN(t, database.Postgres)
		bin := buildShop(t)
		db := openDB(t, dsn)
		cs := payUntilFault(t, runShop(t, bin, dsn, []string{"SHOP_TEST_FAULT=after_charge"}))
		settleOnOther(t, bin, dsn, db, cs.ID)
	})

	// SIGKILL while the order's transaction is open: the test holds the
	// order-number counter, so the replica, charged, waits inside its
	// order's transaction; it is killed there.
	t.Run("SIGKILL", func(t *testing.T) {
		dsn := dbtest.DSN(t, database.Postgres)
		bin := buildShop(t)
		db := openDB(t, dsn)
		a := runShop(t, bin, dsn, nil)
		s := connect(t, "http://"+a.addr)
		cs := readySession(t, s)

		release := holdOrderNumbers(t, db)
		type reply struct {
			res *mcp.CallToolResult
			err error
		}
		paying := make(chan reply, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := s.CallTool(ctx, completeParams(cs.ID, "pm_card_visa"))
			paying <- reply{res, err}
		}()
		waitForLockWaiters(t, db, map[string]int64{"UPDATE counters": 1})
		// Charged, its order not written: the moment to die.
		wantRows(t, dsn, map[string]int64{"sandbox_charges": 1, "orders": 0})
		wantAttempts(t, db, cs.ID, "pending")

		if err := a.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-a.done:
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("replica ended with %v, want SIGKILL", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the replica did not end 10s after SIGKILL")
		}
		select {
		case r := <-paying:
			if r.err == nil {
				t.Fatalf("complete_checkout through the killed replica answered %s", resultOf(r.res))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("complete_checkout through the killed replica did not return")
		}
		// The killed replica's transaction cannot commit without it: once it
		// gets the counter, PostgreSQL finds its client gone and rolls back.
		release()
		settleOnOther(t, bin, dsn, db, cs.ID)
	})
}

// settleOnOther starts a replica after another died paying for session id,
// and waits for its reconciler to complete the order: one order, one charge.
func settleOnOther(t *testing.T, bin, dsn string, db *gorm.DB, id string) {
	t.Helper()
	wantRows(t, dsn, map[string]int64{"sandbox_charges": 1, "payment_attempts": 1})
	before := stock(t, db, readyLines)
	waitPastGrace(t, db, id)
	b := replicas(t, bin, dsn, 1, "--reconcile-grace", reconcileGrace.String())[0]
	got := waitCompleted(t, b, id)
	wantRows(t, dsn, map[string]int64{"orders": 1, "sandbox_charges": 1, "payment_attempts": 1, "stock_holds": 0})
	wantTaken(t, db, before, readyLines)
	wantAttempts(t, db, id, "succeeded")
	wantCreated(t, db, got.Order.ID)
}

// TestReplicaReconcilersSettleOnce: two replicas started after a crash both
// find the open attempt and settle it at the same time; one settles it, the
// other finds it settled. The test makes the race certain: it holds the
// order-number counter until one replica waits for it inside its order's
// transaction and the other waits for the attempt's row.
func TestReplicaReconcilersSettleOnce(t *testing.T) {
	dsn := dbtest.DSN(t, database.Postgres)
	bin := buildShop(t)
	db := openDB(t, dsn)
	cs := payUntilFault(t, runShop(t, bin, dsn, []string{"SHOP_TEST_FAULT=after_charge"}))
	wantRows(t, dsn, map[string]int64{"sandbox_charges": 1, "payment_attempts": 1, "orders": 0})
	before := stock(t, db, readyLines)

	release := holdOrderNumbers(t, db)
	waitPastGrace(t, db, cs.ID)
	reps := replicas(t, bin, dsn, 2, "--reconcile-grace", reconcileGrace.String())
	// Both reconcilers are settling the attempt now.
	waitForLockWaiters(t, db, map[string]int64{"UPDATE counters": 1, "UPDATE payment_attempts": 1})
	release()

	got := waitCompleted(t, reps[0], cs.ID)
	if other := waitCompleted(t, reps[1], cs.ID); other.Order.ID != got.Order.ID {
		t.Errorf("the replicas answer orders %s and %s", got.Order.ID, other.Order.ID)
	}
	wantRows(t, dsn, map[string]int64{"orders": 1, "sandbox_charges": 1, "payment_attempts": 1, "stock_holds": 0})
	wantTaken(t, db, before, readyLines)
	wantAttempts(t, db, cs.ID, "succeeded")
	wantCreated(t, db, got.Order.ID)
}

// replicas starts n `shop serve` processes on the database at dsn, each on
// a port of its own, and connects an MCP client session to each. They start
// one after another: the first migrates and seeds an empty database.
func replicas(t *testing.T, bin, dsn string, n int, flags ...string) []*mcp.ClientSession {
	t.Helper()
	out := make([]*mcp.ClientSession, n)
	for i := range out {
		out[i] = connect(t, "http://"+runShop(t, bin, dsn, nil, flags...).addr)
	}
	return out
}

// openDB opens the shop's database at dsn (a SQLite file or a PostgreSQL
// URL) for the test's own queries, closed when the test ends.
func openDB(t *testing.T, dsn string) *gorm.DB {
	t.Helper()
	db, err := database.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	return db
}

// wantRows checks the row counts of tables.
func wantRows(t *testing.T, dsn string, want map[string]int64) {
	t.Helper()
	var tables []string
	for table := range want {
		tables = append(tables, table)
	}
	got := rows(t, dsn, tables...)
	for _, table := range tables {
		if got[table] != want[table] {
			t.Errorf("%s: %d rows, want %d (all: %v)", table, got[table], want[table], got)
		}
	}
}

// stock reads the stock on hand of the variants named in lines.
func stock(t *testing.T, db *gorm.DB, lines map[string]int64) map[string]int64 {
	t.Helper()
	var ids []string
	for id := range lines {
		ids = append(ids, id)
	}
	var rows []struct {
		ID    string
		Stock int64
	}
	if err := db.Raw("SELECT id, stock FROM variants WHERE id IN ?", ids).Scan(&rows).Error; err != nil || len(rows) != len(ids) {
		t.Fatalf("stock of %v: %v (%d rows)", ids, err, len(rows))
	}
	out := map[string]int64{}
	for _, r := range rows {
		out[r.ID] = r.Stock
	}
	return out
}

// wantTaken checks that the stock of lines went down once from before.
func wantTaken(t *testing.T, db *gorm.DB, before, lines map[string]int64) {
	t.Helper()
	after := stock(t, db, lines)
	for id, n := range lines {
		if after[id] != before[id]-n {
			t.Errorf("stock of %s: %d, want %d - %d", id, after[id], before[id], n)
		}
	}
}

// wantAttempts checks the statuses of a session's payment attempts.
func wantAttempts(t *testing.T, db *gorm.DB, sessionID string, statuses ...string) {
	t.Helper()
	var got []string
	if err := db.Raw("SELECT status FROM payment_attempts WHERE session_id = ? ORDER BY attempt", sessionID).Scan(&got).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != strings.Join(statuses, ",") {
		t.Errorf("payment attempts of %s: %v, want %v", sessionID, got, statuses)
	}
}

// wantCreated checks that the audit log has one order.created event, for order.
func wantCreated(t *testing.T, db *gorm.DB, order string) {
	t.Helper()
	var events []struct{ OrderID string }
	if err := db.Raw("SELECT order_id FROM audit_events WHERE action = 'order.created'").Scan(&events).Error; err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].OrderID != order {
		t.Errorf("order.created events: %+v, want one for %s", events, order)
	}
}

// waitPastGrace waits until the open payment attempt of a session is older
// than reconcileGrace, so that a reconciler starting now settles it in its
// start-up pass. The attempt's time was written by the shop's clock, which
// is this machine's.
func waitPastGrace(t *testing.T, db *gorm.DB, sessionID string) {
	t.Helper()
	var updated []time.Time
	if err := db.Raw("SELECT updated_at FROM payment_attempts WHERE session_id = ? AND status = 'pending'", sessionID).Scan(&updated).Error; err != nil || len(updated) != 1 {
		t.Fatalf("the open payment attempt of %s: %v %v", sessionID, updated, err)
	}
	if d := time.Until(updated[0].Add(reconcileGrace + 50*time.Millisecond)); d > 0 {
		time.Sleep(min(d, reconcileGrace+time.Second))
	}
}

// waitCompleted polls get_checkout_session until the session is completed,
// for at most 20 seconds.
func waitCompleted(t *testing.T, s *mcp.ClientSession, id string) checkout.Session {
	t.Helper()
	var got checkout.Session
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got = session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": id}))
		if got.Status == checkout.Completed {
			if got.Order == nil {
				t.Fatalf("completed without an order: %+v", got)
			}
			return got
		}
	}
	t.Fatalf("session %s still %s after 20s: %+v", id, got.Status, got.Messages)
	return got
}

// holdOrderNumbers locks the order-number counter in a transaction of the
// test's own, so that an order's transaction waits for it; release (also run
// when the test ends) rolls the transaction back.
func holdOrderNumbers(t *testing.T, db *gorm.DB) (release func()) {
	t.Helper()
	tx := db.Begin()
	if tx.Error != nil {
		t.Fatal(tx.Error)
	}
	var n int64
	if err := tx.Raw("SELECT value FROM counters WHERE name = 'order_number' FOR UPDATE").Scan(&n).Error; err != nil {
		tx.Rollback()
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { tx.Rollback() }) }
	t.Cleanup(release)
	return release
}

// waitForLockWaiters waits, for at most 10 seconds, until the backends of
// the test's database waiting for a lock are, by how their query begins,
// exactly want.
func waitForLockWaiters(t *testing.T, db *gorm.DB, want map[string]int64) {
	t.Helper()
	var got map[string]int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var waiting []string
		err := db.Raw(`SELECT query FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`).Scan(&waiting).Error
		if err != nil {
			t.Fatal(err)
		}
		got = map[string]int64{}
		for _, q := range waiting {
			key := q // a query no prefix names counts under its own text
			for prefix := range want {
				if strings.HasPrefix(q, prefix) {
					key = prefix
				}
			}
			got[key]++
		}
		if maps.Equal(got, want) {
			return
		}
	}
	t.Fatalf("backends waiting for a lock: %v, want %v", got, want)
}

// decode reads a tool result's structured content, without failing the
// test, for callers on goroutines of their own.
func decode[T any](res *mcp.CallToolResult) (T, error) {
	var v T
	b, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		return v, fmt.Errorf("structuredContent %s: %w", b, err)
	}
	return v, nil
}

// errorCode is the code of a tool's error answer.
func errorCode(res *mcp.CallToolResult) string {
	e, err := decode[struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}](res)
	if err != nil || e.Error.Code == "" {
		return "unreadable: " + resultText(res)
	}
	return e.Error.Code
}

// resultOf describes a tool result, or nil, for a failure message.
func resultOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return fmt.Sprintf("(isError %t) %s", res.IsError, resultText(res))
}

func hasType(msgs []checkout.Message, typ checkout.MessageType) bool {
	for _, m := range msgs {
		if m.Type == typ {
			return true
		}
	}
	return false
}

func hasCode(msgs []checkout.Message, code string) bool {
	for _, m := range msgs {
		if m.Code == code {
			return true
		}
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
