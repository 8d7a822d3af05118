//go:build !unix

package platformtest

import "testing"

// closedAddr returns a loopback port just freed. Unlike on unix it is not
// kept taken: another test's listener may be given it meanwhile.
func closedAddr(t testing.TB) string {
	t.Helper()
	return freedAddr(t)
}
