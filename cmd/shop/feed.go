package main

import (
	"context"

	"shop/feed"
)

// productFeed is the catalog's ACP product feed, its seller the merchant
// and its links the policy's pages.
func (a *app) productFeed(m *Main) *feed.Feed {
	return feed.New(a.catalog, feed.Options{
		Seller: a.policy.Name, PublicURL: a.cfg.PublicURL, Logger: m.Logger, Refresh: a.cfg.FeedRefresh,
		Links: feed.Pages(a.policy.Links).Links(), // the policy's Links, field for field
	})
}

// feedExport is `shop feed export [--format jsonl|json] [--out FILE]`.
func (m *Main) feedExport(ctx context.Context, args []string) error {
	format, out, args, err := feed.ExportArgs(args)
	if err != nil {
		return m.usageError("feed export", err.Error())
	}
	a, err := m.openLocal(ctx, "feed export", args)
	if err != nil {
		return err
	}
	defer a.close()
	return a.productFeed(m).Export(ctx, format, out, m.Stdout, m.Stderr)
}
