package webhook

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve starts a receiver behind Serve on loopback.
func serve(t *testing.T, opts ServerOptions) (*Receiver, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rcv := NewReceiver(Options{Secret: testSecret})
	srv := Serve(ln, rcv, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return rcv, ln.Addr().String()
}

// slowClient sends the headers of a delivery and the start of its body,
// then nothing more.
func slowClient(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"type\":"); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedBy reads c until the server closes it and returns what it sent.
// The deadline only keeps a broken server from hanging the test.
func closedBy(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server never closed the connection (got %q)", b)
	}
	return string(b)
}

// A client that trickles its body is cut off at the whole-request deadline
// and its delivery rejected.
func TestSlowBodyIsCutAtTheDeadline(t *testing.T) {
	t.Parallel()
	rcv, addr := serve(t, ServerOptions{RequestTimeout: 200 * time.Millisecond})
	c := slowClient(t, addr)
	got := closedBy(t, c)
	if !strings.HasPrefix(got, "HTTP/1.1 400") {
		t.Errorf("the server answered %q, want a 400 then the close", got)
	}
	rej := rcv.Rejections()
	if len(rej) != 1 || !strings.Contains(rej[0].Reason, "body could not be read") {
		t.Errorf("rejections %+v", rej)
	}
}

// Past the connection cap a new connection is answered 503 and closed at
// once; once the slow ones are cut, a valid signed delivery gets through.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	const max = 3
	rcv, addr := serve(t, ServerOptions{RequestTimeout: 300 * time.Millisecond, MaxConns: max})
	var slow []net.Conn
	for range max {
		slow = append(slow, slowClient(t, addr))
	}
	over, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	if got := closedBy(t, over); !strings.HasPrefix(got, "HTTP/1.1 503") {
		t.Fatalf("a connection over the cap got %q, want a 503", got)
	}
	for _, c := range slow {
		closedBy(t, c)
	}
	body := event("evt_9", "conversation.completed", "c9")
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hook", strings.NewReader(body))
	req.Header.Set("X-Vendor-Signature", Sign(testSecret, []byte(body)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("the valid delivery got %d", res.StatusCode)
	}
	if _, ok := rcv.Find("c9", "conversation.completed"); !ok {
		t.Errorf("the valid delivery was not stored")
	}
}

// The 503 of a refused connection is a well-formed HTTP answer that tells
// the platform to retry.
func TestBusyReplyParses(t *testing.T) {
	t.Parallel()
	res, err := http.ReadResponse(bufio.NewReader(strings.NewReader(busyReply)), nil)
	if err != nil || res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || !res.Close {
		t.Fatalf("%v %+v", err, res)
	}
}
