package orders

import (
	"context"

	"gorm.io/gorm"
)

// The kinds of email a return sends its buyer.
const (
	emailReturnRequested = "return_requested"
	emailReturnRefunded  = "return_refunded"
	emailReturnRejected  = "return_rejected"
)

// returnView is what a return's email shows of it.
type returnView struct {
	ID, Refund, Instructions, Reason string
	Lines                            []emailLine
}

// returnEmails are the emails of a return's statuses; the others send none.
var returnEmails = map[ReturnStatus]string{
	ReturnRequested: emailReturnRequested, ReturnRefunded: emailReturnRefunded, ReturnRejected: emailReturnRejected,
}

// emailReturn writes, in tx, the buyer's email about a return as it now
// stands (requested, refunded, rejected; nothing for the others), with how
// to send the parcel (instructions) when requested.
func (o *Orders) emailReturn(ctx context.Context, tx *gorm.DB, r *orderRow, lines []lineRow, row *returnRow, instructions string) error {
	kind, ok := returnEmails[row.Status]
	if o.emails == nil || !ok {
		return nil
	}
	v, err := o.view(kind, r, lines)
	if err != nil {
		return err
	}
	rv := &returnView{ID: row.ID, Refund: v.Format(row.RefundAmount), Instructions: instructions, Reason: row.RejectReason}
	picked := pickedOf(lines, row.lines())
	for i, l := range lines {
		if q := picked[i]; q > 0 {
			rv.Lines = append(rv.Lines, emailLine{Name: l.Name, Quantity: q})
		}
	}
	v.Return = rv
	return o.send(ctx, tx, "order/"+r.ID+"/return/"+row.ID+"/"+string(row.Status), r.ID, r.Email, v)
}
