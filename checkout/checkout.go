// Package checkout turns a buyer's wish into a priced checkout session: the
// merchant policy (links, shipping, tax, promotions), pricing, stock holds and
// completion.
package checkout
