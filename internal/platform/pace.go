package platform

import (
	"context"
	"sync"
	"time"
)

// This file paces the requests sent with one key to one host: the
// platform rate-limits per key (429 with Retry-After), so every worker of a
// run that uses the key shares one pacer. A 429 pauses the key's traffic
// for its Retry-After and teaches the pacer the rate the platform accepts;
// later requests wait their turn in the client instead of being refused.
//
// The pacer learns in two phases, like TCP's congestion control:
//
//   - Before the first 429 the limit is unknown. Requests in flight are
//     capped by a window that starts at startWindow and grows by one per
//     accepted answer (doubling per round trip), so a run at --parallel 512
//     does not open with 512 requests against a platform that accepts 20 a
//     second, while a platform without a limit sees no difference after a
//     few round trips.
//   - The first 429 sets the rate to what the platform accepted (answers
//     per second since the key's requests last began to go side by side,
//     over at least a second; the accepted answers of requests sent
//     before it, which come back after the refusal, raise it as they
//     arrive; a 429 before any accepted answer teaches no rate and
//     begins learning again, see relearn). From then on a token bucket
//     paces the key: additive increase (a small step per window of
//     accepted answers, to requests sent at the current rate, in which
//     requests had to wait for a token: once per round trip at most) and
//     multiplicative decrease (by decreaseFactor, once per 429 of
//     requests sent at the current rate).
//
// A proactive cap (Config.Rate, --rate) bounds the rate from the start.
// Waits are charged to the RateAccount of the case in the context, whose
// budget (Config.RateWait) bounds how long one case may wait in all.

// Defaults and constants of pacing. The values were chosen with the model
// in pace_model_test.go (a token bucket server at 20 requests per second,
// with and without latency, at 8 to 512 workers).
const (
	// DefaultRateWait is how long one case may wait on rate limits in
	// all (Config.RateWait): generous, because waiting is what a rate
	// limit asks for and a healthy but busy platform must not fail a gate.
	DefaultRateWait = 15 * time.Minute
	// startWindow caps the requests in flight per key before the platform
	// has refused one. Runs at the default --parallel (8) never reach
	// it; a larger window would let the first round trip of a wide run
	// overshoot a limited platform more (64: a third more 429s at
	// --parallel 128 in the model), a smaller one delay the first round
	// trip of a wide run against an unlimited one.
	startWindow = 32
	// decreaseFactor multiplies the rate on a 429.
	decreaseFactor = 0.9
	// increaseStep is the additive increase per window of accepted
	// answers, as a share of the rate at the last 429 (at least
	// minIncrease requests per second).
	increaseStep = 0.01
	minIncrease  = 0.1
	// probeFactor grows the rate per window once it is past the rate of
	// the last 429 by probeMargin: the limit was transient (another
	// client on the key) or has been raised, and additive steps would
	// take too long to find out.
	probeFactor = 1.25
	probeMargin = 1.2
	// relearnWindow is the window after a 429 that taught no rate
	// (relearn).
	relearnWindow = 1
	// minRate is the slowest the pacer goes: one request every ten
	// seconds.
	minRate = 0.1
	// burstTime sizes the token bucket: a second of requests, the burst
	// a token-bucket limit typically allows and what it refills during
	// the shortest Retry-After (whole seconds).
	burstTime = time.Second
)

// ticket is the admission of one request: the generation it was sent in
// (a 429 of a request sent before the last decrease does not decrease the
// rate again) and whether it counts in the window.
type ticket struct {
	gen      uint64
	inWindow bool
	// seq numbers the request among those the pacer admitted, from 1.
	seq uint64
	// paced is the pacer's count of rate changes when it was sent.
	paced uint64
}

// pacer is the rate limiter of one (host, key). Its state is guarded by mu;
// callers wait their turn in queue, first come first served, so no case
// starves while others are admitted.
type pacer struct {
	mu sync.Mutex
	// cap is the proactive rate (Config.Rate); 0 means none.
	cap float64
	// learning is true until the first 429: the window caps requests in
	// flight and, without a cap, the rate is unlimited.
	learning bool
	window   int
	inflight int
	// rate is the pace in requests per second once learnt (or cap); 0
	// means unlimited. tokens are the requests that may go at once,
	// brought up to date at filled.
	rate   float64
	tokens float64
	filled time.Time
	// until is the end of the pause a Retry-After asked for.
	until time.Time
	// gen counts decreases; ceiling is the rate at the last one.
	gen     uint64
	ceiling float64
	// won counts the answers accepted of the requests sent since the
	// rate last changed, short whether a request had to wait for a token
	// meanwhile (the rate binds: there is demand to increase it for).
	// changes counts the rate's changes (increases and decreases): an
	// answer counts towards the next increase only if its request was
	// sent at the current rate, so that the rate grows once per round
	// trip at most. Counting every answer, the rate grew once per second
	// against a platform that answers in 0.5 to 2.5 s, and its probe
	// (probeFactor) multiplied it two or three times before the first
	// 429 of the first step came back: at twice the platform's limit,
	// bursts of 429s followed.
	won     int
	short   bool
	changes uint64
	// first is when the first request was sent; accepted counts the
	// answers that were not 429 since then.
	first    time.Time
	accepted int
	// The rate the platform accepts is learnt from the key's concurrent
	// traffic: requests sent before the key last had none in flight
	// (the deployment reads before a run's first case, one alone or a
	// few side by side, a round trip of 0.5 to 2.5 s on a slow platform)
	// tell nothing of the rate, and counted in the time they made the
	// learnt rate a fraction of the platform's, which the pacer then
	// probed for in bursts of 429s. While learning, idleFrom is the seq
	// of the last request admitted with none in flight and idleAt when
	// it went; crowded and crowdFrom are those of the traffic the rate
	// is learnt from (the last run of requests that began with one sent
	// alone and went on side by side), and crowdAccepted counts the
	// answers of requests from crowdFrom on that were not 429. banked
	// is the highest rate an earlier such run, ended by a moment with
	// none in flight, showed: the measure restarts there, but what the
	// platform accepted before can only raise what it is learnt to
	// accept. sent numbers the requests admitted.
	crowded       time.Time
	crowdFrom     uint64
	crowdAccepted int
	banked        float64
	sent          uint64
	idleFrom      uint64
	idleAt        time.Time
	// relearnt is the seq of the last request sent before learning began
	// again (relearn): the refusals of those requests were learnt from.
	relearnt uint64
	// streak counts consecutive 429s without Retry-After, for backoff.
	streak int
	// limitedMethod and limitedPath name the call of the key's last 429:
	// what a call held back by its pause, in a case that received no
	// 429 itself, names as the platform's answer that held it.
	limitedMethod, limitedPath string

	// queue holds the requests waiting, first in line at queue[0], which
	// alone watches the clock; freed is closed when a request in flight
	// ends, for a first in line waiting on the window.
	queue []*waiter
	freed chan struct{}
}

type waiter struct{ turn chan struct{} }

func newPacer(cap float64) *pacer {
	p := &pacer{cap: cap, learning: true, window: startWindow}
	if cap > 0 {
		p.rate = cap
		p.tokens = p.depth()
	}
	return p
}

// depth is the size of the token bucket.
func (p *pacer) depth() float64 { return max(1, p.rate*burstTime.Seconds()) }

// take admits one request at now if the pacer allows it. Otherwise it
// returns how long until it may (wait > 0), or wait 0 when the request
// must wait for a request in flight to end (the window is full).
func (p *pacer) take(now time.Time) (t ticket, wait time.Duration, ok bool) {
	if now.Before(p.until) {
		return t, p.until.Sub(now), false
	}
	if p.learning && p.inflight >= p.window {
		return t, 0, false
	}
	if p.rate > 0 {
		p.refill(now)
		if p.tokens < 1 {
			p.short = true
			// Capped at a day, as a Retry-After is: the wait of a rate
			// as small as --rate 1e-10 overflows a Duration, which came
			// out negative and made the case spin a microsecond at a
			// time until its wait budget was spent. A day is past any
			// budget, so the case errors at once.
			secs := min((1-p.tokens)/p.rate, maxRetryAfter.Seconds())
			return t, max(time.Duration(secs*float64(time.Second)), time.Microsecond), false
		}
		p.tokens--
	}
	if p.first.IsZero() {
		p.first = now
	}
	p.sent++
	if p.learning {
		switch {
		case p.inflight == 0 && (p.crowdFrom == 0 || p.sent-p.crowdFrom < startWindow):
			// The key's traffic begins again: what went before tells
			// nothing of the rate (a few deployment reads side by side
			// are answered before the first case). Once a window's worth
			// of requests went side by side, that is the run's traffic,
			// and a moment with none in flight (two workers between
			// calls at once) no longer starts the measure afresh: the
			// rate learnt since would count a few milliseconds' answers
			// over a second.
			if p.crowdFrom > 0 {
				p.banked = max(p.banked, p.crowdRate(now))
			}
			p.idleFrom, p.idleAt = p.sent, now
		case p.crowdFrom != p.idleFrom:
			// The first request sent while another is in flight since
			// then: the traffic the rate is learnt from began with the
			// one sent alone, which is in flight still.
			p.crowded, p.crowdFrom, p.crowdAccepted = p.idleAt, p.idleFrom, 0
		}
	}
	p.inflight++
	return ticket{gen: p.gen, inWindow: true, seq: p.sent, paced: p.changes}, 0, true
}

// refill brings the token bucket up to now.
func (p *pacer) refill(now time.Time) {
	if el := now.Sub(p.filled); el > 0 {
		p.tokens = min(p.depth(), p.tokens+el.Seconds()*p.rate)
		p.filled = now
	}
}

// answered learns from the answer to a request admitted with t: limited
// is a 429, pause the wait it asked for (Retry-After, or a backoff when it
// gave none). sent is false for a request that got no answer at all
// (network error, cancelled): it only leaves the window.
func (p *pacer) answered(now time.Time, t ticket, sent, limited bool, pause time.Duration) {
	if t.inWindow {
		p.inflight--
		if p.freed != nil {
			close(p.freed)
			p.freed = nil
		}
	}
	if !sent {
		return
	}
	if !limited {
		p.accepted++
		if p.crowdFrom > 0 && t.seq >= p.crowdFrom {
			p.crowdAccepted++
		}
		p.streak = 0
		if p.learning {
			p.window++
			return
		}
		if t.gen == 0 {
			// Sent while learning, answered after the first 429 (an
			// accepted answer takes longer than a refusal): the rate
			// the platform accepted was higher than the first 429
			// could tell.
			p.rate = max(p.rate, p.learnt(now))
			p.ceiling = max(p.ceiling, p.rate)
			p.capRate()
			return
		}
		if t.paced != p.changes {
			return // sent at an earlier rate
		}
		p.won++
		if float64(p.won) >= max(1, p.rate) {
			if p.short {
				p.increase()
			}
			p.won, p.short = 0, false
		}
		return
	}
	if end := now.Add(pause); end.After(p.until) {
		p.until = end
	}
	if p.learning {
		if t.seq <= p.relearnt {
			return // sent before learning began again: nothing new
		}
		// Once learning began again, a platform that accepted anything
		// since is not refusing everything: the answers it accepted
		// came back after the 429 that began it (an agent takes longer
		// than a refusal), and the crowd's measure, begun afresh, has
		// not seen them. Beginning yet again grew the window back to
		// them, the next window overshot by a request whose 429 came
		// first again, and the pacer never left learning.
		if p.learnt(now) == 0 && (p.relearnt == 0 || p.accepted == 0) {
			p.relearn()
			return
		}
	}
	if t.gen != p.gen {
		return // sent before the last decrease, which answered it already
	}
	p.gen++
	p.changes++
	if p.learning {
		p.learning = false
		p.rate = p.learnt(now)
	} else {
		p.rate *= decreaseFactor
	}
	p.rate = max(minRate, p.rate)
	p.ceiling = p.rate
	p.capRate()
	// The bucket refills during the pause, so a burst may follow it as
	// the platform's own bucket refilled too; but at least one request
	// goes when it ends, as the Retry-After promised.
	p.tokens, p.filled = max(0, 1-p.rate*p.until.Sub(now).Seconds()), now
	p.won, p.short = 0, false
}

// relearn begins learning again after a 429 that came before the platform
// accepted anything to learn a rate from: the key's bucket was empty from
// the first request (the run before on the same key, in the same
// pipeline, spent it; another job shares the key). Such a 429 says only
// how long to pause. Learning a rate from it made it the slowest the
// pacer goes (minRate), and a run that starts against an empty bucket
// took a fifth longer than its ideal while the rate grew back. The
// window restarts at relearnWindow, so a platform that keeps refusing is
// sent that many requests per pause, not a window's worth.
func (p *pacer) relearn() {
	p.window = relearnWindow
	p.relearnt = p.sent
	p.first, p.accepted = time.Time{}, 0
	p.crowdFrom, p.crowdAccepted, p.idleFrom = 0, 0, 0
}

// learnt is the rate the platform accepted while the pacer was learning:
// the answers accepted since the key's traffic last became concurrent, or
// an earlier run of such traffic's rate if higher (since the first
// request, for a key that never had two in flight while learning), per
// second (over at least burstTime, since a platform's
// burst is accepted at once).
func (p *pacer) learnt(now time.Time) float64 {
	if p.crowdFrom > 0 {
		return max(p.banked, p.crowdRate(now))
	}
	return float64(p.accepted) / max(now.Sub(p.first), burstTime).Seconds()
}

// crowdRate is the rate the platform accepted in the key's last run of
// concurrent traffic, up to now.
func (p *pacer) crowdRate(now time.Time) float64 {
	return float64(p.crowdAccepted) / max(now.Sub(p.crowded), burstTime).Seconds()
}

// capRate applies the proactive cap.
func (p *pacer) capRate() {
	if p.cap > 0 {
		p.rate = min(p.rate, p.cap)
	}
}

// increase raises the rate by one step: additive up to past the rate of
// the last 429, multiplicative beyond.
func (p *pacer) increase() {
	p.changes++
	if p.rate >= p.ceiling*probeMargin {
		p.rate *= probeFactor
	} else {
		p.rate += max(minIncrease, p.ceiling*increaseStep)
	}
	p.capRate()
}

// backoffPause is the pause after a 429 without Retry-After: the retry
// policy's backoff for the run of such 429s the key has had.
func (p *pacer) backoffPause(rp RetryPolicy) time.Duration {
	p.mu.Lock()
	p.streak++
	n := p.streak
	p.mu.Unlock()
	// Full jitter could pause for nothing; half of the ceiling at least.
	// The ceiling is the backoff's, capped by MaxDelay: a window of
	// requests refused together steps the streak up once per 429, and
	// an uncapped BaseDelay doubled per step paused the key for hours
	// after twenty of them, past any wait budget.
	return max(rp.Backoff(n), rp.ceiling(n)/2)
}

// errBudget is returned by wait when the next admission is further away
// than the case may still wait, or than the context's deadline; the
// caller reports it with the call.
type errBudget struct {
	next     time.Duration
	deadline bool
	// pacedBy is the call of the key's last 429 ("GET /v1/..."), or
	// empty when the platform has refused none; rate is then the rate
	// set for the key (pacer.cap) whose pace the wait is, if any.
	pacedBy string
	rate    float64
}

func (errBudget) Error() string { return "rate-limit wait budget spent" }

// wait blocks until the request may be sent and admits it. Waits are
// charged to acct; when the next admission is further away than acct may
// still wait, wait returns an errBudget at once instead of waiting for
// nothing. sleep waits on the client's clock (tests pass a fake one).
func (p *pacer) wait(ctx context.Context, acct *RateAccount, now func() time.Time, sleep func(context.Context, time.Duration) error) (ticket, error) {
	t0 := now()
	p.mu.Lock()
	if len(p.queue) == 0 {
		if t, _, ok := p.take(t0); ok {
			p.mu.Unlock()
			return t, nil
		}
	}
	me := &waiter{turn: make(chan struct{}, 1)}
	p.queue = append(p.queue, me)
	if len(p.queue) == 1 {
		me.turn <- struct{}{}
	}
	p.mu.Unlock()

	acct.startWait(t0)
	defer func() { acct.endWait(now()) }()
	select {
	case <-me.turn:
	case <-ctx.Done():
		p.leave(me)
		return ticket{}, ctx.Err()
	}
	for {
		at := now()
		p.mu.Lock()
		t, d, ok := p.take(at)
		if ok {
			p.remove(me)
			p.mu.Unlock()
			return t, nil
		}
		var freed chan struct{}
		if d == 0 {
			if p.freed == nil {
				p.freed = make(chan struct{})
			}
			freed = p.freed
		}
		byMethod, byPath, rate := p.limitedMethod, p.limitedPath, p.cap
		p.mu.Unlock()
		if d > 0 && d > acct.left(at) {
			p.leave(me)
			return ticket{}, budgetSpent(d, false, byMethod, byPath, rate)
		}
		// Context deadlines are wall-clock times.
		if dl, ok := ctx.Deadline(); ok && d > time.Until(dl) {
			p.leave(me)
			return ticket{}, budgetSpent(d, true, byMethod, byPath, rate)
		}
		if freed != nil {
			select {
			case <-freed:
			case <-ctx.Done():
				p.leave(me)
				return ticket{}, ctx.Err()
			}
			continue
		}
		if err := sleep(ctx, d); err != nil {
			p.leave(me)
			return ticket{}, err
		}
	}
}

// leave takes w out of the queue and, when it was first in line, hands the
// turn to the next.
func (p *pacer) leave(w *waiter) {
	p.mu.Lock()
	p.remove(w)
	p.mu.Unlock()
}

// remove is leave with mu held.
func (p *pacer) remove(w *waiter) {
	for i, q := range p.queue {
		if q != w {
			continue
		}
		copy(p.queue[i:], p.queue[i+1:])
		p.queue[len(p.queue)-1] = nil
		p.queue = p.queue[:len(p.queue)-1]
		if i == 0 && len(p.queue) > 0 {
			p.queue[0].turn <- struct{}{}
		}
		return
	}
}

// done reports the answer to request rq, admitted with t; see answered.
func (p *pacer) done(now time.Time, rq *call, t ticket, sent, limited bool, pause time.Duration) {
	p.mu.Lock()
	p.answered(now, t, sent, limited, pause)
	if limited {
		p.limitedMethod, p.limitedPath = rq.ep.method, rq.path
	}
	p.mu.Unlock()
}

// budgetSpent is the errBudget of a wait of next: what held it is the
// pause or the pace of the key's last 429 (method and path) or, when the
// platform has refused none of the key's calls, the rate set for the key.
func budgetSpent(next time.Duration, deadline bool, method, path string, rate float64) errBudget {
	if path == "" {
		return errBudget{next: next, deadline: deadline, rate: rate}
	}
	return errBudget{next: next, deadline: deadline, pacedBy: method + " " + path}
}

// RateAccount is what one case spent on rate limits: the 429 answers it
// received, the time its calls waited (for a Retry-After pause or their
// turn at the key's pace) and the answers it was given. The runner puts one
// in the context of every call of a case (WithRateAccount); the client
// charges waits to it and refuses to wait past Config.RateWait in all. A
// call without one gets an account of its own. Safe for concurrent use.
type RateAccount struct {
	mu sync.Mutex
	// limit is the wait budget, set from Config.RateWait by the first
	// call that uses the account.
	limit    time.Duration
	waited   time.Duration
	waiting  int
	since    time.Time
	limited  int
	accepted int
}

// NewRateAccount returns an empty account.
func NewRateAccount() *RateAccount { return &RateAccount{} }

type rateAccountKey struct{}

// WithRateAccount returns a context whose calls charge their rate-limit
// waits to a.
func WithRateAccount(ctx context.Context, a *RateAccount) context.Context {
	return context.WithValue(ctx, rateAccountKey{}, a)
}

// RateAccountFrom returns the account of ctx, or nil.
func RateAccountFrom(ctx context.Context) *RateAccount {
	a, _ := ctx.Value(rateAccountKey{}).(*RateAccount)
	return a
}

// RateUsage is a snapshot of a RateAccount.
type RateUsage struct {
	// Limited counts the 429 answers received.
	Limited int
	// Waited is the time spent waiting on rate limits, a wait in
	// progress included.
	Waited time.Duration
	// Accepted counts the answers other than 429 (any status).
	Accepted int
}

// Usage returns what the account holds at now.
func (a *RateAccount) Usage(now time.Time) RateUsage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return RateUsage{Limited: a.limited, Waited: a.waitedAt(now), Accepted: a.accepted}
}

// Waited returns the time waited at now, a wait in progress included: the
// runner's timeouts leave it out of the time they bound.
func (a *RateAccount) Waited(now time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waitedAt(now)
}

func (a *RateAccount) waitedAt(now time.Time) time.Duration {
	w := a.waited
	if a.waiting > 0 && now.After(a.since) {
		w += now.Sub(a.since)
	}
	return w
}

// setLimit sets the budget unless it was set.
func (a *RateAccount) setLimit(d time.Duration) {
	a.mu.Lock()
	if a.limit == 0 {
		a.limit = d
	}
	a.mu.Unlock()
}

// left is the time the account may still wait at now.
func (a *RateAccount) left(now time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limit - a.waitedAt(now)
}

// startWait and endWait bracket a wait; overlapping waits (calls of one
// case in parallel) count once.
func (a *RateAccount) startWait(now time.Time) {
	a.mu.Lock()
	if a.waiting == 0 {
		a.since = now
	}
	a.waiting++
	a.mu.Unlock()
}

func (a *RateAccount) endWait(now time.Time) {
	a.mu.Lock()
	a.waiting--
	if a.waiting == 0 && now.After(a.since) {
		a.waited += now.Sub(a.since)
	}
	a.mu.Unlock()
}

// count records an answer.
func (a *RateAccount) count(limited bool) {
	a.mu.Lock()
	if limited {
		a.limited++
	} else {
		a.accepted++
	}
	a.mu.Unlock()
}

// pacerKey names the key a request is sent with, and the host: never the
// key itself.
type pacerKey struct{ host, key string }

// pacerFor returns the pacer of a call: the one shared by every call made
// with the same key to the same host, since the platform limits per key.
// Outbound calling has a limit of its own (the reference's Limits: "per
// account configuration", apart from the general one), so its calls share
// a pacer of their own whichever credential they send (the call token, or
// the runtime key when none is configured): paced with the runtime key's
// other calls, a 429 of a calls-per-minute limit paused every
// Conversations read of the run for its Retry-After. Calls whose limit is
// not the key's get a pacer of their own, which only honours their 429s:
// a Messaging session's calls (limited per session) and SMS (limited per
// project).
func (c *Client) pacerFor(host string, rq *call) *pacer {
	var key string
	switch rq.ep.auth {
	case authBuildKey:
		key = "build"
	case authRuntimeKey:
		key = "runtime"
	case authVendorToken:
		key = "outbound"
	case authConnector:
		key = "connector"
	}
	if key == "" || rq.ep == epSMS {
		return newPacer(0)
	}
	if key == "build" && host == c.build.Host {
		return c.buildPacer
	}
	k := pacerKey{host, key}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pacers[k]
	if !ok {
		p = newPacer(c.cfg.Rate)
		c.pacers[k] = p
	}
	return p
}

// rateLimitError is the error of a call that would wait past its
// account's budget or its deadline.
func (c *Client) rateLimitError(rq *call, acct *RateAccount, eb errBudget) error {
	now := c.paceNow()
	u := acct.Usage(now)
	acct.mu.Lock()
	limit := acct.limit
	acct.mu.Unlock()
	return &RateLimitError{
		Method: rq.ep.method, Endpoint: rq.ep.template, Path: rq.path,
		Waited: u.Waited, Limited: u.Limited, Next: eb.next, Budget: max(limit, 0), Hint: c.cfg.RateWaitHint,
		Deadline: eb.deadline, PacedBy: eb.pacedBy, Rate: eb.rate,
	}
}

// paceNow is the clock of pacing: the client's clock plus the time its
// pacing sleeps were promised but did not take. A real sleep takes at
// least its time, so in a run paceNow is the client's clock; a test's
// sleep that returns early (a recorder, a capped pause) still serves the
// pause it was asked for, as a fake clock's sleep does, instead of
// leaving the pacer to wait out the rest in real time.
func (c *Client) paceNow() time.Time { return c.now().Add(time.Duration(c.skew.Load())) }

// paceSleep sleeps with the retry policy's Sleep and records what it
// did not take.
func (c *Client) paceSleep(ctx context.Context, d time.Duration) error {
	before := c.now()
	if err := c.retry.Sleep(ctx, d); err != nil {
		return err
	}
	if short := d - c.now().Sub(before); short > 0 {
		c.skew.Add(int64(short))
	}
	return nil
}
