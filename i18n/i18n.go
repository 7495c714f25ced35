// Package i18n holds the words of the shop's own pages (the sandbox payment
// page, the receipt, the account sign-in) in the buyer's language: message
// catalogs for en, es, fr, de, ja and pt-BR (./messages/*.json, embedded),
// chosen from the request's Accept-Language with x/text's Matcher, English
// when the shop has none of the buyer's languages. A message is text with
// {placeholders}; a key ending in _one and _other is a plural, chosen by
// CLDR's rules for the language. A key the pages share with the widgets
// (widgets/web/src/lib/messages) has the widgets' text, which the tests
// check, so the buyer reads the same words in the widget and on the page.
package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

//go:embed messages/*.json
var files embed.FS

// Languages are the catalogs' BCP 47 tags, English first: the fallback.
var Languages = []string{"en", "es", "fr", "de", "ja", "pt-BR"}

// maxAcceptLanguage bounds the header read: a longer one is read as absent.
const maxAcceptLanguage = 1 << 10

var (
	catalogs = map[string]map[string]string{}
	// langs are the catalogs in use, in the order of Languages.
	langs, matcher = loadAll()
)

// loadAll reads every catalog, and makes the matcher of their languages.
func loadAll() ([]*Lang, language.Matcher) {
	var out []*Lang
	tags := make([]language.Tag, 0, len(Languages))
	for _, name := range Languages {
		m, err := load(name)
		if err != nil {
			panic(err)
		}
		catalogs[name] = m
		tag := language.MustParse(name)
		tags = append(tags, tag)
		out = append(out, &Lang{name: name, tag: tag, m: m})
	}
	return out, language.NewMatcher(tags)
}

// load reads the catalog of a language.
func load(name string) (map[string]string, error) {
	b, err := files.ReadFile("messages/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("i18n: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("i18n: messages/%s.json: %w", name, err)
	}
	return m, nil
}

// Lang is a catalog in use: the words of one language.
type Lang struct {
	name string
	tag  language.Tag
	m    map[string]string
}

// English is the English catalog.
var English = langs[0]

// Named is the catalog of one of Languages, English for any other name;
// there is one *Lang per language, so that l == English says English.
func Named(name string) *Lang {
	for _, l := range langs {
		if l.name == name {
			return l
		}
	}
	return langs[0]
}

// Match is the catalog that best serves an Accept-Language header's
// languages, English when none is close enough (or the header is absent,
// malformed or too long).
func Match(acceptLanguage string) *Lang {
	if acceptLanguage == "" || len(acceptLanguage) > maxAcceptLanguage {
		return English
	}
	wanted, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(wanted) == 0 {
		return English
	}
	_, i, conf := matcher.Match(wanted...)
	if conf == language.No {
		return English
	}
	return Named(Languages[i])
}

// FromRequest is the catalog of a request's Accept-Language.
func FromRequest(r *http.Request) *Lang {
	return Match(r.Header.Get("Accept-Language"))
}

// Tag is the catalog's BCP 47 tag, for <html lang>: "de", "pt-BR".
func (l *Lang) Tag() string { return l.name }

// Has reports whether the catalogs have a message under key.
func (l *Lang) Has(key string) bool {
	_, ok := catalogs["en"][key]
	return ok
}

// T is the message under key with its {placeholders} filled from args,
// pairs of a name and a value: T("pay", "total", "$12.00"). A key the
// catalogs lack (a bug the tests catch) shows as itself.
func (l *Lang) T(key string, args ...any) string {
	text, ok := l.m[key]
	if !ok {
		if text, ok = catalogs["en"][key]; !ok {
			text = key
		}
	}
	return fill(text, args)
}

// N is the plural message key_one, key_other… the form CLDR chooses for n
// in the language, with {n} and the other placeholders filled in.
func (l *Lang) N(key string, n int, args ...any) string {
	form := "other"
	if n >= 0 && plural.Cardinal.MatchPlural(l.tag, n, 0, 0, 0, 0) == plural.One {
		form = "one"
	}
	if _, ok := catalogs["en"][key+"_"+form]; !ok {
		form = "other"
	}
	return l.T(key+"_"+form, append([]any{"n", n}, args...)...)
}

// fill replaces each {name} of text with its value in args.
func fill(text string, args []any) string {
	if len(args) < 2 || !strings.Contains(text, "{") {
		return text
	}
	pairs := make([]string, 0, len(args))
	for i := 0; i+1 < len(args); i += 2 {
		pairs = append(pairs, "{"+fmt.Sprint(args[i])+"}", fmt.Sprint(args[i+1]))
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// Date is a day as the language writes it, in UTC: "2 January 2006",
// "2. Januar 2006", "2006年1月2日".
func (l *Lang) Date(t time.Time) string {
	t = t.UTC()
	months := strings.Split(l.T("months"), ",")
	month := t.Month().String()
	if len(months) == 12 {
		month = strings.TrimSpace(months[t.Month()-1])
	}
	return l.T("date", "day", t.Day(), "month", month, "month_number", int(t.Month()), "year", t.Year())
}

// DateTime is a day and a time of day in UTC: "2 January 2006, 15:04 UTC".
func (l *Lang) DateTime(t time.Time) string {
	return l.T("date_time", "date", l.Date(t), "time", t.UTC().Format("15:04"))
}

// Around is the message under key cut at its {placeholder}, the text
// before and the text after with their other placeholders filled from
// args, for a page that puts markup (a link) where placeholder is.
func (l *Lang) Around(key, placeholder string, args ...any) []string {
	before, after, _ := strings.Cut(l.T(key), "{"+placeholder+"}")
	return []string{fill(before, args), fill(after, args)}
}

// Country is the name of a country (an ISO 3166-1 alpha-2 code) in the
// language, as CLDR gives it ("Deutschland", "ドイツ"); the code itself when
// it names no region.
func (l *Lang) Country(code string) string {
	r, err := language.ParseRegion(code)
	if err != nil {
		return code
	}
	if name := display.Regions(l.tag).Name(r); name != "" {
		return name
	}
	return code
}
