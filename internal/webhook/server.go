package webhook

import (
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of ServerOptions.
const (
	// DefaultRequestTimeout bounds a whole delivery, headers and body. The
	// platform gives a receiver 5 s to answer (reference, Limits) and a
	// delivery is a small JSON body: a client still sending after 10 s is
	// slow on purpose.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultMaxConns caps the connections open at once. The platform
	// delivers one event per conversation and retries failures with
	// backoff; hundreds at once is already a flood.
	DefaultMaxConns = 256
	// idleTimeout closes keep-alive connections nobody uses, so they do
	// not hold places under the cap.
	idleTimeout = 30 * time.Second
	// maxHeaderBytes bounds the request headers of a delivery.
	maxHeaderBytes = 64 << 10
)

// ServerOptions are the limits of the HTTP server in front of a Receiver.
// Zero fields take their defaults.
type ServerOptions struct {
	// RequestTimeout bounds the reading of a whole request, body
	// included; a client that trickles its body is cut off at it.
	RequestTimeout time.Duration
	// MaxConns caps the connections open at once; past it a new
	// connection is answered 503 and closed at once, so a flood of slow
	// clients cannot starve the deliveries that follow.
	MaxConns int
	// ErrorLog receives the server's own errors (a failed accept, a bad
	// TLS handshake); nil discards them.
	ErrorLog io.Writer
}

// Serve serves h on ln with the limits of opts until the returned server
// is shut down; it returns at once. The body size limit is the
// Receiver's own (Options.MaxBody).
func Serve(ln net.Listener, h http.Handler, opts ServerOptions) *http.Server {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	logTo := opts.ErrorLog
	if logTo == nil {
		logTo = io.Discard
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(opts.RequestTimeout, 5*time.Second),
		ReadTimeout:       opts.RequestTimeout,
		WriteTimeout:      opts.RequestTimeout + 5*time.Second,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          log.New(logTo, "agenttest: webhook receiver: ", 0),
	}
	go func() { _ = srv.Serve(LimitListener(ln, opts.MaxConns)) }()
	return srv
}

// LimitListener returns a listener that keeps at most n of ln's
// connections open. A connection over the cap is not left waiting in the
// accept queue (where a flood would keep every later one waiting too): it
// is answered 503 with Connection: close and closed, and the platform
// retries the delivery later.
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, max: int64(n)}
}

type limitListener struct {
	net.Listener
	max  int64
	open atomic.Int64
}

// busyReply is the whole answer to a connection over the cap.
const busyReply = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			// A fresh socket's send buffer takes these few bytes at
			// once; the deadline only guards against the unexpected.
			_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			_, _ = io.WriteString(c, busyReply)
			_ = c.Close()
			continue
		}
		return &limitedConn{Conn: c, l: l}, nil
	}
}

// limitedConn gives its place back once, when closed: before the socket
// closes, so a client that sees the close can connect again at once.
type limitedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
