package runner

import (
	"context"
	"strings"
	"sync"

	"github.com/agenttest/agenttest/internal/reply"
)

// This file keeps a run's probes from taking each other's conversations.
//
// A probe whose conversation the platform does not name (an SMS answered
// without a body, a call status without conversation_id) finds it among
// the agent's conversations with the probe's number that started since the
// probe and were not listed before it. Two probes of one run to one number
// whose searches overlap both see both conversations, and took the same
// one (the latest): a probe passed on a conversation it did not cause. So
// the probes of a run to one number of one agent in one environment take
// turns on that number (its line): from the list read before the probe
// calls or texts until its conversation is known (named or found), or it
// ends without one. Whether the platform will name the conversation is
// known only once it answered, by then the conversation exists, and a
// search running beside it would see it: so every probe takes the line,
// and one whose conversation is named gives it up at once (an SMS, as
// soon as the send is answered; a call, when its final status is read).
// A conversation a probe of the run made its own is claimed, and no
// other probe's search takes it, even when the list showed it too late
// for that probe's read before.
//
// A probe that called or texted and ended without its conversation (none
// listed within the bound, the search cut short) is lost on its line: its
// conversation may still be listed, after the read before the next probe
// to the number, and be the only one that probe's search sees while its
// own is not listed yet. What names the lost probe's conversation is kept
// with it: a call's sid, which the reference writes to the state key
// call_sid, and an SMS's text, which it says acts as the greeting (the
// agent_response of the conversation's first turn). A later probe's search
// leaves, and claims, the conversation that names a lost probe of its
// line. A lost SMS of the same text as the later one's (a retry), or on a
// platform that writes neither (transcripts off), names nothing: that
// conversation can still be taken, as before.
//
// The cost: probes to one number run one at a time through that window.
// For an SMS whose conversation is named it is the list read and the
// send; for a call it is the call, up to its final status (a line takes
// one call at a time anyway). A case waiting for the line holds its
// worker and its --parallel slot; cases that probe other numbers, or
// none, go on.

// probeLines are the lines of the numbers the probes of a run call or
// text, and the conversations they claimed; the sessions made with the
// Options of WithProbeLines (godogsteps' scenarios) share them as the
// cases of a run do. A nil *probeLines (a session made with neither)
// serialises nothing and claims nothing.
type probeLines struct {
	mu      sync.Mutex
	lines   map[string]chan struct{}
	claimed map[string]bool
	// lost are the probes of each line that ended without their
	// conversation.
	lost map[string][]lostProbe
	// onWait, when set (by tests), is called when a probe finds its line
	// taken, before it waits for it.
	onWait func(key string)
}

func newProbeLines() *probeLines {
	return &probeLines{lines: map[string]chan struct{}{}, claimed: map[string]bool{}, lost: map[string][]lostProbe{}}
}

// lineKey names the line of number for agent in env: the agent's
// conversations in env are those a probe's search reads, and a number is
// compared by its digits.
func lineKey(agent, env, number string) string {
	return agent + "\x00" + env + "\x00" + digits(number)
}

// take waits for the line key until it is free or ctx is done, and
// returns the function that gives it up (safe to call more than once).
func (p *probeLines) take(ctx context.Context, key string) (release func(), err error) {
	if p == nil {
		return func() {}, nil
	}
	p.mu.Lock()
	line, ok := p.lines[key]
	if !ok {
		line = make(chan struct{}, 1)
		p.lines[key] = line
	}
	p.mu.Unlock()
	select {
	case line <- struct{}{}:
	default:
		if p.onWait != nil {
			p.onWait(key)
		}
		select {
		case line <- struct{}{}:
		case <-ctx.Done():
			return func() {}, ctx.Err()
		}
	}
	var once sync.Once
	return func() { once.Do(func() { <-line }) }, nil
}

// lostProbe is a probe that called or texted on line key: by the sid of
// its call, or the text of its SMS.
type lostProbe struct {
	key, sid, message string
}

// lose records that probe lp ended without its conversation.
func (p *probeLines) lose(lp lostProbe) {
	if p == nil || (lp.sid == "" && lp.message == "") {
		return
	}
	p.mu.Lock()
	p.lost[lp.key] = append(p.lost[lp.key], lp)
	p.mu.Unlock()
}

// lateOf reports whether conversation c is named as that of a lost probe
// of line key, for the search of a probe whose SMS text is own (empty for
// a call): its call_sid is a lost call's, or its greeting is the text of a
// lost SMS other than own. The conversation is then claimed, and the probe
// no longer lost.
func (p *probeLines) lateOf(key string, c *reply.Conversation, own string) bool {
	if p == nil {
		return false
	}
	sid, _ := c.State["call_sid"].(string)
	greeting := ""
	if len(c.Turns) > 0 {
		greeting = strings.TrimSpace(c.Turns[0].AgentResponse)
	}
	own = strings.TrimSpace(own)
	p.mu.Lock()
	defer p.mu.Unlock()
	lost := p.lost[key]
	for i, lp := range lost {
		msg := strings.TrimSpace(lp.message)
		if (lp.sid != "" && lp.sid == sid) || (msg != "" && msg == greeting && msg != own) {
			p.lost[key] = append(lost[:i:i], lost[i+1:]...)
			p.claimed[c.ID] = true
			return true
		}
	}
	return false
}

// claim records that conversation id is a probe's of the run.
func (p *probeLines) claim(id string) {
	if p == nil || id == "" {
		return
	}
	p.mu.Lock()
	p.claimed[id] = true
	p.mu.Unlock()
}

// isClaimed reports whether a probe of the run made conversation id its
// own.
func (p *probeLines) isClaimed(id string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.claimed[id]
}
