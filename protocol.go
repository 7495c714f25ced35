package shop

import (
	"embed"
	"encoding/json"
)

// ProtocolError is a tool's error that its protocol answers as a JSON-RPC
// error rather than as a tool result: the ACP binding answers -32000 with
// the ACP Error in data, and -32602 for a malformed call. Package server
// sends Code, Message and Data as they are; Err, when set, is the cause,
// which is logged and never sent. Status, when set, is the HTTP status the
// answer takes over streamable HTTP where the protocol gives one (UCP's
// 409 for its idempotency errors); 0 leaves JSON-RPC's 200.
type ProtocolError struct {
	Code    int64
	Message string
	Data    json.RawMessage
	Err     error
	Status  int
}

// Error returns the message.
func (e *ProtocolError) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *ProtocolError) Unwrap() error { return e.Err }

// Specs holds the specifications of other agents' protocols that the shop
// serves and checks itself against: testdata/acp holds the ACP JSON Schema,
// OpenRPC and MCP examples of 2026-04-17 (see testdata/acp/SOURCE.md).
//
//go:embed testdata/acp/*.json
var Specs embed.FS
