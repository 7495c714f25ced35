package catalog

import (
	"html"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/microcosm-cc/bluemonday"
)

// Descriptions in platforms' exports are HTML written by merchants (and
// their apps). The shop keeps plain text: bluemonday's strict policy drops
// every tag, and the content of scripts and styles, after block ends have
// become line breaks, so paragraphs and list items stay apart.

var strictHTML = bluemonday.StrictPolicy()

// blockEnds are the tags after which text goes on a new line (a closing
// tag, or br and hr).
var blockEnds = map[string]bool{
	"br": true, "hr": true, "/p": true, "/div": true, "/li": true, "/h1": true, "/h2": true, "/h3": true,
	"/h4": true, "/h5": true, "/h6": true, "/tr": true, "/blockquote": true, "/ul": true, "/ol": true,
	"/table": true, "/section": true, "/article": true,
}

// plainText is the plain text of an HTML description: no markup, entities
// decoded, spaces collapsed, one blank line at most between paragraphs.
func plainText(desc string) string {
	if strings.ContainsAny(desc, "<&") {
		desc = html.UnescapeString(strictHTML.Sanitize(markBlocks(desc)))
	}
	lines := strings.Split(strings.ReplaceAll(desc, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = strings.Join(strings.FieldsFunc(l, isSpace), " ")
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// plainTexts replaces each description by its plain text, on every core
// (a large export's descriptions take a good part of its reading).
func plainTexts(descs []*string) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(descs)); i = next.Add(1) - 1 {
				*descs[i] = plainText(*descs[i])
			}
		})
	}
	wg.Wait()
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\f' || r == '\v' || r == '\u00a0' }

// markBlocks puts a line break after each tag of blockEnds and "- " after
// each <li>, for the sanitiser to keep when it drops the tags.
func markBlocks(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/16)
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		tag := s[i : i+j+1]
		b.WriteString(s[:i+j+1])
		s = s[i+j+1:]
		switch name := tagName(tag); {
		case blockEnds[name]:
			b.WriteByte('\n')
		case name == "li":
			b.WriteString("- ")
		}
	}
}

// tagName is the lower-case name of a tag ("<P class=x>" is "p", "</LI>"
// is "/li").
func tagName(tag string) string {
	t := strings.TrimLeft(tag[1:], " ")
	end := 0
	if strings.HasPrefix(t, "/") {
		end = 1
	}
	for end < len(t) && (t[end] >= 'a' && t[end] <= 'z' || t[end] >= 'A' && t[end] <= 'Z' || t[end] >= '0' && t[end] <= '9') {
		end++
	}
	return strings.ToLower(t[:end])
}
