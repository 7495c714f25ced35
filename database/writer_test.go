package database_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
)

// job is a transaction to queue in a group: its function, and the
// context its Transact runs on (nil: context.Background()).
type job struct {
	ctx context.Context
	fn  func(tx *gorm.DB) error
}

// outcome is what a queued transaction's Transact returned or panicked
// with, how many times its function ran, and how many times what it
// registered with AfterCommit ran: once when it committed, never otherwise.
type outcome struct {
	err     error
	panic   any
	runs    int
	commits int
}

// group holds the writer with a first transaction while others queue
// behind it, so that they run in its group (writer.go), then lets it go.
// fns are the queued transactions' functions; it answers what each one's
// Transact returned or panicked with, and how many times each ran.
func group(t *testing.T, db *gorm.DB, fns []func(tx *gorm.DB) error) (errs []error, panics []any, runs []int) {
	t.Helper()
	jobs := make([]job, len(fns))
	for i, fn := range fns {
		jobs[i] = job{fn: fn}
	}
	out := groupJobs(t, db, jobs, nil)
	errs, panics, runs = make([]error, len(fns)), make([]any, len(fns)), make([]int, len(fns))
	for i, o := range out {
		errs[i], panics[i], runs[i] = o.err, o.panic, o.runs
		if want := 0; o.err == nil && o.panic == nil {
			if want = 1; o.commits != want {
				t.Errorf("transaction %d committed, and what it registered ran %d times; want once", i, o.commits)
			}
		} else if o.commits != 0 {
			t.Errorf("transaction %d failed (%v, %v), and what it registered ran %d times; want never", i, o.err, o.panic, o.commits)
		}
	}
	return errs, panics, runs
}

// groupJobs is group's work: queued is called, when given, once every job
// is waiting for the writer and before the first lets it go.
func groupJobs(t *testing.T, db *gorm.DB, jobs []job, queued func()) []outcome {
	t.Helper()
	ctx := context.Background()
	held, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	var once sync.Once // it runs again when the group fails
	var firstCommits atomic.Int64
	go func() {
		first <- database.Transact(ctx, db, func(tx *gorm.DB) error {
			once.Do(func() { close(held) })
			<-release
			database.AfterCommit(tx, func() { firstCommits.Add(1) })
			return tx.Exec("INSERT INTO marks (name) VALUES ('first')").Error
		})
	}()
	<-held
	out := make([]outcome, len(jobs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, j := range jobs {
		jctx := j.ctx
		if jctx == nil {
			jctx = ctx
		}
		wg.Go(func() {
			defer func() { out[i].panic = recover() }()
			out[i].err = database.Transact(jctx, db, func(tx *gorm.DB) error {
				mu.Lock()
				out[i].runs++
				mu.Unlock()
				database.AfterCommit(tx, func() { out[i].commits++ })
				return j.fn(tx)
			})
		})
	}
	time.Sleep(50 * time.Millisecond) // for them to reach their wait
	if queued != nil {
		queued()
	}
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatalf("the first transaction: %v", err)
	}
	if n := firstCommits.Load(); n != 1 {
		t.Errorf("the first transaction committed, and what it registered ran %d times; want once", n)
	}
	return out
}

func marksDB(t *testing.T) *gorm.DB {
	t.Helper()
	db := dbtest.Open(t, database.SQLite)
	if err := db.Exec("CREATE TABLE marks (name TEXT PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	return db
}

func marks(t *testing.T, db *gorm.DB) map[string]bool {
	t.Helper()
	var names []string
	if err := db.Raw("SELECT name FROM marks").Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
}

func insertMark(name string) func(tx *gorm.DB) error {
	return func(tx *gorm.DB) error { return tx.Exec("INSERT INTO marks (name) VALUES (?)", name).Error }
}

// TestSQLiteGroupMemberFails: of the transactions that commit together on
// SQLite's writer, one that fails takes nothing of the others' with it and
// leaves nothing of its own: each that ran with it runs again alone, the
// failed one fails alone, and every other commits once.
func TestSQLiteGroupMemberFails(t *testing.T) {
	db := marksDB(t)
	refused := errors.New("refused")
	fns := []func(tx *gorm.DB) error{insertMark("a"), insertMark("b"), func(tx *gorm.DB) error {
		if err := tx.Exec("INSERT INTO marks (name) VALUES ('failed')").Error; err != nil {
			return err
		}
		return refused
	}, insertMark("c")}
	errs, _, runs := group(t, db, fns)
	for i, err := range errs {
		switch {
		case i == 2 && !errors.Is(err, refused):
			t.Errorf("the failing transaction: %v; want its own error", err)
		case i != 2 && err != nil:
			t.Errorf("transaction %d: %v", i, err)
		}
	}
	want := map[string]bool{"first": true, "a": true, "b": true, "c": true}
	if diff := cmp.Diff(want, marks(t, db)); diff != "" {
		t.Errorf("rows committed, want first, a, b, c and not the failed transaction's (-want +got):\n%s", diff)
	}
	again := 0
	for _, n := range runs {
		if n > 1 {
			again++
		}
	}
	if again == 0 {
		t.Errorf("runs of each function: %v; none ran in the group and again alone", runs)
	}
}

// TestSQLiteGroupMemberPanics: a transaction that panics in a group
// panics in its caller, leaving nothing written, and the others commit.
func TestSQLiteGroupMemberPanics(t *testing.T) {
	db := marksDB(t)
	fns := []func(tx *gorm.DB) error{insertMark("a"), func(tx *gorm.DB) error {
		if err := tx.Exec("INSERT INTO marks (name) VALUES ('panicked')").Error; err != nil {
			return err
		}
		panic("a bug")
	}, insertMark("b")}
	errs, panics, _ := group(t, db, fns)
	if errs[0] != nil || errs[2] != nil || panics[0] != nil || panics[2] != nil {
		t.Errorf("the other transactions: %v, %v", errs, panics)
	}
	if panics[1] != "a bug" {
		t.Errorf("the panic in the caller: %v; want a bug", panics[1])
	}
	if got := marks(t, db); got["panicked"] || !got["a"] || !got["b"] {
		t.Errorf("rows committed: %v; want first, a, b and not the panicking transaction's", got)
	}
}

// TestSQLiteGroupMemberCanceled: a transaction whose caller goes away
// while it waits for the writer never runs; one whose function returns its
// context's error once the caller went away fails with it and leaves
// nothing written; one whose function finishes regardless either commits
// once and says so, or fails and leaves nothing. Every other transaction of
// the group commits once.
func TestSQLiteGroupMemberCanceled(t *testing.T) {
	db := marksDB(t)
	waiting, cancelWaiting := context.WithCancel(context.Background())
	running, cancelRunning := context.WithCancel(context.Background())
	finishing, cancelFinishing := context.WithCancel(context.Background())
	defer cancelWaiting()
	defer cancelRunning()
	defer cancelFinishing()
	out := groupJobs(t, db, []job{
		{fn: insertMark("a")},
		{ctx: waiting, fn: insertMark("waited")},
		{ctx: running, fn: func(tx *gorm.DB) error {
			if err := tx.Exec("INSERT INTO marks (name) VALUES ('canceled')").Error; err != nil {
				return err
			}
			cancelRunning() // the caller goes away mid-transaction
			return running.Err()
		}},
		{ctx: finishing, fn: func(tx *gorm.DB) error {
			cancelFinishing()
			return tx.Exec("INSERT INTO marks (name) VALUES ('finished')").Error
		}},
		{fn: insertMark("b")},
	}, cancelWaiting)
	// The one that finished regardless commits when its group does; when
	// the group runs again job by job (the canceled one failed it), its
	// context has ended and it is refused before it runs: either way its
	// caller is told what happened.
	want := map[string]bool{"first": true, "a": true, "b": true}
	if out[3].err == nil {
		want["finished"] = true
	}
	for i, o := range out {
		failed := i == 1 || i == 2 || i == 3 && o.err != nil
		switch {
		case failed && !errors.Is(o.err, context.Canceled):
			t.Errorf("transaction %d: %v; want context.Canceled", i, o.err)
		case !failed && (o.err != nil || o.panic != nil):
			t.Errorf("transaction %d: %v, %v", i, o.err, o.panic)
		case failed && o.commits != 0:
			t.Errorf("transaction %d failed, and what it registered ran %d times; want never", i, o.commits)
		case !failed && o.commits != 1:
			t.Errorf("transaction %d committed, and what it registered ran %d times; want once", i, o.commits)
		}
	}
	if out[1].runs != 0 {
		t.Errorf("the transaction canceled while it waited ran %d times; want never", out[1].runs)
	}
	if diff := cmp.Diff(want, marks(t, db)); diff != "" {
		t.Errorf("rows committed (-want +got):\n%s", diff)
	}
}

// doomedDB is marksDB with a table whose every insert makes SQLite roll
// back the whole transaction it is in (a trigger's RAISE(ROLLBACK)), as an
// interrupted write, a full disk or an I/O error can.
func doomedDB(t *testing.T) *gorm.DB {
	t.Helper()
	db := marksDB(t)
	for _, ddl := range []string{
		"CREATE TABLE doomed (x INTEGER)",
		"CREATE TRIGGER doom BEFORE INSERT ON doomed BEGIN SELECT RAISE(ROLLBACK, 'doomed'); END",
	} {
		if err := db.Exec(ddl).Error; err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// swallower writes a row, makes SQLite roll its transaction back, swallows
// the error, writes another row (whose error it swallows too) and reports
// success: a bug the writer must not turn into rows committed half of a
// transaction, or rows of the group's other transactions lost.
func swallower(tx *gorm.DB) error {
	if err := tx.Exec("INSERT INTO marks (name) VALUES ('swallowed1')").Error; err != nil {
		return err
	}
	_ = tx.Exec("INSERT INTO doomed (x) VALUES (1)").Error
	_ = tx.Exec("INSERT INTO marks (name) VALUES ('swallowed2')").Error
	return nil
}

// TestSQLiteGroupTransactionGone: when SQLite rolls a group's transaction
// back on an error one function swallowed, the writer runs the group's
// functions again alone: the others commit once each (rows and AfterCommit),
// the swallowing one fails with ErrTransactionGone and leaves no row, not
// even those it wrote after the rollback (which would have committed alone).
func TestSQLiteGroupTransactionGone(t *testing.T) {
	db := doomedDB(t)
	errs, panics, runs := group(t, db, []func(tx *gorm.DB) error{insertMark("a"), swallower, insertMark("b")})
	if !errors.Is(errs[1], database.ErrTransactionGone) {
		t.Errorf("the swallowing transaction: %v; want ErrTransactionGone", errs[1])
	}
	if errs[0] != nil || errs[2] != nil || panics[0] != nil || panics[1] != nil || panics[2] != nil {
		t.Errorf("the transactions: %v, %v", errs, panics)
	}
	want := map[string]bool{"first": true, "a": true, "b": true}
	if diff := cmp.Diff(want, marks(t, db)); diff != "" {
		t.Errorf("rows committed (-want +got):\n%s", diff)
	}
	if runs[1] != 2 {
		t.Errorf("runs of each function: %v; want the swallower run in the group and again alone", runs)
	}
}

// TestSQLiteTransactionGoneAlone: a transaction alone on the writer whose
// function swallows SQLite's rollback fails with ErrTransactionGone and
// writes nothing; the writer's next transaction runs as usual.
func TestSQLiteTransactionGoneAlone(t *testing.T) {
	db := doomedDB(t)
	ctx := context.Background()
	if err := database.Transact(ctx, db, swallower); !errors.Is(err, database.ErrTransactionGone) {
		t.Errorf("Transact: %v; want ErrTransactionGone", err)
	}
	if err := database.Transact(ctx, db, insertMark("next")); err != nil {
		t.Fatalf("the next transaction: %v", err)
	}
	if diff := cmp.Diff(map[string]bool{"next": true}, marks(t, db)); diff != "" {
		t.Errorf("rows committed (-want +got):\n%s", diff)
	}
}
