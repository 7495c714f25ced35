package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gorm.io/gorm"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
)

// rotations is how many ids the attacker invented from one address.
const rotations = 156

// liveHeld sums the live stock holds.
func liveHeld(t *testing.T, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	if err := db.Raw("SELECT COALESCE(SUM(quantity), 0) FROM stock_holds WHERE expires_at > CURRENT_TIMESTAMP").Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// bigVariants lists the variants with at least 40 units on hand.
func bigVariants(t *testing.T, db *gorm.DB) []string {
	t.Helper()
	var ids []string
	if err := db.Raw("SELECT id FROM variants WHERE stock >= 40 ORDER BY id").Scan(&ids).Error; err != nil || len(ids) < 10 {
		t.Fatalf("variants: %v %v", ids, err)
	}
	return ids
}

// fiftyUnits are call i's 5 lines of 10 units, in the form line(id, n)
// makes.
func fiftyUnits(ids []string, i int, line func(string, int) map[string]any) []map[string]any {
	var out []map[string]any
	for j := range 5 {
		out = append(out, line(ids[(i*5+j)%len(ids)], 10))
	}
	return out
}

// TestHoardingRotation is the attack through every dialect: one
// client address invents a new buyer id for each of 156 calls of 50 units
// (the host's user id on /mcp, the buyer's email on /acp/mcp and
// /ucp/mcp). What it holds stays within the address's aggregate.
func TestHoardingRotation(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Run("MCP", func(t *testing.T) { testRotationMCP(t, d) })
			t.Run("ACP", func(t *testing.T) { testRotationACP(t, d) })
			t.Run("UCP", func(t *testing.T) { testRotationUCP(t, d) })
		})
	}
}

func testRotationMCP(t *testing.T, d database.Dialect) {
	dsn := dbtest.DSN(t, d)
	shop := startShop(t, dsn, nil)
	db := openDB(t, dsn) // any dialect's
	ids := bigVariants(t, db)
	s := connect(t, shop.url)
	line := func(id string, n int) map[string]any { return map[string]any{"id": id, "quantity": n} }
	for i := range rotations {
		res, err := callRaw(s, "create_checkout_session", map[string]any{"items": fiftyUnits(ids, i, line),
			"fulfillment_address": ucpMCPAddress}, mcp.Meta{"openai/subject": fmt.Sprintf("rotated-%d", i)})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if res.IsError {
			continue // past the sessions an address may start an hour
		}
		if cs, err := decode[checkout.Session](res); err != nil || cs.Status != checkout.Ready {
			t.Fatalf("call %d: %v %+v", i, err, cs)
		}
	}
	if held := liveHeld(t, db); held > checkout.DefaultUnitsPerAddress {
		t.Errorf("one address holds %d units through /mcp; want at most %d", held, checkout.DefaultUnitsPerAddress)
	}
}

func testRotationACP(t *testing.T, d database.Dialect) {
	s := startACPShop(t, d) // agents with tokens: /acp/mcp open to them
	ids := bigVariants(t, s.db)
	line := func(id string, n int) map[string]any { return map[string]any{"id": id, "quantity": n} }
	for i := range rotations {
		payload := shippable(ids[0], 1)
		payload["line_items"] = fiftyUnits(ids, i, line)
		payload["buyer"] = map[string]any{"full_name": "Rotated", "email": fmt.Sprintf("rotated-%d@example.com", i)}
		a := s.agent.call(t, "create_checkout_session", acpArgs(newKey(t, fmt.Sprintf("rot-%d", i)), "", payload))
		if a.Status != http.StatusOK && a.Status != http.StatusTooManyRequests { // one agent's token: its rate limit
			t.Fatalf("call %d: HTTP %d", i, a.Status)
		}
	}
	if held := liveHeld(t, s.db); held > checkout.DefaultUnitsPerAddress {
		t.Errorf("one address holds %d units through /acp/mcp; want at most %d", held, checkout.DefaultUnitsPerAddress)
	}
}

func testRotationUCP(t *testing.T, d database.Dialect) {
	dsn := dbtest.DSN(t, d)
	shop := startShop(t, dsn, ucpEnv)
	db := openDB(t, dsn) // any dialect's
	ids := bigVariants(t, db)
	agents := serveAgentProfiles(t)
	profile := agents.URL + "/agent.json"
	s := connectUCP(t, shop.url)
	line := func(id string, n int) map[string]any {
		return map[string]any{"item": map[string]any{"id": id}, "quantity": n}
	}
	for i := range rotations {
		_, err := callRaw(s, "create_checkout", map[string]any{"meta": ucpMeta(profile, ""), "checkout": map[string]any{
			"line_items":  fiftyUnits(ids, i, line),
			"buyer":       map[string]any{"first_name": "Rotated", "last_name": "Buyer", "email": fmt.Sprintf("rotated-%d@example.com", i)},
			"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}}}}, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if held := liveHeld(t, db); held > checkout.DefaultUnitsPerAddress {
		t.Errorf("one address holds %d units through /ucp/mcp; want at most %d", held, checkout.DefaultUnitsPerAddress)
	}
}

// TestHostAddressBuyers: 60 buyers of a host, all behind one egress address
// that serve's --host-addresses names, each hold their cart.
func TestHostAddressBuyers(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			url := startShopArgs(t, nil, "--db", dsn, "--host-addresses", "127.0.0.0/8:5000")
			db := openDB(t, dsn) // any dialect's
			ids := bigVariants(t, db)
			s := connect(t, url)
			for i := range 60 {
				res, err := callRaw(s, "create_checkout_session", map[string]any{
					"items":               []map[string]any{{"id": ids[i%len(ids)], "quantity": 2}},
					"fulfillment_address": ucpMCPAddress,
				}, mcp.Meta{"openai/subject": fmt.Sprintf("chatgpt-user-%d", i)})
				if err != nil || res.IsError {
					t.Fatalf("buyer %d: %v %s", i, err, resultOf(res))
				}
				cs, err := decode[checkout.Session](res)
				if err != nil || cs.Status != checkout.Ready {
					t.Fatalf("buyer %d: %v %+v", i, err, cs)
				}
			}
			if held := liveHeld(t, db); held != 120 {
				t.Errorf("the 60 buyers hold %d units; want all 120 of their carts", held)
			}
		})
	}
}

// demoPolicyWith writes the demo merchant's policy with more keys of its
// limits (lines such as "unverified_share_percent: 100") to a file of the
// test's, for serve's --config.
func demoPolicyWith(t *testing.T, limits ...string) string {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/demo/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "\nlimits:\n", "\nlimits:\n  "+strings.Join(limits, "\n  ")+"\n", 1)
	if text == string(raw) {
		t.Fatal("the demo policy has no limits section")
	}
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
