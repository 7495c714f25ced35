package catalog

import (
	"context"
	"log/slog"
	"time"

	"shop"
)

// Prepare brings the catalog up to date when the shop starts: products
// imported before migration 00009 get their image hosts (the widgets' CSP),
// and, when seed is set, an empty catalog receives the demo merchant's
// products (shop.Demo's catalog.json). It logs what it did.
func (c *Catalog) Prepare(ctx context.Context, seed bool, logger *slog.Logger) error {
	if n, err := c.ResolveImageOrigins(ctx); err != nil {
		return err
	} else if n > 0 {
		logger.Info("computed the image hosts of products imported before they were kept", "products", n)
	}
	if !seed {
		return nil
	}
	start := time.Now()
	seeded, err := c.SeedIfEmpty(ctx, shop.Demo, "catalog.json")
	if err != nil {
		return err
	}
	if seeded {
		logger.Info("seeded the empty catalog with the demo products", "duration", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
