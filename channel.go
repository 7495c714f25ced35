package shop

import "context"

// Channel names the endpoint, and so the dialect, a checkout session came
// through; the session and the order made from it keep it, and staff see it.
type Channel string

// The channels of docs/architecture.md.
const (
	// ChannelMCP: /mcp, the ChatGPT Apps dialect (and stdio); the default.
	ChannelMCP Channel = "mcp"
	// ChannelACP: /acp/mcp, the Agentic Commerce Protocol's MCP binding.
	ChannelACP Channel = "acp"
	// ChannelUCP: /ucp/mcp, the Universal Commerce Protocol.
	ChannelUCP Channel = "ucp"
)

type channelKey struct{}

// WithChannel returns ctx carrying the channel a call came through.
func WithChannel(ctx context.Context, c Channel) context.Context {
	return context.WithValue(ctx, channelKey{}, c)
}

// ChannelFrom returns the channel ctx carries, ChannelMCP when none.
func ChannelFrom(ctx context.Context) Channel {
	if c, ok := ctx.Value(channelKey{}).(Channel); ok && c != "" {
		return c
	}
	return ChannelMCP
}

type agentKey struct{}

// WithAgent returns ctx carrying the calling agent's id: the name its
// bearer token was configured under (package server sets it on the
// agents' endpoints), or "anonymous" on an open endpoint.
func WithAgent(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, agentKey{}, id)
}

// AgentFrom returns the calling agent's id, "anonymous" when ctx carries none.
func AgentFrom(ctx context.Context) string {
	if id, ok := ctx.Value(agentKey{}).(string); ok && id != "" {
		return id
	}
	return "anonymous"
}
