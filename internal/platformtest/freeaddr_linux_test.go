package platformtest

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestFreeAddrStaysReserved: until a listener is started on it, the
// address refuses connections and its port is held, so the system gives
// it to no listener on port 0; the listener started on the address binds
// it and is reached there. Before, the port was only freed, and a test
// running meanwhile could be given it (TestCIExampleNightlyRuns's
// receiver listens some 40-400 ms after it takes the address, while the
// package's other tests start their simulators).
func TestFreeAddrStaysReserved(t *testing.T) {
	t.Parallel()
	addr := FreeAddr(t)
	refuses(t, addr)
	// A port a socket holds is one the system does not pick for a
	// listener on port 0 (inet_csk_find_open_port); a socket that does
	// not share the port (no SO_REUSEADDR) sees the holder as refused
	// binding.
	if err := bindExclusive(addr); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("binding %s alone: %v, want the address in use: the port is not held", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the listener the address is for: %v", err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s once it listens: %v", addr, err)
	}
	c.Close()
}

// bindExclusive binds a socket without SO_REUSEADDR to addr, and closes it.
func bindExclusive(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host).To4()
	if ip == nil {
		return errors.New("not an IPv4 address: " + addr)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	return syscall.Bind(fd, &syscall.SockaddrInet4{Port: p, Addr: [4]byte(ip)})
}
