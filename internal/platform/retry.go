package platform

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of RetryPolicy.
const (
	// DefaultMaxAttempts is the total number of tries of a request.
	DefaultMaxAttempts = 5
	// DefaultBaseDelay is the backoff ceiling before the second try.
	DefaultBaseDelay = 200 * time.Millisecond
	// DefaultMaxDelay caps one backoff.
	DefaultMaxDelay = 10 * time.Second
	// retryAfterFactor bounds an honoured Retry-After by MaxDelay times
	// this factor (60 s by default). A server asking for longer is
	// throttling a whole run, and failing with its answer is clearer than
	// a run that seems to hang.
	retryAfterFactor = 6
)

// RetryPolicy says how often and how long to retry. Zero fields take the
// defaults.
type RetryPolicy struct {
	// MaxAttempts is the total number of tries (first one included).
	// Default DefaultMaxAttempts; 1 turns retries off.
	MaxAttempts int
	// BaseDelay is the backoff before the second try; it doubles per try
	// up to MaxDelay. Default DefaultBaseDelay.
	BaseDelay time.Duration
	// MaxDelay caps one backoff. Default DefaultMaxDelay.
	MaxDelay time.Duration
	// MaxRetryAfter caps an honoured Retry-After of a retried answer (a
	// 503); a longer request ends the retries with the error. Default 6 ×
	// MaxDelay. The 429s of HTTP calls and of the Messaging handshake are
	// paced instead, their waits bounded by Config.RateWait.
	MaxRetryAfter time.Duration
	// Rand returns a number in [0, 1) for the jitter. Default
	// math/rand/v2.Float64 (safe for concurrent use); tests inject a fixed
	// source. Must be safe for concurrent use.
	Rand func() float64
	// Sleep waits d or until ctx is done, returning ctx's error then.
	// The client's pauses run on it: retry backoff, rate-limit waits, and
	// the grace a Messaging Close gives the platform to answer. Default:
	// a timer. Tests inject one that records the waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p RetryPolicy) validate() error {
	var errs []error
	if p.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("retry attempts must not be negative, got %d", p.MaxAttempts))
	}
	if p.BaseDelay < 0 || p.MaxDelay < 0 || p.MaxRetryAfter < 0 {
		errs = append(errs, errors.New("retry delays must not be negative"))
	}
	if p.BaseDelay > 0 && p.MaxDelay > 0 && p.BaseDelay > p.MaxDelay {
		errs = append(errs, fmt.Errorf("retry base delay %s exceeds the max delay %s", p.BaseDelay, p.MaxDelay))
	}
	return errors.Join(errs...)
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay == 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay == 0 {
		p.MaxDelay = max(DefaultMaxDelay, p.BaseDelay)
	}
	if p.MaxRetryAfter == 0 {
		p.MaxRetryAfter = retryAfterFactor * p.MaxDelay
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	if p.Sleep == nil {
		p.Sleep = Sleep
	}
	return p
}

// Backoff returns the wait before try attempt+1 after try attempt failed:
// exponential with full jitter (uniform in [0, min(MaxDelay, BaseDelay ×
// 2^(attempt-1)))), which spreads parallel scenarios that failed together.
// The policy must have its defaults applied.
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	f := p.Rand()
	if f < 0 || f >= 1 {
		f = 0
	}
	return time.Duration(f * float64(p.ceiling(attempt)))
}

// ceiling is the bound of the backoff after try attempt: BaseDelay ×
// 2^(attempt-1), at most MaxDelay.
func (p RetryPolicy) ceiling(attempt int) time.Duration {
	ceiling := p.MaxDelay
	if attempt < 1 {
		attempt = 1
	}
	// Shifting past 62 bits overflows; by then the ceiling is MaxDelay.
	if shift := attempt - 1; shift < 62 {
		if d := p.BaseDelay << shift; d > 0 && d < ceiling {
			ceiling = d
		}
	}
	return ceiling
}

func (p RetryPolicy) sleep(ctx context.Context, d time.Duration) error {
	return p.Sleep(ctx, d)
}

// Sleep waits d on a real timer, or until ctx is done and then returns its
// error: the default RetryPolicy.Sleep, and the default of the runner's
// pauses.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxRetryAfter bounds a parsed Retry-After: beyond a day is nonsense,
// in seconds or as a date, and clamping avoids overflow.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP-date
// (RFC 9110 §10.2.3) counted from now (servedAt), and decimal seconds with
// a fraction, which some servers send. Anything else (a sign, an exponent,
// hex, NaN, Inf: what strconv would also take) or a date in the past is 0,
// so the caller backs off as without the header. At most a day.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if decimalSeconds(v) {
		// Digits too many for a float64 parse as +Inf (a range
		// error): a long wait, clamped like any other.
		f, _ := strconv.ParseFloat(v, 64)
		if f <= 0 {
			return 0
		}
		return time.Duration(min(f, maxRetryAfter.Seconds()) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// servedAt is when the server says it answered (its Date header), or now
// without one. A Retry-After given as an HTTP-date is measured from it:
// both dates are on the server's clock, so the pause is the one the
// server asked for however far its clock and this machine's disagree.
// Measured on the client's clock, a server an hour behind had its pauses
// read as over (a backoff of under a second, then 429 again), and one an
// hour ahead had them read as an hour: past the wait budget, an errored
// case.
func servedAt(h http.Header, now time.Time) time.Time {
	if t, err := http.ParseTime(h.Get("Date")); err == nil {
		return t
	}
	return now
}

// decimalSeconds reports whether v is digits with at most one decimal
// point among or after them.
func decimalSeconds(v string) bool {
	digits, dot := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// shouldRetry decides whether try attempt, which failed with err, is
// repeated, and after how long.
func (c *Client) shouldRetry(ctx context.Context, rq *call, err error, attempt int) (time.Duration, bool) {
	p := c.retry
	if attempt >= p.MaxAttempts || ctx.Err() != nil {
		return 0, false
	}
	wait := p.Backoff(attempt)
	var ae *APIError
	var ne *NetworkError
	switch {
	case errors.As(err, &ae):
		if ae.Code == CodeChatTimeout || ae.Code == CodeConversationsNotFound {
			// The session is gone; repeating cannot bring it back.
			return 0, false
		}
		switch {
		case ae.Status == http.StatusTooManyRequests:
			// A 429 was refused before processing, so even a turn
			// may be re-sent. The client's own calls never come here
			// with one: the HTTP calls (do) and the Messaging
			// handshake (dial) are paced (pace.go), not retried.
		case ae.Status >= 500:
			if rq.ep.class == retryTurn || (rq.ep.class == retrySession && rq.noRetry5xx) {
				return 0, false
			}
		default:
			return 0, false
		}
		if ae.RetryAfter > 0 {
			if ae.RetryAfter > p.MaxRetryAfter {
				// Said in the error: the answer alone says only its
				// status, as if the client had not been asked to retry.
				ae.RetryAfterCap = p.MaxRetryAfter
				return 0, false
			}
			// Honour the server, with a little jitter so parallel
			// scenarios throttled together do not return together.
			wait = ae.RetryAfter + time.Duration(p.Rand()*float64(p.BaseDelay))
		}
	case errors.As(err, &ne):
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 0, false
		}
		if rq.ep.class == retryTurn && ne.Sent {
			return 0, false
		}
	default:
		return 0, false
	}
	// Context deadlines are wall-clock times, so compare with the wall
	// clock rather than the injected one.
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		// The wait would outlast the caller's deadline: fail now with
		// the real cause instead of later with "deadline exceeded".
		return 0, false
	}
	return wait, true
}
