package orders

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/database"
	"shop/payments"
)

// Refunder is what refunds need of the payment provider; the providers of
// package payments satisfy it. It is declared here, where it is used.
type Refunder interface {
	// Name is the provider's name, as orders record it ("stripe", "sandbox").
	Name() string
	// Refund refunds once per idempotency key, however often it is called.
	Refund(ctx context.Context, r payments.RefundRequest) (*payments.Refund, error)
}

// Admin runs the shop's orders for its staff: the tools of CONTRACT.md §6,
// each allowed to a role, every change audited in the transaction that
// makes it, and money or stock going out confirmed in two steps.
type Admin struct {
	orders   *Orders
	db       *gorm.DB
	catalog  *catalog.Catalog
	refunder Refunder
	now      func() time.Time
}

// NewAdmin returns the administration of o, restocking into cat and
// refunding through refunder.
func NewAdmin(o *Orders, cat *catalog.Catalog, refunder Refunder) *Admin {
	return &Admin{orders: o, db: o.db, catalog: cat, refunder: refunder, now: o.now}
}

// Tools returns the staff's tools (CONTRACT.md §6), for /admin/mcp and
// `shop admin` only: never the buyers' endpoint.
func (a *Admin) Tools() []shop.Tool {
	return append(a.readTools(), a.writeTools()...)
}

// Instructions introduce the staff's MCP server to the model: what its
// tools do for the shop named shopName, whose amounts are in currency.
func (a *Admin) Instructions(shopName, currency string) string {
	return fmt.Sprintf("The order administration of %s: find orders (list_orders, get_order), fulfil them, add notes, "+
		"refund, cancel and adjust stock (two steps: the first call previews and returns a confirm token), handle the returns buyers start "+
		"(list_returns, accept_return in two steps, reject_return), and read the sales "+
		"report and the audit log. Amounts are integers in minor units of %s.", shopName, currency)
}

// transact runs fn in a transaction of the shop's database, through
// database.Transact (retried on a serialization failure or a busy
// database, so fn must start from what it reads in tx), with the
// administration's clock.
func (a *Admin) transact(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return database.Transact(database.WithClock(ctx, a.now), a.db, fn)
}

// require returns the caller when its role allows need, else a forbidden
// error that names both.
func require(ctx context.Context, need shop.Role) (shop.Actor, error) {
	a, ok := shop.ActorFrom(ctx)
	if !ok {
		return a, shop.Errorf(shop.Forbidden, "", "admin tools need an admin token (Authorization: Bearer …)")
	}
	if !a.Role.Allows(need) {
		return a, shop.Errorf(shop.Forbidden, "", "this tool needs the %s role; your token has the %s role", need, a.Role)
	}
	return a, nil
}
