package orders

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/money"
)

// keyset is a listing read newest first by timeCol (ties by idCol,
// descending) in [from, to), limit rows (default def) after cursor, which
// must carry the fingerprint fp of the listing's tool and filters.
type keyset struct {
	timeCol, idCol string
	from, to       *time.Time
	limit          *int
	def            int
	cursor         string
	fp             uint64
}

// readPage reads a page of q's rows as k says, and the cursor of the next
// page ("" on the last); key gives a row's time and id.
func readPage[T any](q *gorm.DB, k keyset, key func(T) (time.Time, string)) ([]T, string, error) {
	limit := k.def
	if k.limit != nil {
		if limit = *k.limit; limit < 1 || limit > maxListLimit {
			return nil, "", shop.Errorf(shop.Invalid, "$.limit", "must be from 1 to %d (got %d)", maxListLimit, limit)
		}
	}
	if k.from != nil {
		q = q.Where(k.timeCol+" >= ?", *k.from)
	}
	if k.to != nil {
		q = q.Where(k.timeCol+" < ?", *k.to)
	}
	if k.cursor != "" {
		c, err := decodeListCursor(k.cursor, k.fp)
		if err != nil {
			return nil, "", err
		}
		at := time.Unix(0, c.At).UTC()
		q = q.Where("("+k.timeCol+" < ? OR ("+k.timeCol+" = ? AND "+k.idCol+" < ?))", at, at, c.ID)
	}
	var rows []T
	if err := q.Order(k.timeCol + " DESC, " + k.idCol + " DESC").Limit(limit + 1).Scan(&rows).Error; err != nil {
		return nil, "", fmt.Errorf("list by %s: %w", k.timeCol, err)
	}
	if len(rows) <= limit {
		return rows, "", nil
	}
	rows = rows[:limit]
	at, id := key(rows[limit-1])
	return rows, shop.EncodeCursor(listCursor{V: listCursorVersion, At: at.UnixNano(), ID: id, Query: k.fp}), nil
}

func listText(lines []string, none, next string) string {
	if len(lines) == 0 {
		return none
	}
	if next != "" {
		lines = append(lines, "More: pass next_cursor as cursor.")
	}
	return strings.Join(lines, "\n")
}

func auditEntry(r auditRow) AuditEntry {
	return AuditEntry{ID: r.ID, At: r.At.UTC(), Actor: r.Actor, Action: r.Action, OrderID: r.OrderID, SessionID: r.SessionID,
		Arguments: rawJSON(r.Arguments), Before: rawJSON(r.Before), After: rawJSON(r.After)}
}

// rawJSON is stored JSON as it is: null for nothing, a JSON string for
// anything that is not JSON, so that the answer stays valid.
func rawJSON(s string) json.RawMessage {
	switch {
	case s == "":
		return nil
	case json.Valid([]byte(s)):
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// PriceOf is amount minor units of a currency, as minor units and code when
// the shop does not know the currency.
func PriceOf(code string, amount int64) money.Price {
	if cur, err := money.Lookup(code); err == nil {
		return cur.Price(amount)
	}
	return money.Price{Amount: amount, Currency: code, Display: amountFormatter(code, "")(amount)}
}

// orderNumber reads "1001" or "#1001" as an order number.
func orderNumber(s string) (int64, bool) {
	s = strings.TrimPrefix(s, "#")
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// likeEscape escapes LIKE's wildcards with '!', the ESCAPE the queries name.
func likeEscape(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}

// timeRange reads an optional [from, to) pair of instants; to must be after from.
func timeRange(fromArg, toArg, fromParam, toParam string) (from, to *time.Time, err error) {
	if from, err = parseInstant(fromParam, fromArg); err != nil {
		return nil, nil, err
	}
	if to, err = parseInstant(toParam, toArg); err != nil {
		return nil, nil, err
	}
	if from != nil && to != nil && !to.After(*from) {
		return nil, nil, shop.Errorf(shop.Invalid, toParam, "must be after %s (the range includes its start, not its end)", fromParam[2:])
	}
	return from, to, nil
}

// parseInstant reads an RFC 3339 time or a YYYY-MM-DD date (that UTC day's
// start), nil for "". It rounds up to the microsecond, the precision both
// engines keep: "at or after" and "before" keep their meaning for stored times.
func parseInstant(param, s string) (*time.Time, error) {
	if s = strings.TrimSpace(s); s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		if t, err = time.Parse(dayLayout, s); err != nil {
			return nil, shop.Errorf(shop.Invalid, param, "send an %s", rangeHelp)
		}
	}
	t = t.UTC()
	if r := t.Truncate(time.Microsecond); !r.Equal(t) {
		t = r.Add(time.Microsecond)
	}
	return &t, nil
}

// parseDay reads a YYYY-MM-DD date as that UTC day's start, def for "".
func parseDay(param, s string, def time.Time) (time.Time, error) {
	if s = strings.TrimSpace(s); s == "" {
		return def, nil
	}
	t, err := time.Parse(dayLayout, s)
	if err != nil {
		return time.Time{}, shop.Errorf(shop.Invalid, param, "send a date as YYYY-MM-DD (UTC), such as 2025-10-01")
	}
	return t, nil
}

func instantKey(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

// listCursor is where a page of orders or events ends: the time and id of
// its last row and a fingerprint of the tool and filters it belongs to (not
// of the limit: the next page may be longer or shorter).
type listCursor struct {
	V     int    `json:"v"`
	At    int64  `json:"t"`
	ID    string `json:"i"`
	Query uint64 `json:"h"`
}

// fingerprint identifies a listing's tool and filters.
func fingerprint(parts ...string) uint64 {
	h := sha256.New()
	fmt.Fprintf(h, "%q", parts)
	return binary.BigEndian.Uint64(h.Sum(nil))
}

func decodeListCursor(s string, fp uint64) (*listCursor, error) {
	var c listCursor
	if len(s) > maxListCursorLen || !shop.DecodeCursor(s, &c) || c.V != listCursorVersion || c.ID == "" {
		return nil, shop.Errorf(shop.Invalid, "$.cursor", "not a cursor from this listing; send the next_cursor of the previous page, or none for the first page")
	}
	if c.Query != fp {
		return nil, shop.Errorf(shop.Invalid, "$.cursor", "this cursor belongs to other filters; send the same filters as the page that gave it, or omit the cursor")
	}
	return &c, nil
}
