package feed

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
)

// ExportArgs reads the flags of `shop feed export` out of args:
// --format jsonl|json (default jsonl) and --out FILE (default "", stdout),
// as --name VALUE, --name=VALUE or -name; rest are the other arguments, for
// the command's other flags. The error says what is wrong with the command
// line.
func ExportArgs(args []string) (format Format, out string, rest []string, err error) {
	f, args, err := cutFlag(args, "format")
	if err != nil {
		return "", "", nil, err
	}
	out, rest, err = cutFlag(args, "out")
	if err != nil {
		return "", "", nil, err
	}
	switch Format(f) {
	case "":
		return JSONL, out, rest, nil
	case JSONL, JSON:
		return Format(f), out, rest, nil
	}
	return "", "", nil, fmt.Errorf("--format %q: use jsonl or json", f)
}

// Export is the writing of `shop feed export`: the feed in format to the
// file out (written whole or not at all, WriteFile), or to stdout when out
// is "" or "-", then how many products it holds on stderr.
func (f *Feed) Export(ctx context.Context, format Format, out string, stdout, stderr io.Writer) error {
	if out == "" || out == "-" {
		w := bufio.NewWriter(stdout)
		n, err := f.Write(ctx, w, format)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d products\n", n)
		return nil
	}
	n, err := f.WriteFile(ctx, out, format)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d products to %s\n", n, out)
	return nil
}

// cutFlag takes --name VALUE (or --name=VALUE, -name) out of args.
func cutFlag(args []string, name string) (string, []string, error) {
	var value string
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || flag != name {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return "", nil, fmt.Errorf("--%s needs a value", name)
			}
			i++
			v = args[i]
		}
		value = v
	}
	return value, rest, nil
}
