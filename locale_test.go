package shop_test

import (
	"context"
	"testing"

	"shop"
)

// TestWithLocale: a host's BCP 47 tag is kept (underscores read as
// hyphens); anything else leaves no locale.
func TestWithLocale(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"de-DE", "de-DE"}, {"ja", "ja"}, {"pt_BR", "pt-BR"}, {"", ""}, {"de-DE;q=0.9", ""}, {"<script>", ""}, {"toolongtag-x", ""},
	} {
		if got := shop.LocaleFrom(shop.WithLocale(context.Background(), tt.in)); got != tt.want {
			t.Errorf("WithLocale(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
