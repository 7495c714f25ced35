package catalog

import (
	"html"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
)

// Descriptions in platforms' exports are HTML written by merchants (and
// their apps). The shop keeps plain text: bluemonday's strict policy drops
// every tag, and the content of scripts and styles, after block ends have
// become line breaks, so paragraphs and list items stay apart.

var (
	strictHTML = bluemonday.StrictPolicy()
	// blockEnd matches the tags after which text goes on a new line.
	blockEnd = regexp.MustCompile(`(?i)<\s*(?:br|hr|/p|/div|/li|/h[1-6]|/tr|/blockquote|/ul|/ol|/table|/section|/article)\b[^>]*>`)
	// listItem matches the start of a list item, which becomes "- ".
	listItem  = regexp.MustCompile(`(?i)<\s*li\b[^>]*>`)
	spaceRuns = regexp.MustCompile(`[ \t\f\v\x{a0}]+`)
)

// plainText is the plain text of an HTML description: no markup, entities
// decoded, spaces collapsed, one blank line at most between paragraphs.
func plainText(desc string) string {
	if strings.ContainsAny(desc, "<&") {
		desc = listItem.ReplaceAllString(blockEnd.ReplaceAllString(desc, "$0\n"), "$0- ")
		desc = html.UnescapeString(strictHTML.Sanitize(desc))
	}
	lines := strings.Split(strings.ReplaceAll(desc, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = strings.TrimSpace(spaceRuns.ReplaceAllString(l, " "))
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
