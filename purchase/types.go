package purchase

import "shop/contract"

// The contract's shapes (docs/buying.md), which this client decodes the
// shop's answers into, are package contract's: declared once for the shop
// and its clients. The run checks what the shop sends (every figure and
// identity, check.go), not what its Go types say.

// Address is a postal address, as the client sends it.
type Address = contract.Address
