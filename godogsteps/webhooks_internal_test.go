package godogsteps

import (
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWebhookReceiverCutsASlowBody: a team serves the receiver on a
// server of its own, which may set no read timeout (httptest's, or
// http.ListenAndServe's), at a public URL anyone can reach: a client
// that trickles a delivery's body is cut off at the receiver's own
// bound, as agenttest run's receiver cuts it, and answered 400. Before,
// each such client held a goroutine and a connection for as long as it
// cared to.
func TestWebhookReceiverCutsASlowBody(t *testing.T) {
	t.Parallel()
	rcv := NewWebhookReceiver("")
	// A bound already over when the handler starts cuts the first read
	// of the body: the test proves the bound is set on the connection
	// without waiting for one to run out.
	rcv.readTimeout = time.Nanosecond
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"type\":"); err != nil {
		t.Fatal(err)
	}
	// The deadline only keeps a receiver that never cuts the body from
	// hanging the test.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the receiver never cut the slow body (got %q)", got)
	}
	if !strings.HasPrefix(string(got), "HTTP/1.1 400") {
		t.Errorf("the receiver answered %q, want a 400", got)
	}
}
