package report

import (
	"encoding/json"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// t0 is the fixed start of the fixture run; nothing in the fixture reads
// the clock, so every report of it is byte-for-byte reproducible.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func pos(file string, line, col int) diag.Pos { return diag.Pos{File: file, Line: line, Col: col} }

// exchange builds a transcript turn as the runner records it: the request
// and response bodies as sent and received, and the decoded result.
type exchange struct {
	index   int
	pos     diag.Pos
	say     string
	text    string
	meta    map[string]any
	ended   bool
	conv    string
	started time.Time
	latency time.Duration
	failed  bool // the call failed: no result, no response
}

func (r exchange) turn() *result.Turn {
	t := &result.Turn{
		Index:   r.index,
		Pos:     r.pos,
		Say:     r.say,
		Started: r.started,
		Latency: r.latency,
	}
	if r.index > 0 {
		t.Request = mustJSON(map[string]any{"conversationId": r.conv, "userInput": r.say})
	} else {
		t.Request = mustJSON(map[string]any{"agentId": "luigi", "env": "sandbox"})
	}
	if r.failed {
		return t
	}
	meta := r.meta
	if meta == nil {
		meta = map[string]any{}
	}
	rawMeta := mustJSON(meta)
	var decoded reply.Metadata
	if err := json.Unmarshal(rawMeta, &decoded); err != nil {
		panic(err)
	}
	t.Response = mustJSON(map[string]any{
		"conversationId":    r.conv,
		"userInput":         r.say,
		"response":          r.text,
		"metadata":          json.RawMessage(rawMeta),
		"conversationEnded": r.ended,
		"delayedResponse":   false,
	})
	t.Result = (&reply.TurnResult{
		ConversationID:    r.conv,
		UserInput:         r.say,
		Response:          r.text,
		ConversationEnded: r.ended,
		RawMetadata:       rawMeta,
		Plain:             true, // the reference's own shape, as the client marks it
	}).SetMetadata(decoded)
	return t
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// failure builds a broken expectation. The diff is given literally, as
// the runner recorded it, so that these golden files do not move when the
// diff algorithm of internal/assert is tuned (only the colour golden file
// calls assert.DiffColor).
func failure(p diag.Pos, key, msg, expected, actual, diff string) assert.Failure {
	return assert.Failure{Pos: p, Key: key, Message: msg, Expected: expected, Actual: actual, Diff: diff}
}

// fixture is a run that has a bit of everything: passed, failed with an
// inline and a line diff, errored after retries, flaky, skipped, pending
// (interrupted), a repeat, example rows, and text full of characters that
// break reports (ANSI escapes, NUL, "]]>", emoji, XML specials).
func fixture() *result.Result {
	const rest = "suites/restaurant.yaml"
	const spec = "suites/special.yaml"
	const hand = "features/handoff.feature"
	const bill = "suites/billing.yaml"

	greet := func(conv string, ms int) exchange {
		return exchange{index: 0, pos: pos(rest, 5, 3), conv: conv, started: at(ms), latency: 120 * time.Millisecond,
			text: "Welcome to Luigi's! How can I help?",
			meta: map[string]any{"currentNode": "greet", "nodeTrace": []any{"start", "greet"}, "state": map[string]any{"restaurant": "luigi"}}}
	}

	// Passed, two turns.
	books := &result.Case{
		Name: "books a table for four", Pos: pos(rest, 12, 5), Status: result.Passed,
		Duration: 1200 * time.Millisecond, Agent: "luigi", Env: "sandbox", Tags: []string{"smoke"},
		Attempts: []*result.Attempt{{
			Number: 1, Status: result.Passed, ConversationID: "conv-001", Started: at(0), Duration: 1200 * time.Millisecond,
			Turns: []*result.Turn{
				greet("conv-001", 0).turn(),
				exchange{index: 1, pos: pos(rest, 14, 9), say: "A table for four tonight, please", conv: "conv-001", started: at(130), latency: 540 * time.Millisecond,
					text: "Booked: four people at 19:00.",
					meta: map[string]any{"currentNode": "confirm", "nodeTrace": []any{"greet", "book", "confirm"},
						"state": map[string]any{"restaurant": "luigi", "party_size": 4, "time": "19:00"}}}.turn(),
			},
		}},
	}
	// Its reply passed a similar check near its threshold, another clear
	// of it: the near one is noted on the case's line.
	books.Attempts[0].Turns[1].Scores = []assert.Score{
		{Pos: pos(rest, 16, 21), Key: "response", To: "Booked: a table for four at 19:00.", Score: 0.7234, Min: 0.7},
		{Pos: pos(rest, 17, 21), Key: "state.summary", To: "four people, 19:00", Score: 0.91, Min: assert.DefaultSimilarity},
	}

	// Failed on turn 2 with an inline diff and a state check.
	party := &result.Case{
		Name: "asks for the party size", Pos: pos(rest, 30, 5), Status: result.Failed,
		Duration: 900 * time.Millisecond, Agent: "luigi", Env: "sandbox", Variant: "formal",
		RateLimited: 3, RateWaited: 2 * time.Second,
		Attempts: []*result.Attempt{{
			Number: 1, Status: result.Failed, ConversationID: "conv-002", Started: at(10), Duration: 900 * time.Millisecond,
			Turns: []*result.Turn{
				greet("conv-002", 10).turn(),
				exchange{index: 1, pos: pos(rest, 32, 9), say: "I'd like to book", conv: "conv-002", started: at(140), latency: 300 * time.Millisecond,
					text: "Sure. For what date?",
					meta: map[string]any{"currentNode": "ask_date", "nodeTrace": []any{"greet", "book", "ask_date"},
						"state": map[string]any{"restaurant": "luigi", "intent": "book"}}}.turn(),
				exchange{index: 2, pos: pos(rest, 35, 9), say: "Tomorrow", conv: "conv-002", started: at(450), latency: 410 * time.Millisecond,
					text: "For what time tomorrow?",
					meta: map[string]any{"currentNode": "ask_time", "nodeTrace": []any{"ask_date", "ask_time"},
						"state": map[string]any{"restaurant": "luigi", "intent": "book_table", "date": "2026-03-15"}}}.turn(),
			},
			Failures: []assert.Failure{
				failure(pos(rest, 37, 11), "response", "reply does not match", "For how many people tomorrow?", "For what time tomorrow?",
					"For [-how many people-]{+what time+} tomorrow?"),
				failure(pos(rest, 39, 13), "state.party_size", "state key party_size is missing", "present", "absent", ""),
			},
			// Turn 3 and the confirm: block never ran.
			NotRun: []*result.Step{
				{Pos: pos(rest, 40, 9), Kind: result.StepSay, Turn: 3, Text: `When the user says "Four, at eight"`},
				{Pos: pos(rest, 42, 11), Kind: result.StepCheck, Turn: 3, Text: "Then the reply meets the expectations of expect:"},
				{Pos: pos(rest, 43, 11), Kind: result.StepCapture, Turn: 3, Text: "Then response of the reply is captured as ${ref}"},
				{Pos: pos(rest, 44, 5), Kind: result.StepConfirm, Text: "Then the platform's records meet the expectations of confirm:",
					Confirms: []string{"conversation", "webhooks"}},
			},
		}},
	}

	// Failed with a multi-line reply and a line diff.
	menu := &result.Case{
		Name: "lists the menu", Pos: pos(rest, 50, 5), Status: result.Failed,
		Duration: 700 * time.Millisecond, Agent: "luigi", Env: "sandbox",
		Attempts: []*result.Attempt{{
			Number: 1, Status: result.Failed, ConversationID: "conv-003", Started: at(20), Duration: 700 * time.Millisecond,
			Turns: []*result.Turn{
				greet("conv-003", 20).turn(),
				exchange{index: 1, pos: pos(rest, 52, 9), say: "What's on the menu?", conv: "conv-003", started: at(150), latency: 560 * time.Millisecond,
					text: "Today we have:\n- pizza margherita\n- lasagne\n- tiramisu",
					meta: map[string]any{"currentNode": "menu", "nodeTrace": []any{"greet", "menu"}}}.turn(),
			},
			Failures: []assert.Failure{
				failure(pos(rest, 54, 11), "response", "reply does not equal the expected text",
					"Today we have:\n- pizza margherita\n- risotto\n- tiramisu",
					"Today we have:\n- pizza margherita\n- lasagne\n- tiramisu",
					"--- expected\n+++ actual\n  Today we have:\n  - pizza margherita\n- - risotto\n+ - lasagne\n  - tiramisu"),
			},
		}},
	}

	// Flaky: failed, then passed.
	italian := &result.Case{
		Name: "greets in Italian", Pos: pos(rest, 60, 5), Status: result.Flaky,
		Duration: 2300 * time.Millisecond, Agent: "luigi", Env: "sandbox",
		Attempts: []*result.Attempt{
			{Number: 1, Status: result.Failed, ConversationID: "conv-004", Started: at(30), Duration: 1100 * time.Millisecond,
				Turns: []*result.Turn{greet("conv-004", 30).turn()},
				Failures: []assert.Failure{
					failure(pos(rest, 62, 16), "response", "reply does not contain the expected text",
						`contains "Benvenuti"`, "Welcome to Luigi's! How can I help?", ""),
				}},
			{Number: 2, Status: result.Passed, ConversationID: "conv-005", Started: at(1200), Duration: 1200 * time.Millisecond,
				Turns: []*result.Turn{{
					Index: 0, Pos: pos(rest, 5, 3), Started: at(1200), Latency: 90 * time.Millisecond,
					Request: mustJSON(map[string]any{"agentId": "luigi"}),
					Response: mustJSON(map[string]any{"conversationId": "conv-005", "response": "Benvenuti da Luigi!", "metadata": map[string]any{},
						"userInput": "", "conversationEnded": false, "delayedResponse": false}),
					Result: (&reply.TurnResult{ConversationID: "conv-005", Response: "Benvenuti da Luigi!"}).SetMetadata(reply.Metadata{}),
				}}},
		},
	}

	// Errored on every attempt: a timeout on turn 1.
	slow := &result.Case{
		Name: "answers opening hours", Pos: pos(rest, 70, 5), Status: result.Errored,
		Duration: 31500 * time.Millisecond, Agent: "luigi", Env: "sandbox",
	}
	for i := 1; i <= 3; i++ {
		conv := "conv-01" + string(rune('0'+i))
		slow.Attempts = append(slow.Attempts, &result.Attempt{
			Number: i, Status: result.Errored, ConversationID: conv, Started: at(40 + i*10500), Duration: 10500 * time.Millisecond,
			Turns: []*result.Turn{
				greet(conv, 40+i*10500).turn(),
				exchange{index: 1, pos: pos(rest, 72, 9), say: "When are you open?", conv: conv, started: at(200 + i*10500), latency: 10 * time.Second, failed: true}.turn(),
			},
			Error: &result.Error{Pos: pos(rest, 72, 9), Kind: "timeout",
				Message: "POST /v1/agents/luigi/debug-chat/turn: no reply within 10s\n\x1b[1mgateway said:\x1b[0m busy"},
			// The check of the turn that timed out, and the next turn.
			NotRun: []*result.Step{
				{Pos: pos(rest, 73, 11), Kind: result.StepCheck, Turn: 1, Text: "Then the reply meets the expectations of expect:"},
				{Pos: pos(rest, 75, 9), Kind: result.StepSay, Turn: 2, Text: "When the user says \"and on Sunday?\"\x1b[0m"},
			},
		})
	}

	// Special characters everywhere.
	weird := &result.Case{
		Name: "emoji 🍕 & <tags> \"quoted\" ]]> end", Pos: pos(spec, 3, 5), Status: result.Failed,
		Duration: 250 * time.Millisecond, Agent: "luigi", Env: "sandbox",
		Attempts: []*result.Attempt{{
			Number: 1, Status: result.Failed, ConversationID: "conv-<&>", Started: at(50), Duration: 250 * time.Millisecond,
			Turns: []*result.Turn{
				{Index: 0, Pos: pos(spec, 3, 5), Started: at(50), Latency: 20 * time.Millisecond,
					Request:  mustJSON(map[string]any{"agentId": "luigi"}),
					Response: json.RawMessage(`<html>502 Bad Gateway</html>`),
					Result: (&reply.TurnResult{ConversationID: "conv-<&>",
						Response: "\x1b[31mred alert\x1b[0m with a NUL\x00 and ]]> and 🍕 & <b>bold</b>",
					}).SetMetadata(reply.Metadata{"state": map[string]any{"note": "a]]>b"}}),
				},
			},
			Failures: []assert.Failure{
				failure(pos(spec, 5, 11), "response", "reply does not equal the expected text",
					"red alert & <b>bold</b> ]]> 🍕",
					"\x1b[31mred alert\x1b[0m with a NUL\x00 and ]]> and 🍕 & <b>bold</b>",
					"{+\x1b[31m+}red alert{+\x1b[0m with a NUL\x00 and ]]> and 🍕+} & <b>bold</b>[- ]]> 🍕-]"),
			},
		}},
	}

	skipped := &result.Case{
		Name: "orders gluten-free", Pos: pos(spec, 20, 5), Status: result.Skipped,
		SkipReason: "skip: waiting for BUG-12\a",
	}
	pizza := &result.Case{
		Name: "orders <dish> (dish=pizza)", Pos: pos(spec, 30, 9), Status: result.Passed,
		Duration: 80 * time.Millisecond, Agent: "luigi", Env: "sandbox",
		Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, ConversationID: "conv-020", Started: at(60), Duration: 80 * time.Millisecond,
			Turns: []*result.Turn{greet("conv-020", 60).turn()}}},
	}
	pasta := &result.Case{
		Name: "orders <dish> (dish=pasta)", Pos: pos(spec, 31, 9), Status: result.Passed,
		Duration: 85 * time.Millisecond, Agent: "luigi", Env: "sandbox",
		Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, ConversationID: "conv-021", Started: at(70), Duration: 85 * time.Millisecond,
			Turns: []*result.Turn{greet("conv-021", 70).turn()}}},
	}

	// Repeat: 2 of 3 runs passed, 80% required.
	repeat := &result.Case{
		Name: "recommends a wine", Pos: pos(spec, 40, 5), Status: result.Failed,
		Duration: 600 * time.Millisecond, Agent: "luigi", Env: "sandbox",
		Repeat: &result.Repeat{Procedure: result.ProcedureFixed, Decision: result.DecisionFailed, Runs: 3, Passed: 2, Failed: 1, Limit: 3,
			PassRate: 0.8, Lower: 0.1353, Upper: 0.9830, Level: 0.95},
	}
	for i := 1; i <= 3; i++ {
		conv := "conv-03" + string(rune('0'+i))
		a := &result.Attempt{Number: i, Run: i, Status: result.Passed, ConversationID: conv, Started: at(80 + i*200), Duration: 200 * time.Millisecond,
			Turns: []*result.Turn{
				exchange{index: 0, pos: pos(spec, 40, 5), conv: conv, started: at(80 + i*200), latency: 50 * time.Millisecond, text: "Ciao!"}.turn(),
				exchange{index: 1, pos: pos(spec, 42, 9), say: "Which wine with pizza?", conv: conv, started: at(140 + i*200), latency: 100 * time.Millisecond,
					text: map[bool]string{true: "A Chianti.", false: "Water."}[i != 2]}.turn(),
			}}
		if i == 2 {
			a.Status = result.Failed
			a.Failures = []assert.Failure{failure(pos(spec, 44, 11), "response", "reply does not contain the expected text", `contains "Chianti"`, "Water.", "")}
		}
		// A similar check beside the contains: its spread over the runs
		// follows the case's line.
		a.Turns[1].Scores = []assert.Score{{Pos: pos(spec, 45, 21), Key: "response", To: "A Chianti goes well with pizza.",
			Score: []float64{0.62, 0.05, 0.66}[i-1], Min: 0.6}}
		repeat.Attempts = append(repeat.Attempts, a)
	}

	// Handoff and end of conversation markers.
	handoff := &result.Case{
		Name: "hands off to a human", Pos: pos(hand, 4, 3), Status: result.Passed,
		Duration: 400 * time.Millisecond, Agent: "luigi", Env: "sandbox",
		Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, ConversationID: "conv-040", Started: at(90), Duration: 400 * time.Millisecond,
			Turns: []*result.Turn{
				exchange{index: 0, pos: pos(hand, 5, 5), conv: "conv-040", started: at(90), latency: 60 * time.Millisecond, text: "Hi!",
					meta: map[string]any{"state": map[string]any{"a": 1, "gone": true}}}.turn(),
				exchange{index: 1, pos: pos(hand, 6, 5), say: "Let me talk to a person", conv: "conv-040", started: at(160), latency: 200 * time.Millisecond,
					text: "Transferring you now.", ended: true,
					meta: map[string]any{"handoffDestination": "reception", "currentNode": "handoff",
						"state": map[string]any{"a": 2, "reason": "asked"}}}.turn(),
			}}},
	}
	pending := &result.Case{Name: "complains about the bill", Pos: pos(hand, 12, 3), Status: result.Pending}
	// A file the interrupted run never reached: every case pending, so
	// the file is pending too, not skipped.
	unreached := &result.Case{Name: "explains a charge", Pos: pos(bill, 3, 5), Status: result.Pending}

	// The gate's own wait makes up the run's 2.5s with party's 2s: the
	// pacing line's average is the scenarios' alone.
	check := &result.Case{Name: "no alerts firing", Pos: pos("agenttest.yaml", 8, 3), Status: result.Passed, Duration: 15 * time.Millisecond, RateWaited: 500 * time.Millisecond}

	return &result.Result{
		Started:  t0,
		Duration: 3210 * time.Millisecond,
		Target:   result.Target{Name: "sim", Env: "sandbox", Embedded: true, AccountID: "ws-abcdefgh"},
		Files: []*result.File{
			{Path: rest, Suite: "restaurant", Cases: []*result.Case{books, party, menu, italian, slow}},
			{Path: spec, Suite: "special <chars> & \"quotes\"", Cases: []*result.Case{weird, skipped, pizza, pasta, repeat}},
			{Path: hand, Suite: "Handoff", Cases: []*result.Case{handoff, pending}},
			{Path: bill, Suite: "billing", Cases: []*result.Case{unreached}},
		},
		Interrupted: true,
		Checks:      []*result.Case{check},
		Pacing:      &result.Pacing{Limited: 3, Accepted: 42, Waited: 2500 * time.Millisecond, MaxWaited: 2 * time.Second},
	}
}

// replay feeds a result to an observer the way the runner would, one case
// after another.
func replay(o result.Observer, r *result.Result) {
	total := len(allCases(r))
	o.RunStarted(total, r.Target)
	if do, ok := o.(result.DeploymentObserver); ok && len(r.Deployments) > 0 {
		do.DeploymentsRead(r.Deployments)
	}
	for _, f := range r.Files {
		for _, c := range f.Cases {
			if c.Status != result.Skipped && c.Status != result.Pending {
				o.CaseStarted(f, c)
			}
			o.CaseFinished(f, c)
		}
	}
	for _, c := range r.Checks {
		o.CaseStarted(nil, c)
		o.CaseFinished(nil, c)
	}
	o.RunFinished(r)
}

// stepClock is a clock that advances 100ms at each reading, so the elapsed
// times of the progress line are reproducible.
func stepClock() func() time.Time {
	n := 0
	return func() time.Time {
		n++
		return t0.Add(time.Duration(n) * 100 * time.Millisecond)
	}
}
