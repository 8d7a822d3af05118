//go:build unix

package platformtest

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// closedAddr binds a TCP socket to a loopback port and never listens on
// it, until t ends: a connection to the port is refused, and the port
// stays taken, so no other test's listener is given it meanwhile and
// answers in the place of the platform that is down.
func closedAddr(t testing.TB) string {
	t.Helper()
	return boundAddr(t, false)
}

// boundAddr binds a TCP socket to a loopback port the system picks, and
// keeps it bound, never listening, until t ends. With reuse the socket
// has SO_REUSEADDR, as a listener of package net has: on Linux such a
// listener may then bind the port too (freeAddr).
func boundAddr(t testing.TB, reuse bool) string {
	t.Helper()
	// As package net does: no child process started meanwhile inherits
	// the socket before it is marked close-on-exec.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if reuse {
		if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
			t.Fatalf("setsockopt SO_REUSEADDR: %v", err)
		}
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind a loopback port: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("getsockname: %T, want an IPv4 address", sa)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in.Port))
}
