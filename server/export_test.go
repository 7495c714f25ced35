package server

// ConnectMCP, for the external tests, joins a client to an MCP server over
// in-memory transports (connectMCP).
var ConnectMCP = connectMCP
