package orders

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database"
)

// A linked buyer's orders (CONTRACT.md §10): those their account's sessions
// made (orders.account_id) and those placed, as a guest or otherwise, with
// the email their login verified.

// Bounds of a linked buyer's order listing: each order comes whole, with
// its lines and tracking.
const (
	buyerOrdersDefault = 10
	// MaxBuyerOrders bounds a page of list_my_orders.
	MaxBuyerOrders = 50
)

// buyerCond selects the orders of an account id and its verified email.
const buyerCond = "(account_id = ? OR email = ?)"

// errNotYours is the one answer for an order a linked buyer may not see,
// whether it does not exist or is someone else's.
var errNotYours = shop.Errorf(shop.NotFound, "$.order_id",
	"no order of yours has this id; list_my_orders lists them")

// setAccount records in tx that the account accountID placed order id,
// when the account still exists: an account deleted while its session was
// being paid leaves the order a guest's (its email kept), as deleting an
// account leaves its older orders (ForgetAccount). The subquery reads the
// accounts table, which package accounts keeps, instead of a foreign key
// that would make the order fail to be written after the charge.
func setAccount(tx *gorm.DB, id, accountID string) error {
	if accountID == "" {
		return nil
	}
	err := tx.Exec("UPDATE orders SET account_id = (SELECT a.id FROM accounts a WHERE a.id = ?) WHERE id = ?", accountID, id).Error
	if err != nil {
		return fmt.Errorf("order %s: record account: %w", id, err)
	}
	return nil
}

// AccountPaid reports, in db (a transaction or the pool), whether the
// account accountID has placed a paid order: an account earns the shop's
// trust by paying (CONTRACT.md §11). It is one probe of the orders_account
// index.
func (o *Orders) AccountPaid(ctx context.Context, db *gorm.DB, accountID string) (bool, error) {
	if accountID == "" {
		return false, nil
	}
	var n int64
	err := database.QueryRow(db.WithContext(ctx), "SELECT COUNT(*) FROM (SELECT 1 FROM orders WHERE account_id = ? LIMIT 1) paid", accountID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("orders of account %s: %w", accountID, err)
	}
	return n > 0, nil
}

// ForgetAccount clears, in tx, the account of every order accountID placed,
// for the account's deletion: the orders stay, with their email, for the
// merchant's books. It returns how many orders it changed.
func (o *Orders) ForgetAccount(ctx context.Context, tx *gorm.DB, accountID string) (int64, error) {
	res := tx.WithContext(ctx).Exec("UPDATE orders SET account_id = NULL WHERE account_id = ?", accountID)
	if res.Error != nil {
		return 0, fmt.Errorf("forget account %s on its orders: %w", accountID, res.Error)
	}
	return res.RowsAffected, nil
}

// ForBuyer returns a page of the orders of the linked account accountID
// whose verified email is email, newest first, each whole (lines, totals,
// tracking), and the cursor of the next page ("" on the last).
//
// Errors: invalid $.limit (1 to MaxBuyerOrders), invalid $.cursor.
func (o *Orders) ForBuyer(ctx context.Context, accountID, email string, limit *int, cursor string) ([]contract.Order, string, error) {
	if limit != nil && (*limit < 1 || *limit > MaxBuyerOrders) {
		return nil, "", shop.Errorf(shop.Invalid, "$.limit", "must be from 1 to %d (got %d)", MaxBuyerOrders, *limit)
	}
	email = normalizeEmail(email)
	q := o.db.WithContext(ctx).Table("orders").Where(buyerCond, accountID, email)
	k := keyset{timeCol: "created_at", idCol: "id", limit: limit, def: buyerOrdersDefault, cursor: cursor,
		fp: fingerprint("my_orders", accountID, email)}
	rows, next, err := readPage(q, k, func(r orderRow) (time.Time, string) { return r.CreatedAt, r.ID })
	if err != nil {
		return nil, "", err
	}
	out := make([]contract.Order, 0, len(rows))
	if len(rows) == 0 {
		return out, next, nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	var lines []lineRow
	if err := o.db.WithContext(ctx).Where("order_id IN ?", ids).Order("order_id, position").Find(&lines).Error; err != nil {
		return nil, "", fmt.Errorf("read the buyer's order lines: %w", err)
	}
	byOrder := map[string][]lineRow{}
	for _, l := range lines {
		byOrder[l.OrderID] = append(byOrder[l.OrderID], l)
	}
	tracks, err := tracking(ctx, o.db, ids)
	if err != nil {
		return nil, "", err
	}
	rets, err := returnsOf(ctx, o.db, ids)
	if err != nil {
		return nil, "", err
	}
	refunds, err := refundsOf(ctx, o.db, ids)
	if err != nil {
		return nil, "", err
	}
	for i := range rows {
		ord, err := o.order(&rows[i], byOrder[rows[i].ID])
		if err != nil {
			return nil, "", err
		}
		ord.Receipt.Tracking = tracks[rows[i].ID]
		ord.Receipt.Returns = rets[rows[i].ID]
		withRefunds(&ord.Receipt, refunds[rows[i].ID])
		out = append(out, *ord)
	}
	return out, next, nil
}

// ForBuyerByID returns the order id when it is one of the linked account's
// (ForBuyer's condition); otherwise not_found, the same for an order that
// does not exist and for another buyer's.
//
// Errors: missing or invalid $.order_id, not_found.
func (o *Orders) ForBuyerByID(ctx context.Context, accountID, email, id string) (*contract.Order, error) {
	id, err := orderID(id)
	if err != nil {
		return nil, err
	}
	return o.findOr(ctx, errNotYours, "id = ? AND "+buyerCond, id, accountID, normalizeEmail(email))
}

// tracking reads the parcels of the orders ids, oldest first, by order.
func tracking(ctx context.Context, db *gorm.DB, ids []string) (map[string][]contract.Tracking, error) {
	var rows []fulfilmentRow
	err := db.WithContext(ctx).Select("id, order_id, carrier, tracking_number, tracking_url, created_at").
		Where("order_id IN ?", ids).Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read tracking: %w", err)
	}
	out := make(map[string][]contract.Tracking, len(ids))
	for _, f := range rows {
		out[f.OrderID] = append(out[f.OrderID], trackingOf(f))
	}
	return out, nil
}

func trackingOf(f fulfilmentRow) contract.Tracking {
	return contract.Tracking{Carrier: f.Carrier, TrackingNumber: f.TrackingNumber, TrackingURL: f.TrackingURL, ShippedAt: f.CreatedAt.UTC()}
}

// Summary is a one-paragraph account of an order for people and models, as
// get_order's text: number, date, lines, shipping, total, tracking, payment
// and the receipt's address.
func Summary(ord *contract.Order, locale string) string { return summary(ord, locale) }
