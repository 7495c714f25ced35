package catalog

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Field weights: a term in the title counts most, then the category, the
// options (names and values), the description. A product's weight for a term
// is the sum over the fields it appears in.
const (
	weightTitle       = 10
	weightCategory    = 6
	weightOption      = 3
	weightDescription = 1
)

// maxTermLen bounds an indexed term; longer words are cut to it.
const maxTermLen = 32

// stopWords are words too common to narrow a search; they are neither indexed
// nor required of a match.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true,
	"by": true, "for": true, "from": true, "has": true, "in": true, "is": true, "it": true,
	"its": true, "of": true, "on": true, "or": true, "that": true, "the": true, "this": true,
	"to": true, "with": true, "your": true, "you": true, "our": true, "me": true, "i": true,
	"some": true, "any": true, "show": true, "find": true, "want": true,
}

// tokenize splits text into search terms: lower case, accents removed
// ("crème" → "creme"), only the letters a–z and digits, stop words dropped, a
// plural "s" folded ("mugs" → "mug"), in order of appearance, without repeats.
// Keeping terms to a–z0–9 makes their order the same under every database
// collation, which the prefix ranges of a search rely on.
func tokenize(text string) []string {
	folded := text
	if !ascii(text) { // ASCII has no accents to fold
		var err error
		if folded, _, err = transform.String(foldAccents(), text); err != nil {
			folded = text
		}
	}
	folded = strings.ToLower(folded)
	seen := map[string]bool{}
	var terms []string
	for _, word := range strings.FieldsFunc(folded, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if stopWords[word] {
			continue
		}
		term := stem(word)
		if len(term) > maxTermLen {
			term = term[:maxTermLen]
		}
		if !seen[term] {
			seen[term] = true
			terms = append(terms, term)
		}
	}
	return terms
}

// ascii reports whether s is all ASCII.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func foldAccents() transform.Transformer {
	return transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
}

// stem folds an English plural, much as the first step of Porter's stemmer:
// "glasses" → "glass", "berries" → "berry", "boxes" → "box", "dishes" →
// "dish", "mugs" → "mug". Words ending in ss, us or is, and words of three
// letters or fewer, are left alone. Index and query fold alike, so a wrong
// guess still matches itself.
func stem(w string) string {
	switch {
	case len(w) <= 3 || !strings.HasSuffix(w, "s"):
		return w
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	}
	return w[:len(w)-1]
}

// indexTerms returns a product's terms with their weights.
func indexTerms(title, category, description string, options []map[string]string) map[string]int {
	weights := map[string]int{}
	add := func(text string, w int) {
		for _, t := range tokenize(text) {
			weights[t] += w
		}
	}
	add(title, weightTitle)
	add(category, weightCategory)
	var opts strings.Builder
	for _, o := range options {
		for k, v := range o {
			opts.WriteString(k + " " + v + " ")
		}
	}
	add(opts.String(), weightOption)
	add(description, weightDescription)
	return weights
}

// prefixEnd returns the smallest term greater than every term that starts
// with prefix, in the alphabet 0–9a–z, or "" when there is none ("zz…").
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		switch {
		case b[i] == '9':
			b[i] = 'a'
			return string(b[:i+1])
		case b[i] < 'z':
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}
