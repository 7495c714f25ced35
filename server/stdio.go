package server

import (
	"fmt"
	"io"
	"net"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is an MCP transport over r and w, such as a command's stdin and
// stdout, which closing the session leaves open (they may be the process's
// own).
func Stdio(r io.Reader, w io.Writer) mcp.Transport {
	return &mcp.IOTransport{Reader: readCloser{r}, Writer: writeCloser{w}}
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }

// LocalURL is the base URL of a listener at addr, for a shop given no
// public URL: http://127.0.0.1 and its port when it listens on every
// address (port 8000 when addr is no TCP address).
func LocalURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		port := 8000
		if ok {
			port = tcp.Port
		}
		return fmt.Sprintf("http://127.0.0.1:%d", port)
	}
	return "http://" + addr.String()
}
