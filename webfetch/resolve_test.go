package webfetch

import (
	"context"
	"errors"
	"testing"
)

// TestCheckTarget: a URL given now to be fetched later is refused when its
// host is, or resolves to, an address that is not public (loopback only
// where allowed), and when its host does not resolve; an https URL on a
// public address literal is taken without any lookup.
func TestCheckTarget(t *testing.T) {
	open, strict := New(Options{AllowLoopback: true}), New(Options{})
	cases := []struct {
		name string
		f    *Fetcher
		url  string
		want error // nil: taken
	}{
		{"PublicLiteral", strict, "https://93.184.216.34/hooks", nil},
		{"Private", strict, "https://10.0.0.7/hooks", ErrPrivateAddress},
		{"LinkLocal", strict, "https://169.254.169.254/latest", ErrPrivateAddress},
		{"Mapped", strict, "https://[::ffff:192.168.1.1]/hooks", ErrPrivateAddress},
		{"LoopbackName", strict, "https://localhost/hooks", ErrPrivateAddress},
		{"LoopbackAllowed", open, "http://localhost:8080/hooks", nil},
		{"PrivateWithLoopbackAllowed", open, "https://192.168.1.1/hooks", ErrPrivateAddress},
		{"Unresolvable", strict, "https://no-such-host.invalid/hooks", ErrBadURL},
		{"Plain", strict, "http://93.184.216.34/hooks", ErrBadURL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.f.CheckTarget(context.Background(), c.url)
			if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
				t.Errorf("CheckTarget(%q): %v, want %v", c.url, err, c.want)
			}
		})
	}
}
