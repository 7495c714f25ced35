package idempotency

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// Canonical returns payload as canonical JSON, after RFC 8785 (JCS): object
// keys sorted, no white space, numbers written the way ECMAScript prints a
// double (1.0 and 1 both become 1). An empty payload is JSON null.
func Canonical(payload []byte) ([]byte, error) {
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 {
		payload = []byte("null")
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("canonical JSON: more than one JSON value")
	}
	var buf bytes.Buffer
	if err := writeCanonical(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeCanonical(buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeCanonical(buf, v[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			// Out of a double's range: the literal itself.
			buf.WriteString(string(v))
			return nil
		}
		buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case string:
		writeString(buf, v)
	case bool:
		buf.WriteString(strconv.FormatBool(v))
	case nil:
		buf.WriteString("null")
	default:
		return fmt.Errorf("canonical JSON: unexpected %T", v)
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always encodes
	buf.Write(b)
}
