package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestStdio(t *testing.T) {
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
	go func() { done <- m.Run(ctx, []string{"stdio", "--db", filepath.Join(t.TempDir(), "shop.db")}) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "shop-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, s, "search_products", map[string]any{"query": "mug"})
	if page := structured[searchResult](t, res); res.IsError || page.Total < 3 {
		t.Fatalf("search over stdio: %s", text(res))
	}
	_ = s.Close()
	_ = clientOut.Close()
	select {
	case err := <-done:
		if err != nil && ctx.Err() == nil {
			t.Logf("shop stdio ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("shop stdio did not end when its input closed")
	}
}
