package catalog

import (
	"strings"
	"testing"
)

func TestPlainText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"Plain", "A mug.  Holds 12 oz.", "A mug. Holds 12 oz."},
		{"Paragraphs", "<p>One.</p><p>Two &amp; three.</p>", "One.\nTwo & three."},
		{"Lists", "<ul><li>soft</li><LI class=x>warm</LI></ul>", "- soft\n- warm"},
		{"Breaks", "a<br>b<br/>c<BR />d", "a\nb\nc\nd"},
		{"ScriptsAndStyles", "<style>p{color:red}</style><p>Hi<script>alert('x')</script></p>", "Hi"},
		{"Attributes", `<img src=x onerror="alert(1)"><a href="javascript:alert(1)">link</a>`, "link"},
		{"Entities", "caf&eacute; &#8212; 5&nbsp;cm &lt;b&gt;", "café — 5 cm <b>"},
		{"BlankLines", "<p>a</p>\n\n\n<p>b</p>", "a\n\nb"},
		{"Unclosed", "a < b and <b>c", "a < b and c"},
		{"Empty", "<p> </p>", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := plainText(tc.in); got != tc.want {
				t.Errorf("plainText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestMakeID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"enamel-camp-mug", "enamel-camp-mug"},
		{"Enamel Camp Mug", "enamel-camp-mug"},
		{"Crème Brûlée / L", "creme-brulee-l"},
		{"MUG_01", "mug_01"},
		{"マグカップ", "p-8f78920144"},
	}
	for _, tc := range tests {
		if got := makeID(tc.in); got != tc.want || !ValidID(got) {
			t.Errorf("makeID(%q) = %q, want %q (valid)", tc.in, got, tc.want)
		}
	}
	long := makeID("a-very-long-handle-that-goes-on-and-on-and-on-well-past-sixty-four-characters")
	if len(long) > MaxIDLen || !ValidID(long) || long == makeID("a-very-long-handle-that-goes-on-and-on-and-on-well-past-sixty-four-characterz") {
		t.Errorf("a long name: %q", long)
	}
}

// TestValidIDPattern checks ValidID against idPattern, the expression the
// tools' schemas give hosts, on ids of every shape.
func TestValidIDPattern(t *testing.T) {
	tests := []string{"", "a", "0", "-", "_", "a-", "a_", "-a", "_a", "A", "aB", "mug-01_x", "mug 1", "mug.1", "mugé",
		"enamel-camp-mug-slate", "a\n", "\na", strings.Repeat("a", MaxIDLen), strings.Repeat("a", MaxIDLen+1)}
	for c := range 256 {
		tests = append(tests, string(rune(c)), "a"+string([]byte{byte(c)}), string([]byte{byte(c)})+"a")
	}
	for _, id := range tests {
		want := len(id) <= MaxIDLen && idPattern.MatchString(id)
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, idPattern says %v", id, got, want)
		}
	}
}
