package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The floor: the shop's go-sdk server setup (server.NewMCP's mcp.NewServer
// options, server's streamable handler options: stateless, JSON responses,
// the body limit) serving one tool that does nothing. The bench runs it as a
// child process, `shop bench --serve-noop`, so that its CPU time and RSS are
// read from /proc exactly as the shop's are, and so that it runs with the
// garbage-collector settings `shop serve` takes (the command tunes them
// before it calls FloorServer.Serve). It has none of the shop's HTTP
// middleware (Host and Origin checks, rate limit, security headers): those
// are the shop's own cost, measured in the shop.

// noopTool is the floor's one tool.
const noopTool = "noop"

// FloorServer is the floor's server process.
type FloorServer struct {
	// Addr is where it listens.
	Addr string
	// Out receives the line "listen=http://ADDR" once it listens.
	Out    io.Writer
	Logger *slog.Logger
	// MaxBodyBytes is the shop's limit of a request body, which the floor
	// takes too.
	MaxBodyBytes int64
	// Version is the server's version in its initialize answer.
	Version string
	// Answers, when not empty, are what the tool answers when asked for
	// one by its index (the echo floor: echo.go); without them, or when a
	// call asks for none, it answers "ok".
	Answers []echoAnswer
}

// floorStartTimeout bounds the floor process's start.
const floorStartTimeout = 15 * time.Second

// Serve prints "listen=http://ADDR" on f.Out and serves until ctx is done.
func (f FloorServer) Serve(ctx context.Context) error {
	ln, err := net.Listen("tcp", f.Addr)
	if err != nil {
		return fmt.Errorf("bench floor: listen on %s: %w", f.Addr, err)
	}
	defer ln.Close()
	hs := &http.Server{
		Handler:           f.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(f.Logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	fmt.Fprintf(f.Out, "listen=http://%s\n", ln.Addr())
	select {
	case err := <-errc:
		return fmt.Errorf("bench floor: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("bench floor: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("bench floor: serve: %w", err)
	}
	return nil
}

// handler is the floor's /mcp: the shop's server options, one tool
// answering a text block (or one of f.Answers).
func (f FloorServer) handler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "shop-bench-floor", Version: f.Version},
		&mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	srv.AddTool(&mcp.Tool{
		Name:        noopTool,
		Description: "Does nothing: the floor of a tool call.",
		InputSchema: map[string]any{"type": "object"},
	}, f.answer)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     f.Logger,
		MaxRequestBodyBytes:        f.MaxBodyBytes,
		DisableLocalhostProtection: true,
	}))
	return mux
}

// answer is the floor's tool: the answer a call asks for by its index
// when there are answers to give, else "ok" (its arguments unread).
func (f FloorServer) answer(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if len(f.Answers) > 0 {
		var args map[string]int
		if json.Unmarshal(req.Params.Arguments, &args) == nil {
			if n, ok := args[echoArg]; ok && n >= 0 {
				return f.Answers[n%len(f.Answers)].result(), nil
			}
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}

// FloorProcess starts the floor as a child process of this executable,
// which must serve it when run as `EXE bench --serve-noop --addr ADDR`
// (FloorServer).
type FloorProcess struct{}

// Start starts the process and answers its /mcp address, its process id and
// the function that stops it.
func (FloorProcess) Start(ctx context.Context, answers string) (string, int, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", 0, nil, fmt.Errorf("find this executable: %w", err)
	}
	args := []string{"bench", "--serve-noop", "--addr", "127.0.0.1:0"}
	if answers != "" {
		args = append(args, "--answers", answers)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, fmt.Errorf("start %s: %w", exe, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listen="); ok {
				urlc <- u + "/mcp"
			}
		}
	}()
	select {
	case u := <-urlc:
		return u, cmd.Process.Pid, stop, nil
	case <-time.After(floorStartTimeout):
	case <-ctx.Done():
	}
	stop()
	return "", 0, nil, fmt.Errorf("the floor process (%s bench --serve-noop) printed no listen line in %s", exe, floorStartTimeout)
}
