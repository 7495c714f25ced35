package orders

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"shop"
)

// maxRangeLen bounds a time range's ends as list_orders and
// list_audit_events take them.
const maxRangeLen = 40

// viewer wraps a read tool's handler: any admin role may call it.
func viewer[In, Out any](h func(context.Context, In) (Out, string, error)) func(context.Context, In) (Out, string, error) {
	return func(ctx context.Context, in In) (Out, string, error) {
		if _, err := require(ctx, shop.Viewer); err != nil {
			var none Out
			return none, "", err
		}
		return h(ctx, in)
	}
}

// refinePage bounds a page's limit and cursor.
func refinePage(s *jsonschema.Schema, def int) {
	l := s.Properties["limit"]
	l.Minimum, l.Maximum, l.Default = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(maxListLimit)), []byte(fmt.Sprint(def))
	s.Properties["cursor"].MaxLength = jsonschema.Ptr(maxListCursorLen)
}

// refineRange bounds and describes the ends of a time range.
func refineRange(from, to *jsonschema.Schema, fromWhat, toWhat string) {
	from.MaxLength, from.Description = jsonschema.Ptr(maxRangeLen), fromWhat+" "+rangeHelp+"."
	to.MaxLength, to.Description = jsonschema.Ptr(maxRangeLen), toWhat+" "+rangeHelp+"."
}

// ListOrdersArgs are list_orders' filters and page.
type ListOrdersArgs struct {
	Status      string `json:"status,omitempty" jsonschema:"Only orders in this status."`
	Email       string `json:"email,omitempty" jsonschema:"Only orders placed with this email (case does not matter)."`
	Text        string `json:"text,omitempty" jsonschema:"An order number (1001), or part of the buyer's email or name."`
	CreatedFrom string `json:"created_from,omitempty"`
	CreatedTo   string `json:"created_to,omitempty"`
	AccountID   string `json:"account_id,omitempty" jsonschema:"Only orders placed by this linked buyer account, \"acct_…\" as get_order shows it."`
	Short       *bool  `json:"short,omitempty" jsonschema:"true: only orders short of stock (units paid for that were not on hand); false: only the others."`
	Limit       *int   `json:"limit,omitempty" jsonschema:"Rows per page."`
	Cursor      string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page, with the same filters."`
}

// RefineSchema bounds the filters as listOrders checks them.
func (ListOrdersArgs) RefineSchema(s *jsonschema.Schema) {
	p := s.Properties
	for _, st := range orderStatuses {
		p["status"].Enum = append(p["status"].Enum, string(st))
	}
	p["email"].MaxLength = jsonschema.Ptr(MaxEmailLen)
	p["account_id"].MaxLength = jsonschema.Ptr(maxAccountIDLen)
	p["text"].MaxLength = jsonschema.Ptr(maxSearchTextLen)
	refineRange(p["created_from"], p["created_to"], "Created at or after this", "Created before this")
	refinePage(s, listOrdersDefault)
}

// OrderDetailArgs are the staff's get_order arguments.
type OrderDetailArgs struct {
	OrderID        string `json:"order_id" jsonschema:"The order's id, \"ord_…\", as list_orders shows it."`
	AttemptsCursor string `json:"attempts_cursor,omitempty" jsonschema:"next_attempts_cursor of the order's previous get_order, for its older payment attempts."`
}

// RefineSchema bounds the id as ValidID checks it, and the cursor.
func (OrderDetailArgs) RefineSchema(s *jsonschema.Schema) {
	refineOrderID(s.Properties["order_id"])
	s.Properties["attempts_cursor"].MaxLength = jsonschema.Ptr(maxAttemptsCursorLen)
}

// SalesReportArgs are sales_report's days.
type SalesReportArgs struct {
	From string `json:"from,omitempty" jsonschema:"First day, YYYY-MM-DD (UTC); default 6 days before to."`
	To   string `json:"to,omitempty" jsonschema:"Last day, YYYY-MM-DD (UTC); default today."`
}

// dayPattern is a day as parseDay reads it.
const dayPattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`

// RefineSchema gives the days' pattern.
func (SalesReportArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["from"].Pattern, s.Properties["to"].Pattern = dayPattern, dayPattern
}

// AuditArgs are list_audit_events' filters and page.
type AuditArgs struct {
	OrderID string `json:"order_id,omitempty" jsonschema:"Only events of this order."`
	Actor   string `json:"actor,omitempty" jsonschema:"Only events by this actor, exactly as shown (\"owner:3f9a1c0b\", \"checkout\")."`
	Tool    string `json:"tool,omitempty" jsonschema:"Only this action (\"refund_order\", \"order.created\")."`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"Rows per page."`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page, with the same filters."`
}

// RefineSchema bounds the filters as listAuditEvents checks them.
func (AuditArgs) RefineSchema(s *jsonschema.Schema) {
	p := s.Properties
	p["order_id"].MaxLength, p["order_id"].Pattern = jsonschema.Ptr(maxIDLen), idPattern.String()
	p["actor"].MaxLength = jsonschema.Ptr(maxActorFilterLen)
	p["tool"].MaxLength = jsonschema.Ptr(maxActionFilterLen)
	refineRange(p["from"], p["to"], "At or after this", "Before this")
	refinePage(s, listEventsDefault)
}
