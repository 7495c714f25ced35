package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
)

// CartTTL is how long a cart lives after its last change.
const CartTTL = 7 * 24 * time.Hour

// Cart statuses.
const (
	CartOpen     = "open"
	CartCanceled = "canceled"
)

// Cart is a buyer's basket: priced from the catalog and the policy whenever
// it is read, holding no stock. A checkout session made from it (CreateFromCart,
// then Create) takes the holds.
type Cart struct {
	ID        string
	Status    string
	Currency  string
	Buyer     *Buyer
	LineItems []LineItem
	// Totals are priced as a session's are, without shipping (a cart has no
	// address): items_base_amount, items_discount, subtotal, discount,
	// fulfillment (0), tax, total.
	Totals []Total
	// Messages say which lines cannot be bought now (out_of_stock) and why
	// a promotion does not apply.
	Messages  []Message
	PromoCode string
	// Discounts are its codes and what became of each.
	Discounts *Discounts
	ExpiresAt time.Time
}

// CartRequest is what creating or updating a cart sends; a nil field is
// left as it is.
type CartRequest struct {
	Items     *[]Item
	Buyer     *Buyer
	PromoCode *string
	// PromoCodes replace the codes, as Request's do.
	PromoCodes *[]string
}

// cartRow is a row of carts.
type cartRow struct {
	ID        string `gorm:"primaryKey"`
	Status    string
	Currency  string
	Items     []Item `gorm:"serializer:json;not null"`
	Buyer     *Buyer `gorm:"serializer:json;not null"`
	PromoCode string
	BuyerKey  string
	// BuyerAddress is the client address that created the cart, and
	// BuyerNetwork its IPv6 /48 (shop.NetworkOf), for the hourly caps per
	// address and per network (addrlimits.go).
	BuyerAddress string
	BuyerNetwork string
	// CheckoutID is the session last made from the cart (CreateFromCart).
	CheckoutID string
	CreatedAt  time.Time
	UpdatedAt  time.Time `gorm:"autoUpdateTime:false"`
	ExpiresAt  time.Time
}

func (cartRow) TableName() string { return "carts" }

var errNoCart = shop.Errorf(shop.NotFound, "$.id", "no open cart has this id; create one with create_cart")

// CreateCart opens a cart for req.
//
// Errors: those of Create for $.items, $.buyer.* and $.promo_code.
func (c *Checkout) CreateCart(ctx context.Context, req CartRequest) (*Cart, error) {
	if req.Items == nil {
		return nil, shop.Errorf(shop.Missing, "$.items", `send the variants to buy, such as [{"id": "enamel-camp-mug-slate", "quantity": 1}]`)
	}
	now := c.now().UTC()
	buyer := shop.BuyerFrom(ctx)
	row := cartRow{ID: shop.NewID("cart_"), Status: CartOpen, Currency: c.policy.Currency().Code(),
		BuyerKey: buyer.Key(), BuyerAddress: buyer.Address, BuyerNetwork: buyer.Network(), CreatedAt: now}
	if err := c.applyCart(&row, req); err != nil {
		return nil, err
	}
	row.UpdatedAt, row.ExpiresAt = now, now.Add(CartTTL)
	cart, err := c.priceCart(ctx, &row)
	if err != nil {
		return nil, err
	}
	err = c.transact(ctx, func(tx *gorm.DB) error {
		if err := c.creationCap(ctx, tx, "carts", "carts", buyer, now); err != nil {
			return err
		}
		if err := tx.WithContext(ctx).Create(&row).Error; err != nil {
			return fmt.Errorf("create cart: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cart, nil
}

// GetCart returns an open cart, priced now.
//
// Errors: not_found $.id.
func (c *Checkout) GetCart(ctx context.Context, id string) (*Cart, error) {
	row, err := c.loadCart(ctx, c.db, id)
	if err != nil {
		return nil, err
	}
	return c.priceCart(ctx, row)
}

// UpdateCart changes an open cart as req says (Items replaces the lines).
//
// Errors: those of CreateCart and GetCart.
func (c *Checkout) UpdateCart(ctx context.Context, id string, req CartRequest) (*Cart, error) {
	row, err := c.loadCart(ctx, c.db, id)
	if err != nil {
		return nil, err
	}
	if err := c.applyCart(row, req); err != nil {
		return nil, err
	}
	now := c.now().UTC()
	row.UpdatedAt, row.ExpiresAt = now, now.Add(CartTTL)
	cart, err := c.priceCart(ctx, row)
	if err != nil {
		return nil, err
	}
	// The last writer wins, as with any basket; a canceled cart stays so.
	res := c.db.WithContext(ctx).Model(&cartRow{}).Where("id = ? AND status = ?", row.ID, CartOpen).
		Updates(map[string]any{"items": marshal(row.Items), "buyer": marshal(row.Buyer), "promo_code": row.PromoCode,
			"updated_at": row.UpdatedAt, "expires_at": row.ExpiresAt})
	if res.Error != nil {
		return nil, fmt.Errorf("update cart: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, errNoCart
	}
	return cart, nil
}

// CancelCart ends a cart; canceling a canceled cart returns it as it is.
//
// Errors: not_found $.id.
func (c *Checkout) CancelCart(ctx context.Context, id string) (*Cart, error) {
	id = strings.TrimSpace(id)
	now := c.now().UTC()
	res := c.db.WithContext(ctx).Model(&cartRow{}).Where("id = ? AND status = ? AND expires_at > ?", id, CartOpen, now).
		Updates(map[string]any{"status": CartCanceled, "updated_at": now})
	if res.Error != nil {
		return nil, fmt.Errorf("cancel cart: %w", res.Error)
	}
	var row cartRow
	err := c.db.WithContext(ctx).Where("id = ? AND status = ?", id, CartCanceled).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, errNoCart
	}
	if err != nil {
		return nil, fmt.Errorf("read cart: %w", err)
	}
	return c.priceCart(ctx, &row)
}

// CreateFromCart makes a checkout session of an open cart: its items, its
// buyer (when it has one) and its codes win over req's, whose other fields
// (the address, the option) apply. While the session last made from the
// cart is neither completed nor ended, it is answered instead of a new one,
// as UCP's cart capability requires; agents converting the same cart at
// once get one session: each claims the cart by a conditional UPDATE on the
// checkout_id it read, and one that loses cancels the session it made and
// answers the winner's.
//
// Errors: not_found $.cart_id; those of Create.
func (c *Checkout) CreateFromCart(ctx context.Context, cartID string, req Request) (*Session, error) {
	row, err := c.loadCart(ctx, c.db, cartID)
	if err != nil {
		return nil, cartNotFound(err)
	}
	if s, ok := c.cartCheckout(ctx, row.CheckoutID); ok {
		return s, nil
	}
	items, codes := row.Items, splitCodes(row.PromoCode)
	req.Items, req.PromoCodes, req.PromoCode = &items, &codes, nil
	if row.Buyer != nil {
		req.Buyer = row.Buyer
	}
	s, err := c.Create(ctx, req)
	if err != nil {
		// A conversion at the same time may have won (and taken the room a
		// buyer's limits leave): its session is the answer then.
		if again, lerr := c.loadCart(ctx, c.db, cartID); lerr == nil && again.CheckoutID != row.CheckoutID {
			if won, ok := c.cartCheckout(ctx, again.CheckoutID); ok {
				return won, nil
			}
		}
		return nil, err
	}
	res := c.db.WithContext(ctx).Model(&cartRow{}).Where("id = ? AND checkout_id = ?", row.ID, row.CheckoutID).
		Update("checkout_id", s.ID)
	if res.Error != nil {
		return nil, fmt.Errorf("claim cart %s: %w", row.ID, res.Error)
	}
	if res.RowsAffected == 1 {
		return s, nil
	}
	// Another conversion claimed the cart first: its session is the cart's.
	if _, err := c.Cancel(ctx, s.ID); err != nil {
		c.logger.WarnContext(ctx, "cancel the checkout of a cart converted twice", "session", s.ID, "err", err)
	}
	if row, err = c.loadCart(ctx, c.db, cartID); err != nil {
		return nil, cartNotFound(err)
	}
	if won, ok := c.cartCheckout(ctx, row.CheckoutID); ok {
		return won, nil
	}
	return nil, shop.Errorf(shop.Conflict, "$.cart_id", "the cart is being converted by another request right now; retry")
}

// cartCheckout is the session id names when it is neither completed nor
// ended.
func (c *Checkout) cartCheckout(ctx context.Context, id string) (*Session, bool) {
	if id == "" {
		return nil, false
	}
	s, err := c.Get(ctx, id)
	if err != nil || s.Status.Final() {
		return nil, false
	}
	return s, true
}

// cartNotFound names cart_id as the field at fault of a cart not found.
func cartNotFound(err error) error {
	if shop.ErrorCode(err) == shop.NotFound {
		return shop.Errorf(shop.NotFound, "$.cart_id", "no open cart has this id; create one with create_cart or send line_items")
	}
	return err
}

func (c *Checkout) loadCart(ctx context.Context, db *gorm.DB, id string) (*cartRow, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, shop.Errorf(shop.Missing, "$.id", "send the cart's id (cart_…) from create_cart")
	}
	var row cartRow
	err := db.WithContext(ctx).Where("id = ? AND status = ? AND expires_at > ?", id, CartOpen, c.now().UTC()).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, errNoCart
	}
	if err != nil {
		return nil, fmt.Errorf("read cart: %w", err)
	}
	return &row, nil
}

// applyCart validates req as apply does a session's and merges it into row.
func (c *Checkout) applyCart(row *cartRow, req CartRequest) error {
	var st state
	if err := c.apply(&st, Request{Items: req.Items, Buyer: req.Buyer, PromoCode: req.PromoCode, PromoCodes: req.PromoCodes}); err != nil {
		return err
	}
	if req.Items != nil {
		row.Items = st.Items
	}
	if req.Buyer != nil {
		row.Buyer = st.Buyer
	}
	if req.PromoCode != nil || req.PromoCodes != nil {
		row.PromoCode = st.PromoCode
	}
	return nil
}

// priceCart prices a cart's lines from the catalog as a session's are,
// without an address, and says which lines the stock not held by others
// does not cover.
func (c *Checkout) priceCart(ctx context.Context, row *cartRow) (*Cart, error) {
	ids := make([]string, len(row.Items))
	for i, it := range row.Items {
		ids[i] = it.ID
	}
	items, err := c.catalog.Items(ctx, c.db, ids)
	if err != nil {
		return nil, err
	}
	var problems []Message
	lines := make([]cartLine, len(row.Items))
	for i, it := range row.Items {
		v, ok := items[it.ID]
		if !ok {
			return nil, shop.Errorf(shop.Invalid, fmt.Sprintf("$.items[%d].id", i), "no variant has id %q; get variant ids from get_product", it.ID)
		}
		lines[i] = cartLine{VariantID: it.ID, Quantity: it.Quantity, Name: v.Name, Description: v.Description, Images: v.Images, UnitAmount: v.Price}
		if it.Quantity > v.Available {
			problems = append(problems, outOfStock(i, v.Name, v.Available))
		}
	}
	in := pricingInput{Policy: c.policy, Lines: lines, Now: c.now()}
	if in.Promos, err = c.promoInputs(ctx, c.db, row.PromoCode); err != nil {
		return nil, err
	}
	pr := price(in)
	return &Cart{ID: row.ID, Status: row.Status, Currency: row.Currency, Buyer: row.Buyer, LineItems: pr.LineItems,
		Totals: pr.Totals, Messages: append(problems, pr.Messages...), PromoCode: pr.Promo,
		Discounts: discountsOf(row.PromoCode, pr.Applied, pr.Rejected), ExpiresAt: row.ExpiresAt}, nil
}

// deleteOldCarts deletes the carts past their expiry, and those canceled
// before cutoff: a cart holds nothing and nothing refers to it.
func (c *Checkout) deleteOldCarts(ctx context.Context, cutoff time.Time) error {
	err := c.db.WithContext(ctx).Where("expires_at <= ? OR (status = ? AND updated_at <= ?)", c.now().UTC(), CartCanceled, cutoff).
		Delete(&cartRow{}).Error
	if err != nil {
		return fmt.Errorf("delete old carts: %w", err)
	}
	return nil
}
