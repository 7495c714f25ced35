package feed

import (
	"slices"
	"testing"
)

// TestExportArgs: the flags of `shop feed export` come out of the command
// line in each of their spellings, leaving the rest; a missing value or an
// unknown format is refused, saying so.
func TestExportArgs(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		format   Format
		out, err string
		rest     []string
	}{
		{args: nil, format: JSONL, rest: []string{}},
		{args: []string{"--db", "x.db", "--format", "json", "-out=feed.json"}, format: JSON, out: "feed.json", rest: []string{"--db", "x.db"}},
		{args: []string{"--format=jsonl", "--out", "-"}, format: JSONL, out: "-", rest: []string{}},
		{args: []string{"--format", "csv"}, err: `--format "csv": use jsonl or json`},
		{args: []string{"--out"}, err: "--out needs a value"},
	} {
		format, out, rest, err := ExportArgs(tc.args)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: err %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || format != tc.format || out != tc.out || !slices.Equal(rest, tc.rest) {
			t.Errorf("%v: %q %q %q %v, want %q %q %q", tc.args, format, out, rest, err, tc.format, tc.out, tc.rest)
		}
	}
}
