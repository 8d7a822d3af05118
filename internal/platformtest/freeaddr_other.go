//go:build !linux

package platformtest

import (
	"net"
	"testing"
)

// freeAddr returns a loopback port just freed: unlike on Linux it is not
// kept reserved, and another test's listener may be given it before the
// test's own listens (elsewhere sockets share a port only with
// SO_REUSEPORT, which package net does not set on its listeners).
func freeAddr(t testing.TB) string {
	t.Helper()
	return freedAddr(t)
}

// freedAddr returns a loopback port a listener held and let go.
func freedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
