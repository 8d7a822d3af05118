package sim

import "sync"

// changes wakes whoever waits for the server's background work: a round
// of the janitor or the tick loop, a webhook attempt, a Messaging socket
// opened or closed, a client event dropped. Those change what Stats,
// WebhookStats, MessagingStats, LiveSessions and the store report with
// no request to answer, so a test could otherwise only poll them.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

// next returns a channel closed at the next note.
func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// note wakes every waiter of next.
func (c *changes) note() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// Changed returns a channel closed the next time background work ends: a
// janitor or tick round, a webhook delivery attempt, a Messaging socket
// opening or closing, a client event dropped by the rate limit. A test
// takes it, checks its condition, and waits on it when the condition does
// not hold yet, so it proceeds the moment the server changed rather than
// after a poll interval:
//
//	for ch := srv.Changed(); !cond(); ch = srv.Changed() { <-ch }
//
// (taking the channel before the check, so a change between the two is not
// missed).
func (s *Server) Changed() <-chan struct{} { return s.changes.next() }
