//go:build unix

package platformtest

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestClosedAddrStaysClosed: the address refuses connections, and no
// listener can be given its port while the test runs. Before, the port
// was only freed: under go test -parallel 32 a parallel test's simulator
// or hostile server listened on it and answered for the platform that
// was down (TestWebhookRegistrationPlatformDown, TestRerunFailedRunsWhat-
// TheStopLeftUnrun: a 500 and a 404 instead of a refused connection).
func TestClosedAddrStaysClosed(t *testing.T) {
	t.Parallel()
	addr := ClosedAddr(t)
	refuses(t, addr)
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("a listener was given %s while the test ran", addr)
	}
}

// refuses checks that nothing answers at addr: a dial is refused.
func refuses(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("%s accepted a connection before anything listened on it", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v, want the connection refused", addr, err)
	}
}
