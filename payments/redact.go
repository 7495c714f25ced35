package payments

import (
	"regexp"
	"strings"
)

// tokenPattern matches the payment tokens a provider's message may quote:
// Stripe payment methods (pm_…) and shared payment tokens (spt_…), the
// tokens the shop takes.
var tokenPattern = regexp.MustCompile(`\b(?:pm|spt)_[A-Za-z0-9_]+`)

// Redact returns s with every payment token in it shortened by
// RedactedToken: the tokens of the shapes the shop takes wherever they
// appear, and the given tokens (those of the request s is about) whatever
// their shape. Errors and log lines about a charge go through it, since a
// provider's message may quote the token it refused ("No such
// PaymentMethod: 'pm_…'").
func Redact(s string, tokens ...string) string {
	s = tokenPattern.ReplaceAllStringFunc(s, RedactedToken)
	for _, t := range tokens {
		if t != "" {
			s = strings.ReplaceAll(s, t, RedactedToken(t))
		}
	}
	return s
}

// RedactedToken is how a payment token is shown in logs: its first 8
// characters and "…" ("spt_1Abc…"), or for a token of 16 characters or
// fewer only its kind ("pm_…"), so that no log line holds enough of it to
// use or guess.
func RedactedToken(t string) string {
	if len(t) > 16 {
		return t[:8] + "…"
	}
	if i := strings.IndexByte(t, '_'); i >= 0 {
		return t[:i+1] + "…"
	}
	return "…"
}

// RedactError returns err with its text redacted as Redact does, still
// wrapping err for errors.Is and errors.As; nil for nil.
func RedactError(err error, tokens ...string) error {
	if err == nil {
		return nil
	}
	return &redactedError{err: err, msg: Redact(err.Error(), tokens...)}
}

type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
