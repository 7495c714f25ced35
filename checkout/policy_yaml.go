package checkout

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.yaml.in/yaml/v3"

	"shop/money"
	"shop/orders"
)

// rawPolicy is the YAML form of a Policy: rates and times are read as text,
// so that a bad one is reported with its key instead of ending the decoding.
type rawPolicy struct {
	Policy     `yaml:",inline"`
	Tax        []rawTax       `yaml:"tax"`
	Promotions []rawPromotion `yaml:"promotions"`
}

type rawTax struct {
	TaxRule `yaml:",inline"`
	Rate    string `yaml:"rate"`
}

type rawPromotion struct {
	Promotion `yaml:",inline"`
	Percent   string `yaml:"percent"`
	StartsAt  string `yaml:"starts_at"`
	EndsAt    string `yaml:"ends_at"`
}

// knownKeys lists the keys of each YAML mapping by the name of its Go type.
var knownKeys = func() map[string][]string {
	m := map[string][]string{}
	for _, v := range []any{rawPolicy{}, Links{}, Shipping{}, Zone{}, ShippingRate{}, rawTax{}, rawPromotion{}, Limits{}, HostAddress{}, Sessions{}, Emails{}, PaymentSheet{}, TaxDisplay{}, TaxDisplayRule{}, orders.ReturnPolicy{}, orders.NotReturnable{}} {
		m[reflect.TypeOf(v).String()] = yamlKeys(reflect.TypeOf(v))
	}
	return m
}()

func yamlKeys(t reflect.Type) (keys []string) {
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if opts == "inline" {
			keys = append(keys, yamlKeys(t.Field(i).Type)...)
		} else if name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// wholeNumbers describes the keys that take integers. The YAML decoder would
// silently truncate 4.99 to 4, so LoadPolicy checks their tags itself.
var wholeNumbers = map[string]string{"price": minorUnits, "free_over": minorUnits, "amount": positive,
	"min_subtotal": minorUnits, "min_days": days, "max_days": days, "usage_limit": "a whole number > 0",
	"units_per_line": wholeLimit, "units_per_variant": wholeLimit, "units_per_buyer": wholeLimit,
	"open_sessions": wholeLimit, "lifetime_hours": wholeLimit, "retention_days": wholeLimit,
	"units_per_account": wholeLimit, "units_per_address": wholeLimit, "unverified_share_percent": wholeLimit,
	"sessions_per_hour": wholeLimit, "sessions_per_address_hour": wholeLimit, "payments_per_hour": wholeLimit,
	"payments_per_address_hour": wholeLimit, "declines_before_lock": wholeLimit, "decline_lock_minutes": wholeLimit, "units": wholeLimit,
	"window_days": "a whole number of days from 0 to 365", "shipping_fee": minorUnits}

// wholeLimit describes the keys of limits and sessions.
const wholeLimit = "a whole number > 0"

// keyError is a problem with one key of the policy.
type keyError struct {
	file, path string
	line       int
	msg        string
}

func (e *keyError) Error() string {
	s := strings.Join(slices.DeleteFunc([]string{e.file, e.path, e.msg}, func(s string) bool { return s == "" }), ": ")
	if e.line > 0 {
		s += fmt.Sprintf(" (line %d)", e.line)
	}
	return s
}

// at returns e as found in the named file, with the line of its key if known.
func (e *keyError) at(name string, ix *nodeIndex) error {
	c := *e
	c.file = name
	if i := slices.IndexFunc(ix.entries, func(en entry) bool { return en.path == c.path }); c.line == 0 && c.path != "" && i >= 0 {
		c.line = ix.entries[i].line()
	}
	return &c
}

// covers reports whether a problem at outer makes one at inner moot.
func covers(outer, inner string) bool {
	return outer != "" && (inner == outer || strings.HasPrefix(inner, outer+".") || strings.HasPrefix(inner, outer+"["))
}

// nodeIndex knows the key path ("shipping.zones[0].id") and the line of every
// node of a YAML document, and collects the problems found while decoding it.
type nodeIndex struct {
	entries   []entry
	errs      []*keyError
	undecoded []string // paths whose problems are not reported, "" for all
}

type entry struct {
	path, parent string
	key, val     *yaml.Node // key is nil for list items
}

// line is the line of the key, or of the list item.
func (en entry) line() int {
	if en.key != nil {
		return en.key.Line
	}
	return en.val.Line
}

func (ix *nodeIndex) walk(parent, at string, key, n *yaml.Node) {
	ix.entries = append(ix.entries, entry{at, parent, key, n})
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			ix.walk(at, strings.TrimPrefix(at+"."+n.Content[i].Value, "."), n.Content[i], n.Content[i+1])
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			ix.walk(at, fmt.Sprintf("%s[%d]", at, i), nil, c)
		}
	case yaml.ScalarNode:
		if desc, ok := wholeNumbers[keyName(key)]; ok && n.ShortTag() != "!!int" {
			got := strconv.Quote(n.Value)
			if n.ShortTag() == "!!null" {
				got = "nothing"
			}
			ix.report(&keyError{path: at, line: n.Line, msg: fmt.Sprintf("must be %s (got %s)", desc, got)})
		}
	}
}

func keyName(key *yaml.Node) string {
	if key == nil {
		return ""
	}
	return key.Value
}

// report adds a problem unless one is known about the same key or a parent.
func (ix *nodeIndex) report(e *keyError) {
	if !ix.moot(e.path) {
		ix.errs = append(ix.errs, e)
	}
}

// moot reports whether a problem at path follows from one already reported.
func (ix *nodeIndex) moot(path string) bool {
	return slices.ContainsFunc(ix.errs, func(d *keyError) bool { return covers(d.path, path) }) ||
		slices.ContainsFunc(ix.undecoded, func(u string) bool { return u == "" || covers(u, path) })
}

var (
	lineRE    = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownRE = regexp.MustCompile(`^field (.+) not found in type (\S+)$`)
	dupRE     = regexp.MustCompile(`^mapping key (".*") already defined at line (\d+)$`)
	typeRE    = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
)

// translate reports a message of the YAML decoder as a problem at a key path.
// The decoder drops a list item it cannot decode and a mapping with a
// duplicate key, so the problems found later in the list (for a duplicate: in
// the whole document) could be misplaced and are not reported.
func (ix *nodeIndex) translate(msg string) {
	m := lineRE.FindStringSubmatch(msg)
	if m == nil {
		ix.report(&keyError{msg: msg})
		return
	}
	var skip []string
	line, _ := strconv.Atoi(m[1])
	e := &keyError{line: line, msg: m[2]}
	find := func(match func(en entry) bool) (entry, bool) {
		i := slices.IndexFunc(ix.entries, match)
		if i < 0 {
			return entry{}, false
		}
		return ix.entries[i], true
	}
	if f := unknownRE.FindStringSubmatch(m[2]); f != nil {
		e.path, e.msg = f[1], "unknown key; the keys allowed here are "+strings.Join(knownKeys[f[2]], ", ")
		if en, ok := find(func(en entry) bool { return en.key != nil && en.key.Line == line && en.key.Value == f[1] }); ok {
			e.path = en.path
		}
	} else if f := dupRE.FindStringSubmatch(m[2]); f != nil {
		key, _ := strconv.Unquote(f[1])
		if en, ok := find(func(en entry) bool { return en.key != nil && en.key.Line == line && en.key.Value == key }); ok {
			e.path, e.msg = en.path, "duplicate key, first set at line "+f[2]
		}
		skip = append(skip, "")
	} else if t := typeRE.FindStringSubmatch(m[2]); t != nil {
		shown := strings.TrimSuffix(t[2], "...")
		if en, ok := find(func(en entry) bool {
			return en.val.Line == line && en.val.ShortTag() == t[1] && strings.HasPrefix(en.val.Value, shown)
		}); ok {
			e.path, e.msg = en.path, "must be "+describe(keyName(en.key), t[3])
			switch en.val.Kind {
			case yaml.ScalarNode:
				e.msg += fmt.Sprintf(" (got %q)", en.val.Value)
			case yaml.MappingNode:
				e.msg += " (got a mapping)"
			case yaml.SequenceNode:
				e.msg += " (got a list)"
			}
			if en.key == nil {
				skip = append(skip, en.parent)
			}
		}
	}
	ix.report(e)
	ix.undecoded = append(ix.undecoded, skip...)
}

// describe says what a key of the given Go type takes.
func describe(key, goType string) string {
	switch {
	case wholeNumbers[key] != "":
		return wholeNumbers[key]
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case knownKeys[goType] != nil:
		return "a mapping of keys"
	}
	return "a single value"
}

// percent parses a percentage written as text, reporting a bad one.
func (ix *nodeIndex) percent(at, s string, required bool) decimal.Decimal {
	if s == "" {
		if required {
			ix.report(&keyError{path: at, msg: `missing; send a percentage such as "7.25"`})
		}
		return decimal.Zero
	}
	d, err := money.ParseRate(s)
	if err != nil {
		ix.report(&keyError{path: at, msg: fmt.Sprintf(`must be a percentage such as "7.25", with at most 6 decimals (got %q)`, s)})
	}
	return d
}

// timestamp parses an optional RFC 3339 time, reporting a bad one.
func (ix *nodeIndex) timestamp(at, s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil && s != "" {
		ix.report(&keyError{path: at, msg: fmt.Sprintf("must be an RFC 3339 time such as 2025-01-01T00:00:00Z (got %q)", s)})
	}
	return t
}
