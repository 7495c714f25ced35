package catalog

import "sync"

// What resolve found of query terms, kept between searches. A term's
// resolution (the indexed word it is, the one word its prefix range holds,
// or a range of several) depends only on the set of indexed terms, which
// only an import changes, and every import raises the catalog's version in
// its transaction (bumpVersion). So resolutions are kept with the version
// they were read at (in resolve's own statement), and a search that used
// kept ones reads the version again in its page's statement, in the same
// snapshot as the page: a page read at another version, or with no row to
// tell (an empty page), is thrown away and the search runs again on terms
// resolved afresh. Each replica keeps its own, and none answers from
// resolutions that are not the catalog's of the page it answers.
//
// Kept, a search of words already seen runs one statement fewer (two instead
// of three with several words), the resolution being a noticeable part of a
// search's work on a small catalog.

// maxKnownTerms bounds the terms kept; past it they are all dropped and
// kept again as searches come.
const maxKnownTerms = 4096

// knownTerms are the resolutions of terms at one version of the catalog.
type knownTerms struct {
	mu      sync.Mutex
	version int64
	terms   map[string]termMatch // by the query's term
}

// lookup answers the kept resolutions of terms and the version they were
// read at; ok is false unless every term is kept.
func (k *knownTerms) lookup(terms []string) (matches []termMatch, version int64, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	matches = make([]termMatch, len(terms))
	for i, t := range terms {
		if matches[i], ok = k.terms[t]; !ok {
			return nil, 0, false
		}
	}
	return matches, k.version, true
}

// keep records the resolutions of terms read at version, dropping those of
// any other version.
func (k *knownTerms) keep(terms []string, matches []termMatch, version int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.terms == nil || version != k.version || len(k.terms)+len(terms) > maxKnownTerms {
		k.terms, k.version = make(map[string]termMatch, len(terms)), version
	}
	for i, t := range terms {
		k.terms[t] = matches[i]
	}
}

// forget drops the resolutions read at version (a page found the catalog at
// another, or could not tell).
func (k *knownTerms) forget(version int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if version == k.version {
		k.terms = nil
	}
}
