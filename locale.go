package shop

import (
	"context"
	"regexp"
	"strings"
)

type localeKey struct{}

// localePattern is the shape of a BCP 47 tag the shop takes from a host:
// a language and up to three subtags ("de", "de-DE", "zh-Hant-TW").
var localePattern = regexp.MustCompile(`^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,3}$`)

// WithLocale returns ctx carrying the buyer's locale, a BCP 47 tag from
// the host (ChatGPT's _meta["openai/locale"], else the request's
// Accept-Language): tool texts write numbers and money in it. A tag of
// another shape ("" included) leaves ctx as it is.
func WithLocale(ctx context.Context, tag string) context.Context {
	tag = strings.ReplaceAll(strings.TrimSpace(tag), "_", "-")
	if !localePattern.MatchString(tag) {
		return ctx
	}
	return context.WithValue(ctx, localeKey{}, tag)
}

// LocaleFrom returns the buyer's locale ctx carries, "" when none.
func LocaleFrom(ctx context.Context) string {
	s, _ := ctx.Value(localeKey{}).(string)
	return s
}
