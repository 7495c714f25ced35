// Package orders keeps the shop's orders: each order and its lines as the
// buyer paid for them, the receipt (figures from the database, never from a
// caller), and the audit log of every change.
package orders
