package checkout_test

import (
	"context"
	"io"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/payments"
	"shop/payments/stripetest"
)

// restorable is a shop database that a test can take back to an earlier
// state, as a power cut or a backup restore does: a SQLite file copied
// after a checkpoint, or a PostgreSQL database copied with CREATE DATABASE
// … TEMPLATE.
type restorable struct {
	t       *testing.T
	dialect database.Dialect
	dsn     string // the database in use
	saved   string // the SQLite copy, or the PostgreSQL copy's DSN
	db      *gorm.DB
}

func newRestorable(t *testing.T, d database.Dialect) *restorable {
	t.Helper()
	r := &restorable{t: t, dialect: d, dsn: dbtest.DSN(t, d)}
	r.open()
	return r
}

func (r *restorable) open() {
	r.t.Helper()
	db, _, err := database.OpenMigrated(context.Background(), r.dsn, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.db = db
	r.t.Cleanup(func() { _ = database.Close(db) })
}

// save keeps the database as it is now; the shop's connections are closed
// and opened again around it.
func (r *restorable) save() {
	r.t.Helper()
	if r.dialect == database.SQLite {
		if err := r.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error; err != nil {
			r.t.Fatal(err)
		}
		r.saved = r.dsn + ".saved"
		copyFile(r.t, r.dsn, r.saved)
		return
	}
	// CREATE DATABASE … TEMPLATE needs no one else connected to the
	// template.
	if err := database.Close(r.db); err != nil {
		r.t.Fatal(err)
	}
	r.saved = dbtest.DSN(r.t, database.Postgres)
	admin(r.t, "DROP DATABASE "+dbName(r.t, r.saved), "CREATE DATABASE "+dbName(r.t, r.saved)+" TEMPLATE "+dbName(r.t, r.dsn))
	r.open()
}

// restore takes the database back to what save kept, and opens it again:
// the old handle is closed.
func (r *restorable) restore() *gorm.DB {
	r.t.Helper()
	if err := database.Close(r.db); err != nil {
		r.t.Fatal(err)
	}
	if r.dialect == database.SQLite {
		for _, suffix := range []string{"-wal", "-shm"} {
			if err := os.Remove(r.dsn + suffix); err != nil && !os.IsNotExist(err) {
				r.t.Fatal(err)
			}
		}
		copyFile(r.t, r.saved, r.dsn)
	} else {
		r.dsn = r.saved
	}
	r.open()
	return r.db
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func dbName(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// admin runs statements on the PostgreSQL server's own database.
func admin(t *testing.T, stmts ...string) {
	t.Helper()
	base := os.Getenv("SHOP_TEST_POSTGRES")
	if base == "" {
		base = dbtest.DefaultPostgres
	}
	db, err := database.Open(context.Background(), base, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = database.Close(db) }()
	for _, s := range stmts {
		if err := db.Exec(s).Error; err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// provider is a payment provider outside the shop's database, with what it
// kept: the succeeded charges not refunded in full.
type provider struct {
	charger checkout.Charger
	kept    func(t *testing.T) []string
}

func providers(t *testing.T) map[string]provider {
	srv := stripetest.New(t)
	sbDB := dbtest.Open(t, database.SQLite)
	return map[string]provider{
		"stripe": {srv.Stripe(payments.StripeOptions{Retries: -1}), func(t *testing.T) []string {
			var kept []string
			for _, pi := range srv.PaymentIntents() {
				if pi.Status == "succeeded" && pi.AmountRefunded < pi.Amount {
					kept = append(kept, pi.ID)
				}
			}
			return kept
		}},
		"sandbox": {payments.NewSandbox(sbDB, &payments.SandboxOptions{Now: time.Now}), func(t *testing.T) []string {
			var kept []string
			if err := sbDB.Raw("SELECT reference FROM sandbox_charges WHERE status = 'succeeded' AND refunded < amount").Scan(&kept).Error; err != nil {
				t.Fatal(err)
			}
			return kept
		}},
	}
}

// TestRestoredDatabaseChargesOnce is the audit's reproduction: a purchase,
// then the shop's database restored to before it (the provider keeps the
// charge), then the buyer pays again with a new token, and once more with
// another. The provider keeps one charge, and the session has one order:
// never two charges kept. Once the buyer pays again first (the first try
// reuses the lost attempt's key), once the reconciler's search of the
// provider's payments runs first.
func TestRestoredDatabaseChargesOnce(t *testing.T) {
	ctx := context.Background()
	for _, d := range dbtest.Dialects {
		for _, name := range []string{"stripe", "sandbox"} {
			for _, scanFirst := range []bool{false, true} {
				run := string(d) + "/" + name + "/buyer_first"
				if scanFirst {
					run = string(d) + "/" + name + "/reconciler_first"
				}
				t.Run(run, func(t *testing.T) {
					prov := providers(t)[name]
					r := newRestorable(t, d)
					p := payingShopOpts(t, r.db, &checkout.Options{Charger: prov.charger}, nil)
					s := p.ready(t)
					r.save()
					p = payingShopOpts(t, r.db, &checkout.Options{Charger: prov.charger}, nil)
					if got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")}); err != nil || got.Status != checkout.Completed {
						t.Fatalf("the purchase: %v %+v", err, got)
					}
					p = payingShopOpts(t, r.restore(), &checkout.Options{Charger: prov.charger}, nil)
					if n := p.count(t, "orders"); n != 0 {
						t.Fatalf("%d orders after the restore, want none", n)
					}
					if scanFirst {
						if n, err := p.co.ScanPayments(ctx); err != nil || n != 1 {
							t.Errorf("the reconciler's search settled %d, %v; want 1", n, err)
						}
					}
					// Without the search first, the first try reuses the lost
					// attempt's key: the provider holds the charge made under
					// it, which becomes the order.
					for _, token := range []string{"pm_card_mastercard", "pm_card_amex"} {
						got, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay(token)})
						if err != nil || got.Status != checkout.Completed {
							t.Errorf("paying again with %s: %v %+v", token, err, got)
						}
					}
					p.clk.Add(time.Hour) // past the reconciler's grace
					if _, err := p.co.Reconcile(ctx); err != nil {
						t.Fatal(err)
					}
					kept := prov.kept(t)
					orders := p.count(t, "orders")
					if len(kept) != 1 || orders != 1 {
						t.Errorf("the provider keeps %d charges %v, the shop has %d orders; want one of each", len(kept), kept, orders)
					}
					var ref string
					if err := p.db.Raw("SELECT payment_reference FROM orders WHERE checkout_session_id = ?", s.ID).Scan(&ref).Error; err != nil {
						t.Fatal(err)
					}
					if len(kept) == 1 && ref != kept[0] {
						t.Errorf("the order was paid by %q, the charge kept is %s", ref, kept[0])
					}
				})
			}
		}
	}
}
