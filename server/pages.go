package server

import (
	"net/http"
	"net/url"
	"strings"
)

// hstsValue is the Strict-Transport-Security of the pages of a shop served
// over https: a year, the shop's host only (its subdomains may be others').
const hstsValue = "max-age=31536000"

// pageHeaders wraps the handler of pages buyers open in a browser (the
// receipt, the payment pages) so that no other site can frame them to trick
// a click: every answer's Content-Security-Policy gets frame-ancestors
// 'none', merged into the policy the page sets (its other directives stay;
// a frame-ancestors of its own is replaced), X-Frame-Options is DENY for
// browsers without CSP, and, when the shop's public URL is https,
// Strict-Transport-Security keeps browsers on https.
func pageHeaders(publicURL string, next http.Handler) http.Handler {
	u, err := url.Parse(publicURL)
	hsts := err == nil && strings.EqualFold(u.Scheme, "https")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&pageWriter{ResponseWriter: w, hsts: hsts}, r)
	})
}

// pageWriter sets the page headers just before the handler's answer starts,
// over what the handler set.
type pageWriter struct {
	http.ResponseWriter
	hsts, done bool
}

func (w *pageWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		h := w.Header()
		csp := h.Values("Content-Security-Policy")
		if len(csp) == 0 {
			csp = []string{""}
		}
		for i := range csp {
			csp[i] = denyFraming(csp[i])
		}
		h["Content-Security-Policy"] = csp
		h.Set("X-Frame-Options", "DENY")
		if w.hsts {
			h.Set("Strict-Transport-Security", hstsValue)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *pageWriter) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *pageWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// denyFraming returns the content security policy csp with frame-ancestors
// 'none' in place of any frame-ancestors directive it has.
func denyFraming(csp string) string {
	var kept []string
	for _, d := range strings.Split(csp, ";") {
		d = strings.TrimSpace(d)
		if f := strings.Fields(d); len(f) == 0 || strings.EqualFold(f[0], "frame-ancestors") {
			continue
		}
		kept = append(kept, d)
	}
	return strings.Join(append(kept, "frame-ancestors 'none'"), "; ")
}
