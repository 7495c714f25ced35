package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/mcptest"
)

func TestStdio(t *testing.T) {
	for _, tc := range []struct{ command, tool string }{
		{"stdio", "search_products"},
		{"admin", "list_orders"}, // as the owner, with no token
	} {
		t.Run(tc.command, func(t *testing.T) { stdioRoundTrip(t, tc.command, tc.tool) })
	}
}

func stdioRoundTrip(t *testing.T, command, tool string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	m := &Main{
		Stdin: serverIn, Stdout: serverOut, Stderr: io.Discard,
		Getenv: func(string) string { return "" },
		Logger: slog.New(slog.DiscardHandler),
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, []string{command, "--db", filepath.Join(t.TempDir(), "shop.db")}) }()

	client := mcptest.NewClient(t, "shop-test", nil)
	s, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, s, tool, map[string]any{})
	if res.IsError {
		t.Fatalf("%s over stdio: %s", tool, text(res))
	}
	_ = s.Close()
	_ = clientOut.Close()
	select {
	case err := <-done:
		if err != nil && ctx.Err() == nil {
			t.Logf("shop %s ended: %v", command, err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("shop %s did not end when its input closed", command)
	}
}
