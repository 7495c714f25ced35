package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"shop/checkout"
	"shop/database/dbtest"
)

// TestCrashThenCatalogChanged: the process ends right after the charge;
// before it is started again, the paid variant's stock is lowered (the
// staff's adjust_inventory refuses to go below the units being paid for, so
// it is lowered in the database behind the shop's back) or the product is
// imported again with less stock. The restarted shop's reconciler writes one
// order, its shortfall marked when the stock did not cover it, against one
// charge; a further restart finds nothing to do and logs no error.
func TestCrashThenCatalogChanged(t *testing.T) {
	bin := buildShop(t)
	const mug = "enamel-camp-mug-forest-green" // 2 units in readySession's session
	admin := []string{"SHOP_ADMIN_TOKENS=owner:" + ownerToken}
	for _, d := range dbtest.Dialects {
		for _, change := range []string{"Lowered", "Reimported"} {
			t.Run(string(d)+"/"+change, func(t *testing.T) {
				dsn := dbtest.DSN(t, d)
				cs := payUntilFault(t, runShop(t, bin, dsn, []string{"SHOP_TEST_FAULT=after_charge"}))
				wantShort := int64(0)
				switch change {
				case "Lowered":
					// The default grace: this shop's reconciler leaves the payment alone.
					p, _ := runShopLogged(t, bin, dsn, admin)
					owner := connectAdmin(t, "http://"+p.addr, ownerToken)
					res := call(t, owner, "adjust_inventory", map[string]any{"variant_id": mug, "set": 1, "reason": "count"})
					if !res.IsError || errorCode(res) != "invalid" || !strings.Contains(resultText(res), "2 unit(s) held by 1 checkout session(s) being paid") {
						t.Fatalf("adjust_inventory below the units being paid for: %s", resultOf(res))
					}
					stop(t, p)
					execSQL(t, dsn, "UPDATE variants SET stock = 1 WHERE id = ?", mug)
					wantShort = 1
				case "Reimported":
					file := filepath.Join(t.TempDir(), "mug.json")
					writeMugCatalog(t, file, mug, 0)
					out, err := exec.Command(bin, "catalog", "import", file, "--db", dsn).CombinedOutput()
					if err != nil || !strings.Contains(string(out), mug+": stock kept at 2") {
						t.Fatalf("catalog import: %v\n%s", err, out)
					}
				}

				p, logs := runShopLogged(t, bin, dsn, admin, "--reconcile-grace", "1ms")
				got := waitSettled(t, p, cs.ID)
				if got.Status != checkout.Completed || got.Order == nil {
					t.Fatalf("after the restart: %s %+v", got.Status, got.Messages)
				}
				owner := connectAdmin(t, "http://"+p.addr, ownerToken)
				detail := structured[struct {
					Order struct {
						ShortUnits int64 `json:"short_units"`
						Lines      []struct {
							VariantID string `json:"variant_id"`
							Short     int64  `json:"short"`
						} `json:"lines"`
					} `json:"order"`
				}](t, call(t, owner, "get_order", map[string]any{"order_id": got.Order.ID}))
				var lineShort int64
				for _, l := range detail.Order.Lines {
					if l.VariantID == mug {
						lineShort = l.Short
					}
				}
				if detail.Order.ShortUnits != wantShort || lineShort != wantShort {
					t.Errorf("get_order: %+v; want %d unit(s) of %s short", detail.Order, wantShort, mug)
				}
				listed := structured[orderList](t, call(t, owner, "list_orders", map[string]any{"short": true}))
				if n := int64(len(listed.Orders)); n != min(wantShort, 1) {
					t.Errorf("list_orders short: true lists %d orders, want %d", n, min(wantShort, 1))
				}
				if counts := rows(t, dsn, "sandbox_charges", "orders"); counts["sandbox_charges"] != 1 || counts["orders"] != 1 {
					t.Errorf("%v; want one charge and one order", counts)
				}
				if n := strings.Count(logs.String(), "short of stock"); int64(n) != min(wantShort, 1) {
					t.Errorf("%d shortfall errors logged, want %d:\n%s", n, min(wantShort, 1), logs.String())
				}
				stop(t, p)

				// Another start-up pass: nothing left to settle, no error.
				p, logs = runShopLogged(t, bin, dsn, nil, "--reconcile-grace", "1ms")
				again := waitSettled(t, p, cs.ID)
				time.Sleep(time.Second) // the start-up pass runs as the server starts
				if again.Order == nil || again.Order.ID != got.Order.ID {
					t.Errorf("after another restart: %+v, want order %s", again.Order, got.Order.ID)
				}
				if strings.Contains(logs.String(), "level=ERROR") {
					t.Errorf("the second pass logged errors:\n%s", logs.String())
				}
				if counts := rows(t, dsn, "sandbox_charges", "orders"); counts["sandbox_charges"] != 1 || counts["orders"] != 1 {
					t.Errorf("%v; want one charge and one order", counts)
				}
			})
		}
	}
}

// waitSettled asks p for session id until it is no longer being paid (15 s at most).
func waitSettled(t *testing.T, p *process, id string) checkout.Session {
	t.Helper()
	s := connect(t, "http://"+p.addr)
	var got checkout.Session
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = session(t, call(t, s, "get_checkout_session", map[string]any{"checkout_session_id": id}))
		if got.Status != checkout.InProgress {
			break
		}
	}
	return got
}

// runShopLogged is runShop keeping the process's log.
func runShopLogged(t *testing.T, bin, dsn string, env []string, flags ...string) (*process, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dsn}, flags...)...)
	cmd.Env = append(append(os.Environ(), "STRIPE_SECRET_KEY=", "SHOP_TEST_FAULT="), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	logs := &lockedBuffer{}
	lines := bufio.NewScanner(stderr)
	listen := regexp.MustCompile(`listen=http://(\S+)`)
	for p.addr == "" && lines.Scan() {
		logs.Write([]byte(lines.Text() + "\n"))
		if m := listen.FindStringSubmatch(lines.Text()); m != nil {
			p.addr, p.startLine = m[1], lines.Text()
		}
	}
	if p.addr == "" {
		t.Fatalf("no listen line in:\n%s", logs.String())
	}
	go func() {
		for lines.Scan() {
			logs.Write([]byte(lines.Text() + "\n"))
		}
		p.done <- cmd.Wait()
	}()
	return p, logs
}

// stop kills p and waits for it to end.
func stop(t *testing.T, p *process) {
	t.Helper()
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the shop did not end 10 s after SIGKILL")
	}
}

func execSQL(t *testing.T, dsn, sql string, args ...any) {
	t.Helper()
	if err := openDB(t, dsn).Exec(sql, args...).Error; err != nil {
		t.Fatal(err)
	}
}

// writeMugCatalog writes the demo catalog's enamel camp mug with variant's
// stock set to stock.
func writeMugCatalog(t *testing.T, path, variant string, stock int64) {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/demo/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Currency string           `json:"currency"`
		Products []map[string]any `json:"products"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	for _, p := range file.Products {
		if p["id"] != "enamel-camp-mug" {
			continue
		}
		for _, v := range p["variants"].([]any) {
			if v := v.(map[string]any); v["id"] == variant {
				v["stock"] = stock
			}
		}
		file.Products = []map[string]any{p}
		b, _ := json.Marshal(file)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("no enamel-camp-mug in the demo catalog")
}
