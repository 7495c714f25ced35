package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/database"
	"shop/server"
)

// app is the shop wired together: policy, database and the parts of the business.
type app struct {
	cfg      *Config
	policy   *checkout.Policy
	db       *gorm.DB
	schema   int64
	catalog  *catalog.Catalog
	checkout *checkout.Checkout
}

// loadPolicy reads the merchant policy: the file named by --config, or the
// built-in demo merchant.
func loadPolicy(cfg *Config) (*checkout.Policy, error) {
	if cfg.PolicyFile == "" {
		return checkout.LoadPolicyFile(shop.Demo, "policy.yaml")
	}
	abs, err := filepath.Abs(cfg.PolicyFile)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	return checkout.LoadPolicyFile(os.DirFS(filepath.Dir(abs)), filepath.Base(abs))
}

// open loads the policy, opens and migrates the database and, when seed is
// set, imports the demo catalog into an empty one.
func (m *Main) open(ctx context.Context, cfg *Config, seed bool) (*app, error) {
	policy, err := loadPolicy(cfg)
	if err != nil {
		return nil, err
	}
	db, err := database.Open(ctx, cfg.DB, &database.Options{Logger: m.Logger})
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, policy: policy, db: db}
	if a.schema, err = database.Migrate(ctx, db); err != nil {
		a.close()
		return nil, err
	}
	a.catalog = catalog.New(db, policy.Currency(), &catalog.Options{PublicURL: cfg.PublicURL})
	a.checkout = checkout.New(db, policy, a.catalog, &checkout.Options{PublicURL: cfg.PublicURL, TTL: cfg.SessionTTL, Logger: m.Logger})
	if seed {
		start := time.Now()
		seeded, err := a.catalog.SeedIfEmpty(ctx, shop.Demo, "catalog.json")
		if err != nil {
			a.close()
			return nil, err
		}
		if seeded {
			m.Logger.Info("seeded the empty catalog with the demo products", "duration", time.Since(start).Round(time.Millisecond))
		}
	}
	return a, nil
}

func (a *app) close() {
	_ = database.Close(a.db)
}

// buyerMCP is the MCP server of the buyers' tools.
func (a *app) buyerMCP(m *Main) *mcp.Server {
	return server.NewMCP(server.MCPOptions{
		Name:    "shop",
		Title:   a.policy.Name,
		Version: version(),
		Instructions: fmt.Sprintf("%s sells physical goods. Search its catalog with search_products, "+
			"show details and variants with get_product, then build the buyer's order with create_checkout_session "+
			"and update_checkout_session until it is ready_for_payment. Amounts are integers in minor units of %s.",
			a.policy.Name, a.policy.Currency().Code()),
		Tools:  append(a.catalog.Tools(), a.checkout.Tools()...),
		Logger: m.Logger,
	})
}

// version is the module version the binary was built from, or "dev".
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
