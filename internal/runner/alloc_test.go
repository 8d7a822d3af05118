package runner

import (
	"context"
	"testing"
	"unsafe"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

// fixedChannel answers every call with the same reply, with no platform
// behind it: what a step allocates is then the session's alone.
type fixedChannel struct{ exch *platform.Exchange }

func (f fixedChannel) Open(context.Context, string, platform.ChatStart) (Conversation, *platform.Exchange, error) {
	return f, f.exch, nil
}

func (f fixedChannel) Send(context.Context, platform.ChatTurn) (*platform.Exchange, error) {
	return f.exch, nil
}

func (fixedChannel) Close() error { return nil }

// fixedSession is what a session over a fixedChannel answering say needs:
// the reply, the options, the booking scenario and its case.
func fixedSession(t *testing.T, say string) (*reply.TurnResult, Options, *scenario.Scenario, *result.Case) {
	t.Helper()
	res := (&reply.TurnResult{ConversationID: "c1", Response: say}).SetMetadata(reply.Metadata{})
	opts, err := Options{Channel: fixedChannel{&platform.Exchange{Result: res}}, DefaultAgent: "a1"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	sc := booking("books", 10)
	return res, opts, sc, &result.Case{Name: sc.Name, Agent: "a1", Env: DefaultEnv}
}

// TestPassingStepsAllocateWhatTheyRecord: a turn that passes allocates its
// copy of what was said, and its Turn when the attempt's block of Turns
// has none left; a check step what assert.Check allocates; nothing of the
// session's own (a method value per check and errors.As's target per
// turn were allocated before, and each Turn apart).
func TestPassingStepsAllocateWhatTheyRecord(t *testing.T) {
	res, opts, sc, c := fixedSession(t, "How many people?")
	// A case's calls carry its rate account (execute): the turn timer
	// is then armed again, not made, for each call.
	ctx, _ := withAccount(context.Background())
	s := newSession(ctx, &opts, sc, c)
	defer s.End()
	exp := &assert.Expect{Response: contains(1, "how many")}
	say, check := sayAt(sc, 0), check(exp)
	if !s.Exec(sc.Steps[0]) || !s.Exec(say) || !s.Exec(check) {
		t.Fatalf("steps failed: %s", describe(c))
	}
	turns := make([]*result.Turn, 0, 1000)
	turn := func() {
		s.a.Turns = turns[:0]
		if !s.Exec(say) {
			t.Fatal("turn failed")
		}
	}
	// A block with room for every run, as the program's turns have.
	s.turnBlock = make([]result.Turn, 1000)
	if n := testing.AllocsPerRun(100, turn); n != 1 {
		t.Errorf("a passing turn of the program allocates %v times, want 1 (its copy of what was said)", n)
	}
	s.turnBlock = nil
	if n := testing.AllocsPerRun(100, turn); n != 2 {
		t.Errorf("a passing turn past the program's allocates %v times, want 2 (its Turn and its copy of what was said)", n)
	}
	obs := assert.Observation{Result: res}
	want := testing.AllocsPerRun(100, func() { assert.Check(exp, obs, s.expand) })
	if n := testing.AllocsPerRun(100, func() {
		if !s.Exec(check) {
			t.Fatal("check failed")
		}
	}); n != want {
		t.Errorf("a passing check step allocates %v times, assert.Check %v", n, want)
	}
}

// TestTurnsSizedForTheProgram: an attempt's list of turns is made with
// room for every call of its program, not grown call by call, and its
// Turns in one block.
func TestTurnsSizedForTheProgram(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 1})
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("books", 10))}, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	if c.Status != result.Passed {
		t.Fatalf("%s%s", c.Status, describe(c))
	}
	a := c.Attempts[0]
	if len(a.Turns) != 5 || cap(a.Turns) != 5 {
		t.Errorf("turns: len %d, cap %d; want 5 and 5", len(a.Turns), cap(a.Turns))
	}
	for i, tr := range a.Turns {
		if at := uintptr(unsafe.Pointer(tr)) - uintptr(unsafe.Pointer(a.Turns[0])); at != uintptr(i)*unsafe.Sizeof(*tr) {
			t.Errorf("turn %d is %d bytes after the first; want the turns in one block", i, at)
		}
	}
}

// TestOpeningAllocatesWhatItRecords: a session that opens its
// conversation allocates what it records and what bounds its calls, and
// nothing besides: the Session, its expander, the Attempt and the case's
// list of attempts, the list of turns and the block of its Turns, the
// copy of the conversation id, and the turn timer's context and its
// cancel function, timer and callback (the create call's request and the
// turn timer itself were made apart before: 13).
func TestOpeningAllocatesWhatItRecords(t *testing.T) {
	_, opts, sc, c := fixedSession(t, "Welcome")
	ctx, _ := withAccount(context.Background())
	if n := testing.AllocsPerRun(100, func() {
		c.Attempts = nil
		s := newSession(ctx, &opts, sc, c)
		if !s.Exec(sc.Steps[0]) {
			t.Fatalf("open failed: %s", describe(c))
		}
		s.End()
	}); n != 11 {
		t.Errorf("opening a conversation allocates %v times, want 11", n)
	}
}

// TestCaptureReplacesItsValue: a name captured again holds the value
// captured last, for the steps after it (the session keeps its captures
// in a list).
func TestCaptureReplacesItsValue(t *testing.T) {
	_, opts, sc, c := fixedSession(t, "Welcome")
	s := newSession(context.Background(), &opts, sc, c)
	defer s.End()
	if !s.Exec(sc.Steps[0]) {
		t.Fatalf("open failed: %s", describe(c))
	}
	for _, said := range []string{"code AAA", "code BBB"} {
		s.last = &platform.Exchange{Result: (&reply.TurnResult{ConversationID: "c1", Response: said}).SetMetadata(reply.Metadata{})}
		if !s.Exec(capture(pos(20, 5), "code", "response", `code (\w+)`)) {
			t.Fatalf("capture from %q failed: %s", said, describe(c))
		}
	}
	if got, err := s.interpolate("${code}"); got != "BBB" || err != nil {
		t.Errorf("${code} = %q, %v; want the later capture, BBB", got, err)
	}
}
