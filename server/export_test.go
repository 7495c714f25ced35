package server

// ConnectMCP, for the external tests, joins a client to an MCP server over
// in-memory transports (connectMCP).
var ConnectMCP = connectMCP

// LeanSchema, for the external tests, is the input schema go-sdk holds for
// a tool (leanSchema).
var LeanSchema = leanSchema

// DeeperThan, for the external tests, is the depth scan (deeperThan).
var DeeperThan = deeperThan

// RPCMethods, for the external tests, are the methods rpcErrors lets
// through to the MCP server, and whether each is a notification.
var RPCMethods = func() map[string]struct{ Notification bool } {
	out := make(map[string]struct{ Notification bool }, len(rpcMethods))
	for name, m := range rpcMethods {
		out[name] = struct{ Notification bool }{m.notification}
	}
	return out
}()
