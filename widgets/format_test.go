package widgets_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop/money"
)

// formatTS is where the widgets format amounts; its exponents table must be
// money's: the widgets count minor units as the shop does.
const formatTS = "web/src/lib/format.ts"

var (
	tsTable   = regexp.MustCompile(`(?s)\nconst exponents: Record<string, number> = \{(.*?)\n\};`)
	tsEntry   = regexp.MustCompile(`^([a-z]{3}):\s*(\d+)$`)
	tsDefault = regexp.MustCompile(`\nconst defaultExponent = (\d+);`)
	tsComment = regexp.MustCompile(`//[^\n]*`)
)

// widgetExponents reads the widgets' exponents table and default exponent.
func widgetExponents(t *testing.T) (map[string]int, int) {
	t.Helper()
	src, err := os.ReadFile(formatTS)
	if err != nil {
		t.Fatal(err)
	}
	m := tsTable.FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s: no `const exponents: Record<string, number> = {…};` table", formatTS)
	}
	table := map[string]int{}
	for _, e := range strings.Split(tsComment.ReplaceAllString(string(m[1]), ""), ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		kv := tsEntry.FindStringSubmatch(e)
		if kv == nil {
			t.Fatalf("%s: exponents entry %q is not `code: digits`", formatTS, e)
		}
		if _, dup := table[kv[1]]; dup {
			t.Errorf("%s: %s twice in the exponents table", formatTS, kv[1])
		}
		table[kv[1]], _ = strconv.Atoi(kv[2])
	}
	d := tsDefault.FindSubmatch(src)
	if d == nil {
		t.Fatalf("%s: no `const defaultExponent = …;`", formatTS)
	}
	def, _ := strconv.Atoi(string(d[1]))
	return table, def
}

// TestWidgetExponents: the widgets format every currency money supports with
// money's ISO 4217 exponent (not Intl's, which says 0 for huf and idr).
func TestWidgetExponents(t *testing.T) {
	table, def := widgetExponents(t)
	want := map[string]int{}
	for _, c := range money.Supported() {
		want[c.Code()] = c.Exponent()
	}
	if diff := cmp.Diff(want, table); diff != "" {
		t.Errorf("%s's exponents differ from money's (-money +widgets):\n%s", formatTS, diff)
	}
	if def != 2 {
		t.Errorf("%s: defaultExponent %d, want 2", formatTS, def)
	}
	for code, e := range map[string]int{"usd": 2, "jpy": 0, "kwd": 3, "huf": 2, "idr": 2} {
		if table[code] != e {
			t.Errorf("%s: %s has exponent %d, want %d", formatTS, code, table[code], e)
		}
	}
}
