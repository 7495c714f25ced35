package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
)

// ListenAddr is where /metrics listens for `shop serve --addr shopAddr
// --metrics-addr flag`: flag, else 127.0.0.1 and the port after shopAddr's
// (any free port when shopAddr's is 0); "" for nowhere (flag "off"). The
// error names the flag to set.
func ListenAddr(flag, shopAddr string) (string, error) {
	switch flag {
	case "off":
		return "", nil
	case "":
		_, p, err := net.SplitHostPort(shopAddr)
		port, perr := strconv.Atoi(p)
		if err != nil || perr != nil || port >= 65535 {
			return "", fmt.Errorf("--addr %q has no port the metrics could follow: set --metrics-addr", shopAddr)
		}
		if port > 0 {
			port++
		}
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
	}
	if _, _, err := net.SplitHostPort(flag); err != nil {
		return "", fmt.Errorf("--metrics-addr %q: send host:port, such as 127.0.0.1:9464, or off", flag)
	}
	return flag, nil
}

// Listen starts serving the metrics on addr (ListenAddr's) until ctx is
// done, to the Hosts Serve accepts (hosts: the names beside localhost and
// IP addresses), logging an error that ends it, and returns their URL;
// "off" when addr is "".
func (m *Metrics) Listen(ctx context.Context, addr string, hosts []string, logger *slog.Logger) (string, error) {
	if addr == "" {
		return "off", nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("metrics: listen on %s: %w (choose another with --metrics-addr, or --metrics-addr off)", addr, err)
	}
	go func() {
		if err := m.Serve(ctx, ln, hosts); err != nil {
			logger.Error("metrics", "err", err)
		}
	}()
	return "http://" + ln.Addr().String() + "/metrics", nil
}
