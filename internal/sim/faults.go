package sim

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// faultInjector decides the fate of each request from a counter and the
// seed, so the n-th request of a run meets the same fault in every run,
// whatever the goroutine interleaving.
type faultInjector struct {
	f    Faults
	seed uint64
	seq  atomic.Uint64 // API requests
	chat atomic.Uint64 // debug-chat turns, a separate stream
}

// Salts separate the independent draws of one request.
const (
	saltDrop = iota + 1
	saltError500
	saltError429
	saltJitter
	saltChatTimeout
)

// splitmix64 is a fast, well-mixed hash of a 64-bit value.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// draw returns a uniform float in [0, 1) for request n and salt.
func (fi *faultInjector) draw(n, salt uint64) float64 {
	return float64(splitmix64(fi.seed^splitmix64(n*8+salt))>>11) / (1 << 53)
}

// active reports whether any request-level fault is configured, to keep
// the common path free of work.
func (fi *faultInjector) active() bool {
	f := fi.f
	return f.Latency > 0 || f.Jitter > 0 || f.Error500 > 0 || f.Error429 > 0 || f.Drop > 0
}

// requestFault is the fate pick gives a request.
type requestFault int

const (
	faultNone    requestFault = iota
	faultAborted              // the client went away during the injected latency
	faultDrop                 // close the connection without a response
	fault500                  // answer 500
	fault429                  // answer 429 with Retry-After
)

// pick waits the injected latency and draws the request-level fault of the
// next request. Each group answers the fault with its own error body.
func (fi *faultInjector) pick(r *http.Request, sleep func(context.Context, time.Duration)) requestFault {
	if !fi.active() {
		return faultNone
	}
	n := fi.seq.Add(1)
	if d := fi.f.Latency + time.Duration(fi.draw(n, saltJitter)*float64(fi.f.Jitter)); d > 0 {
		if sleep(r.Context(), d); r.Context().Err() != nil {
			return faultAborted
		}
	}
	switch {
	case fi.draw(n, saltDrop) < fi.f.Drop:
		return faultDrop
	case fi.draw(n, saltError500) < fi.f.Error500:
		return fault500
	case fi.draw(n, saltError429) < fi.f.Error429:
		return fault429
	}
	return faultNone
}

// retryAfter is the Retry-After header value of injected 429s.
func (fi *faultInjector) retryAfter() string { return strconv.Itoa(retryAfterSeconds(fi.f.RetryAfter)) }

// apply injects the request-level faults. It returns false when it
// answered (or dropped) the request itself.
func (fi *faultInjector) apply(w http.ResponseWriter, r *http.Request, s *Server, fam family) bool {
	switch fi.pick(r, s.opts.Sleep) {
	case faultAborted:
		return false
	case faultDrop:
		dropConnection(w)
		return false
	case fault500:
		s.fail(w, fam, CodeInternal, "injected internal error")
		return false
	case fault429:
		w.Header().Set("Retry-After", fi.retryAfter())
		s.fail(w, fam, CodeRateLimited, "injected rate limit")
		return false
	}
	return true
}

// chatTimeout reports whether the next debug-chat turn is to time out.
func (fi *faultInjector) chatTimeout() bool {
	if fi.f.ChatTimeout <= 0 {
		return false
	}
	return fi.draw(fi.chat.Add(1), saltChatTimeout) < fi.f.ChatTimeout
}

// Salts of the messaging draws, a stream of their own (sessionDraw).
const (
	saltSocketDrop = iota + 1
	saltDropPoint
	saltOverload
	saltReplyFailure
	saltJoinFailure
	saltStreamCut
	saltLookupFailure
	saltEarlyExpiry
)

// sessionDraw returns a uniform float in [0, 1) for the idx-th client
// event of a messaging session (its hash: of its conversation's name, else
// of its id) and salt: a named session meets the same faults in every run
// whatever the other sessions do; an unnamed one, whose id is its creation
// number's, when the sessions are created in the same order.
func (fi *faultInjector) sessionDraw(session, idx, salt uint64) float64 {
	return float64(splitmix64(fi.seed^splitmix64(session^splitmix64(idx<<8|salt)))>>11) / (1 << 53)
}

// dropConnection closes the connection without writing a response. When
// the connection cannot be hijacked (HTTP/2), aborting the handler has the
// same effect for the client: no response.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// rateLimiter is a token bucket per API key. Keys are the server's fixed
// set, so the map cannot grow without bound.
type rateLimiter struct {
	rate  float64 // tokens per second; 0 disables
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter(rate float64, now func() time.Time) *rateLimiter {
	return &rateLimiter{rate: rate, burst: math.Max(1, rate), now: now, buckets: map[string]*bucket{}}
}

// allow takes a token for key, or says how long until one is available.
func (l *rateLimiter) allow(key string) (time.Duration, bool) {
	if l.rate <= 0 {
		return 0, true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	return b.take(now, l.rate, l.burst)
}

// take refills the bucket for the time since its last use and takes a
// token, or says how long until one is available.
func (b *bucket) take(now time.Time, rate, burst float64) (time.Duration, bool) {
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(burst, b.tokens+el*rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / rate * float64(time.Second)), false
}
