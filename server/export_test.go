package server

// ConnectMCP, for the external tests, joins a client to an MCP server over
// in-memory transports (connectMCP).
var ConnectMCP = connectMCP

// LeanSchema, for the external tests, is the input schema go-sdk holds for
// a tool (leanSchema).
var LeanSchema = leanSchema

// DeeperThan, for the external tests, is the depth scan (deeperThan).
var DeeperThan = deeperThan
