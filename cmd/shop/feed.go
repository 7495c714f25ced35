package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"shop/feed"
)

// productFeed is the catalog's ACP product feed, its seller the merchant
// and its links the policy's pages.
func (a *app) productFeed(m *Main) *feed.Feed {
	l := a.policy.Links
	return feed.New(a.catalog, feed.Options{
		Seller: a.policy.Name, PublicURL: a.cfg.PublicURL, Logger: m.Logger,
		Links: []feed.Link{
			{Type: "terms_of_service", Title: "Terms of use", URL: l.TermsOfUse},
			{Type: "privacy_policy", Title: "Privacy policy", URL: l.PrivacyPolicy},
			{Type: "refund_policy", Title: "Return policy", URL: l.ReturnPolicy},
			{Type: "support", Title: "Support", URL: l.Support},
		},
	})
}

// feedExport is `shop feed export [--format jsonl|json] [--out FILE]`.
func (m *Main) feedExport(ctx context.Context, args []string) error {
	format, args, err := cutFlag(args, "format")
	if err != nil {
		return m.feedUsage(err.Error())
	}
	out, args, err := cutFlag(args, "out")
	if err != nil {
		return m.feedUsage(err.Error())
	}
	switch format {
	case "":
		format = string(feed.JSONL)
	case string(feed.JSONL), string(feed.JSON):
	default:
		return m.feedUsage(fmt.Sprintf("--format %q: use jsonl or json", format))
	}
	a, err := m.openLocal(ctx, "feed export", args)
	if err != nil {
		return err
	}
	defer a.close()
	if out == "" || out == "-" {
		w := bufio.NewWriter(m.Stdout)
		n, err := a.productFeed(m).Write(ctx, w, feed.Format(format))
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(m.Stderr, "wrote %d products\n", n)
		return nil
	}
	n, err := a.productFeed(m).WriteFile(ctx, out, feed.Format(format))
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stderr, "wrote %d products to %s\n", n, out)
	return nil
}

func (m *Main) feedUsage(problem string) error {
	fmt.Fprintf(m.Stderr, "shop feed export: %s\n\n%s", problem, usage)
	return errUsage
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
