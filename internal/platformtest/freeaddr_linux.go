package platformtest

import "testing"

// freeAddr keeps the port bound, never listening, until t ends, by a
// socket with SO_REUSEADDR. Linux gives a listener on port 0 only a port
// no socket holds, so no other test's listener (in this process or
// another) is given this one; a listener on the address itself binds it
// still, since package net sets SO_REUSEADDR on its listeners and Linux
// lets sockets that all have it share a port none of them listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	return boundAddr(t, true)
}
