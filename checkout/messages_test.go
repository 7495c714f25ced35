package checkout

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"shop"
	"shop/money"
)

// contentOnly compares messages by what they say to the model, for the
// tests written before messages had keys; TestMessageKeys checks those.
var contentOnly = cmpopts.IgnoreFields(Message{}, "Key", "Params")

// TestMessageKeysInCatalogs: every key a session's message may carry has
// an entry in every language of the shop's page catalogs, whose
// placeholders are among the params docs/messages.md gives the key, and
// the document lists every key. Once the widgets' catalogs carry the keys,
// every language of theirs must have each.
func TestMessageKeysInCatalogs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "messages.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedParams(string(doc))
	files, err := filepath.Glob(filepath.Join("..", "i18n", "messages", "*.json"))
	if err != nil || len(files) < 6 {
		t.Fatalf("page catalogs: %v (%d files)", err, len(files))
	}
	placeholder := regexp.MustCompile(`\{(\w+)\}`)
	for _, key := range MessageKeys {
		params, ok := documented[key]
		if !ok {
			t.Errorf("docs/messages.md does not list %q", key)
		}
		for _, f := range files {
			var m map[string]string
			b, err := os.ReadFile(f)
			if err == nil {
				err = json.Unmarshal(b, &m)
			}
			if err != nil {
				t.Fatal(err)
			}
			text, ok := m[key]
			if !ok {
				t.Errorf("%s lacks %q", filepath.Base(f), key)
			}
			for _, p := range placeholder.FindAllStringSubmatch(text, -1) {
				if !slices.Contains(params, p[1]) {
					t.Errorf("%s: %q uses {%s}, which docs/messages.md does not give it (%v)", filepath.Base(f), key, p[1], params)
				}
			}
		}
	}
	t.Run("Widgets", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join("..", "widgets", "web", "src", "lib", "messages", "*"))
		more, _ := filepath.Glob(filepath.Join("..", "widgets", "web", "src", "lib", "i18n*", "*"))
		files = append(files, more...)
		carrying := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || !strings.Contains(string(b), `"`+KeyPromoUnknown+`"`) {
				continue
			}
			carrying++
			for _, key := range MessageKeys {
				if !strings.Contains(string(b), `"`+key+`"`) {
					t.Errorf("%s lacks %q", f, key)
				}
			}
		}
		if carrying == 0 {
			t.Skip("the widgets' catalogs carry no message keys yet (issue 56's widget half)")
		}
	})
}

// documentedParams reads docs/messages.md's tables: each `key` in a
// table's first column with the `params` its row names.
func documentedParams(doc string) map[string][]string {
	out := map[string][]string{}
	code := regexp.MustCompile("`([a-z_]+)`")
	for _, line := range strings.Split(doc, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		key := strings.Trim(strings.TrimSpace(cells[1]), "`")
		if !strings.Contains(key, ".") {
			continue
		}
		var params []string
		for _, c := range cells[2:] {
			for _, m := range code.FindAllStringSubmatch(c, -1) {
				params = append(params, m[1])
			}
		}
		out[key] = params
	}
	return out
}

// TestKeyedCallsNameKnownKeys: every keyed message and refusal in the
// package's code takes its key from a Key… constant of MessageKeys (or the
// "address.<field>.missing" of a required field), so no situation reaches a
// buyer without a catalog entry.
func TestKeyedCallsNameKnownKeys(t *testing.T) {
	consts := map[string]string{}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						break
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && strings.HasPrefix(n.Name, "Key") {
						consts[n.Name] = strings.Trim(lit.Value, `"`)
					}
				}
			}
		}
	}
	for name, key := range consts {
		if !slices.Contains(MessageKeys, key) {
			t.Errorf("%s = %q is not in MessageKeys", name, key)
		}
	}
	calls := 0
	for path, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var arg ast.Expr
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				if fn.Name == "keyed" && len(call.Args) > 1 {
					arg = call.Args[1]
				}
			case *ast.SelectorExpr:
				if fn.Sel.Name == "Keyed" && len(call.Args) > 0 {
					arg = call.Args[0]
				}
			}
			if arg == nil {
				return true
			}
			calls++
			switch a := arg.(type) {
			case *ast.Ident:
				if _, ok := consts[a.Name]; !ok && a.Name != "key" && a.Name != "msgKey" {
					t.Errorf("%s: keyed with %s, not a Key constant", fset.Position(a.Pos()), a.Name)
				}
			case *ast.SelectorExpr: // a refused code's key, set from Key constants
				if a.Sel.Name != "key" {
					t.Errorf("%s: keyed with .%s, not a key", fset.Position(a.Pos()), a.Sel.Name)
				}
			case *ast.BinaryExpr: // "address."+key+".missing"
				if !strings.Contains(path, "address.go") {
					t.Errorf("%s: a computed key", fset.Position(a.Pos()))
				}
			default:
				t.Errorf("%s: keyed with a literal; name it as a Key constant", fset.Position(arg.Pos()))
			}
			return true
		})
	}
	if calls < 30 {
		t.Errorf("found %d keyed calls; the scan misses some", calls)
	}
}

// TestMessageKeys: each situation carries its own key and the params its
// sentence needs.
func TestMessageKeys(t *testing.T) {
	p := addrDemoPolicy(t)
	usd, err := money.Lookup("usd")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	uses := 3
	tests := []struct {
		name string
		got  []Message
		want []Message
	}{
		{"AddressPostal", addressProblems(p, addrPtr(addrAt("DE", "", "1011"))),
			[]Message{{Key: KeyAddressPostalInvalid, Params: map[string]string{"country": "DE", "example": "10115"}}}},
		{"AddressMissingPostal", addressProblems(p, addrPtr(addrAt("GB", "", ""))),
			[]Message{{Key: "address.postal_code.missing", Params: map[string]string{"field": "postal_code"}}}},
		{"AddressMissingState", addressProblems(p, addrPtr(addrAt("US", "", "94131"))),
			[]Message{{Key: "address.state.missing", Params: map[string]string{"field": "state", "country": "US"}}}},
		{"AddressNotShipped", addressProblems(p, addrPtr(addrAt("JP", "", "100-0001"))),
			[]Message{{Key: KeyAddressNotShipped, Params: map[string]string{"country": "JP", "countries": shippedCountries(p)}}}},
		{"PromoEnded", []Message{refusedMessage(promoProblem(usd, &Promotion{Code: "OLD", EndsAt: now.Add(-48 * time.Hour)}, 100, 0, now))},
			[]Message{{Key: KeyPromoEnded, Params: map[string]string{"code": "OLD", "end_date": "2026-12-05"}}}},
		{"PromoMinSubtotal", []Message{refusedMessage(promoProblem(usd, &Promotion{Code: "BIG", MinSubtotal: 5000}, 1200, 0, now))},
			[]Message{{Key: KeyPromoMinSubtotal, Params: map[string]string{"code": "BIG", "min_amount": "5000", "missing_amount": "3800"}}}},
		{"PromoUsedUp", []Message{refusedMessage(promoProblem(usd, &Promotion{Code: "ONCE", UsageLimit: &uses}, 100, 3, now))},
			[]Message{{Key: KeyPromoUsedUp, Params: map[string]string{"code": "ONCE"}}}},
		{"StockShort", []Message{outOfStock(1, "Mug", 2)},
			[]Message{{Key: KeyStockShort, Params: map[string]string{"name": "Mug", "available": "2"}}}},
		{"StockOut", []Message{outOfStock(0, "Mug", 0)},
			[]Message{{Key: KeyStockOut, Params: map[string]string{"name": "Mug"}}}},
	}
	keyOnly := cmpopts.IgnoreFields(Message{}, "Type", "Code", "Param", "ContentType", "Content")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got, keyOnly); diff != "" {
				t.Errorf("keys mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnknownPromoRefusalKeyed: a code no promotion has is refused with
// the key promo.unknown and the code as typed.
func TestUnknownPromoRefusalKeyed(t *testing.T) {
	code := "nope"
	err := (&Checkout{policy: addrDemoPolicy(t)}).apply(&state{}, Request{PromoCode: &code})
	se, ok := errors.AsType[*shop.Error](err)
	if !ok || se.Key != KeyPromoUnknown || se.Params["code_typed"] != "NOPE" {
		t.Fatalf("err = %#v, want key %s with code_typed NOPE", err, KeyPromoUnknown)
	}
}

// refusedMessage is the keyed message of a refused code.
func refusedMessage(r refused) Message { return keyed(Message{}, r.key, r.params...) }
