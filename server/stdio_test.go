package server

import (
	"context"
	"net"
	"strings"
	"testing"
)

// TestLocalURL: a shop listening on every address is reached on loopback.
func TestLocalURL(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8000}, "http://127.0.0.1:8000"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 9000}, "http://127.0.0.1:9000"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 9001}, "http://127.0.0.1:9001"},
		{&net.UnixAddr{Name: "/tmp/shop.sock", Net: "unix"}, "http://127.0.0.1:8000"},
	} {
		if got := LocalURL(tc.addr); got != tc.want {
			t.Errorf("LocalURL(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// TestServePprofLoopbackOnly: profiles are never served beyond loopback.
func TestServePprofLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:6060", ":6060", "example.com:6060", "6060"} {
		err := servePprof(context.Background(), addr, nil)
		if err == nil || !strings.Contains(err.Error(), "SHOP_PPROF") || !strings.Contains(err.Error(), "127.0.0.1:6060") {
			t.Errorf("%s: %v, want a refusal naming SHOP_PPROF and a loopback example", addr, err)
		}
	}
}
