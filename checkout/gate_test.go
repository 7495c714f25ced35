package checkout_test

import (
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"
)

// readGate holds the first reads of a table until n of them have been made
// or none has come for quiet, then lets every read through. Calls that can
// read together (nothing makes them wait for each other) then all read
// before any of them writes: the interleaving that a lost update or an
// overrun limit needs, made certain rather than left to the scheduler.
// Calls that cannot read together (a row lock, SQLite's write lock) lose
// quiet once.
type readGate struct {
	mu      sync.Mutex
	n       int
	quiet   time.Duration
	arrived int
	timer   *time.Timer
	open    chan struct{}
	opened  bool
}

// gateReads installs a readGate on db's reads of table made inside a
// transaction (inTx) or outside one (!inTx). It holds reads from now on:
// install it once the test's setup is done.
func gateReads(t *testing.T, db *gorm.DB, table string, inTx bool, n int, quiet time.Duration) *readGate {
	t.Helper()
	g := &readGate{n: n, quiet: quiet, open: make(chan struct{})}
	arrive := func(d *gorm.DB) {
		_, tx := d.Statement.ConnPool.(gorm.TxCommitter)
		if tx == inTx && d.Statement.Table == table {
			g.arrive()
		}
	}
	// Finds and Takes (Query), and the reads of rows by hand (Row: Raw's
	// Rows with the table named).
	if err := db.Callback().Query().After("gorm:query").Register("test:gate_"+table, arrive); err != nil {
		t.Fatal(err)
	}
	if err := db.Callback().Row().After("gorm:row").Register("test:gate_row_"+table, arrive); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.release)
	return g
}

func (g *readGate) arrive() {
	g.mu.Lock()
	if g.opened {
		g.mu.Unlock()
		return
	}
	g.arrived++
	if g.arrived == g.n {
		g.mu.Unlock()
		g.release()
		return
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	g.timer = time.AfterFunc(g.quiet, g.release)
	g.mu.Unlock()
	<-g.open
}

func (g *readGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.opened {
		g.opened = true
		close(g.open)
	}
}

// together is how many reads the gate held before it opened.
func (g *readGate) together() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.arrived
}
