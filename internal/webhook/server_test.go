package webhook

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// serve starts a receiver behind Serve on loopback.
func serve(t *testing.T, opts ServerOptions) (*Receiver, string) {
	t.Helper()
	ln := listen(t)
	return serveOn(t, ln, opts), ln.Addr().String()
}

// listen opens a loopback listener, which takes connections into its
// backlog before Serve accepts them.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serveOn starts a receiver behind Serve on ln.
func serveOn(t *testing.T, ln net.Listener, opts ServerOptions) *Receiver {
	t.Helper()
	rcv := NewReceiver(Options{Secret: testSecret})
	srv := Serve(ln, rcv, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return rcv
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
// and its delivery rejected. The client has sent its headers and the start
// of its body before the server accepts it, so the short deadline can cut
// only the body, however late the test's goroutines run: headers that came
// after the deadline would be dropped without an answer.
func TestSlowBodyIsCutAtTheDeadline(t *testing.T) {
	t.Parallel()
	ln := listen(t)
	c := slowClient(t, ln.Addr().String())
	rcv := serveOn(t, ln, ServerOptions{RequestTimeout: 200 * time.Millisecond})
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
// once, giving its place back; once the slow ones end, a valid signed
// delivery gets through. The
// slow ones hold their places under the default deadline for as long as
// the test needs and end when they stop sending (TestSlowBodyIsCutAtTheDeadline
// shows the deadline ending them): a short deadline could free a place
// before the connection over the cap is accepted, on a loaded machine.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	const max = 3
	rcv, addr := serve(t, ServerOptions{MaxConns: max})
	var slow []net.Conn
	for range max {
		slow = append(slow, slowClient(t, addr))
	}
	// As many refused as the cap: had a refusal kept its place, the
	// cap would stay full after the slow ones end.
	for range max {
		over, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		got := closedBy(t, over)
		over.Close()
		if !strings.HasPrefix(got, "HTTP/1.1 503") {
			t.Fatalf("a connection over the cap got %q, want a 503", got)
		}
	}
	for _, c := range slow {
		// The body ends short: the delivery is rejected and the server
		// closes the connection, giving its place back first.
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if got := closedBy(t, c); !strings.HasPrefix(got, "HTTP/1.1 400") {
			t.Fatalf("a slow client that stopped got %q, want a 400 then the close", got)
		}
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
	if rej := rcv.Rejections(); len(rej) != max {
		t.Errorf("rejections %+v, want the %d slow deliveries", rej, max)
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

// A flood of forged deliveries with huge members costs the receiver the
// bounded rejections' few bytes each, not their bodies: the type and the
// conversation id a rejection keeps are clipped, and hold none of the
// body's memory: the old receiver grew the heap 6 MiB for 7 of them, this
// one not at all. Not parallel, so that the heap it measures is its own.
func TestForgedFloodKeepsLittle(t *testing.T) {
	rcv, addr := serve(t, ServerOptions{})
	const n = 8
	half := strings.Repeat("é", (DefaultMaxBody-200)/4) // 2 bytes each: clipping must cut between characters
	body := `{"type":"` + half + `","data":{"conversation_id":"` + half + `","x":[` + strings.Repeat("0,", 50) + `0]}}`
	if len(body) > DefaultMaxBody {
		t.Fatalf("body of %d bytes is over the limit", len(body))
	}
	post := func() {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hook", strings.NewReader(body))
		req.Header.Set("X-Vendor-Signature", Sign("not-the-secret", []byte(body)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a forged delivery got %d, want 401", res.StatusCode)
		}
	}
	post() // warm up the server and the client's connection
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n - 1 {
		post()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	rej := rcv.Rejections()
	if len(rej) != n {
		t.Fatalf("%d rejections, want %d", len(rej), n)
	}
	for _, r := range rej {
		for _, f := range []string{r.Type, r.ConversationID} {
			if len(f) > maxRejectedField+len(clipMark) || !strings.HasSuffix(f, clipMark) || !utf8.ValidString(f) {
				t.Fatalf("a rejection keeps a field of %d bytes (%.40q...), want at most %d, clipped at a character", len(f), f, maxRejectedField+len(clipMark))
			}
		}
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 2<<20 {
		t.Errorf("the heap grew %d MiB for %d forged deliveries of %d KiB, want well under one body each", grew>>20, n-1, len(body)>>10)
	}
}

// Serve's zero options take the defaults: a server without them would
// let a client that trickles its headers or body hold a connection for
// ever. The deadlines are real time, so their values are checked, not
// waited for.
func TestServeDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts               ServerOptions
		wantRead, wantHead time.Duration
	}{
		{ServerOptions{}, DefaultRequestTimeout, 5 * time.Second},
		{ServerOptions{RequestTimeout: 2 * time.Second}, 2 * time.Second, 2 * time.Second},
	} {
		srv := Serve(listen(t), NewReceiver(Options{Secret: testSecret}), tc.opts)
		t.Cleanup(func() { srv.Close() })
		if srv.ReadTimeout != tc.wantRead || srv.ReadHeaderTimeout != tc.wantHead || srv.WriteTimeout != tc.wantRead+5*time.Second || srv.MaxHeaderBytes != maxHeaderBytes {
			t.Errorf("Serve(%+v): read timeout %s, header timeout %s, write timeout %s, max header bytes %d; want %s, %s, %s, %d",
				tc.opts, srv.ReadTimeout, srv.ReadHeaderTimeout, srv.WriteTimeout, srv.MaxHeaderBytes, tc.wantRead, tc.wantHead, tc.wantRead+5*time.Second, maxHeaderBytes)
		}
	}
}
