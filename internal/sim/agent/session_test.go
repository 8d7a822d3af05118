package agent

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// builtin returns the named example agent.
func builtin(t testing.TB, id string) *Definition {
	t.Helper()
	defs, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("no built-in agent %q", id)
	return nil
}

func session(t testing.TB, id string, opts SessionOptions) *Session {
	t.Helper()
	if opts.ConversationID == "" {
		opts.ConversationID = "conv-1"
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(7, 11))
	}
	return builtin(t, id).NewSession(opts)
}

// mustLoad loads a definition that must have no problems.
func mustLoad(t *testing.T, file, src string) *Definition {
	t.Helper()
	def, diags := Load(file, []byte(src))
	if diags.HasErrors() {
		t.Fatalf("diagnostics:\n%v", diags)
	}
	return def
}

// play sends the messages in order and returns every reply.
func play(s *Session, msgs ...string) []Reply {
	out := make([]Reply, len(msgs))
	for i, m := range msgs {
		out[i] = s.Turn(m, nil)
	}
	return out
}

func traceHas(r Reply, node string) bool {
	return slices.Contains(r.Metadata.NodeTrace, node)
}

var refRE = regexp.MustCompile(`reference ([A-Z0-9]{6})\b`)

// TestRestaurantContractScenario is the example of the scenario-format
// contract; it must pass against the simulator unchanged.
func TestRestaurantContractScenario(t *testing.T) {
	s := session(t, "restaurant", SessionOptions{})
	g := s.Start()
	if !strings.Contains(g.Response, "Welcome") {
		t.Errorf("greeting %q lacks Welcome", g.Response)
	}
	r := s.Turn("I'd like to book a table", nil)
	if !strings.Contains(strings.ToLower(r.Response), "how many") || !traceHas(r, "CollectPartySize") {
		t.Errorf("book: response %q trace %v", r.Response, r.Metadata.NodeTrace)
	}
	if r.Metadata.InFlow != "booking" || r.Metadata.InStep != "party_size" {
		t.Errorf("book: inFlow/inStep = %q/%q", r.Metadata.InFlow, r.Metadata.InStep)
	}
	r = s.Turn("4 people at 7pm", nil)
	if r.Metadata.State["party_size"] != "4" || r.Metadata.State["time"] != "19:00" {
		t.Errorf("state = %v", r.Metadata.State)
	}
	if r.Metadata.CurrentNode != "ConfirmBooking" {
		t.Errorf("currentNode = %q", r.Metadata.CurrentNode)
	}
	m := refRE.FindStringSubmatch(r.Response)
	if m == nil {
		t.Fatalf("no reference in %q", r.Response)
	}
	if r.Metadata.Metrics["BOOKED"] != "true" {
		t.Errorf("metrics = %v", r.Metadata.Metrics)
	}
	wantEntities := []map[string]any{{"party_size": "4"}, {"time": "19:00"}}
	if !reflect.DeepEqual(r.Entities, wantEntities) {
		t.Errorf("entities = %v", r.Entities)
	}
	r = s.Turn("what was my reference?", nil)
	if !strings.Contains(r.Response, m[1]) {
		t.Errorf("reference reply %q lacks %s", r.Response, m[1])
	}
	r = s.Turn("thanks, bye", nil)
	if !r.Ended || r.Handoff != nil || !s.Ended() {
		t.Errorf("bye: ended=%v handoff=%v", r.Ended, r.Handoff)
	}
	if r.Metadata.HandoffDestination != "" {
		t.Errorf("handoffDestination = %q", r.Metadata.HandoffDestination)
	}
	after := s.Turn("hello?", nil)
	if !after.Ended || after.Response != "" || len(after.Metadata.NodeTrace) != 0 {
		t.Errorf("turn after end = %+v", after)
	}
}

func TestReferenceIsReproducible(t *testing.T) {
	ref := func(seed uint64) string {
		s := session(t, "restaurant", SessionOptions{Rand: rand.New(rand.NewPCG(seed, 1))})
		s.Start()
		r := play(s, "book a table for 2", "at 8pm")[1]
		return refRE.FindStringSubmatch(r.Response)[1]
	}
	if a, b := ref(1), ref(1); a != b {
		t.Errorf("same seed gave %s and %s", a, b)
	}
	if a, b := ref(1), ref(2); a == b {
		t.Errorf("different seeds gave the same reference %s", a)
	}
}

func TestRestaurantPartialAnswers(t *testing.T) {
	s := session(t, "restaurant", SessionOptions{})
	s.Start()
	rs := play(s, "can I reserve a table for 3?", "at 12:30")
	if rs[0].Metadata.CurrentNode != "AskTime" || !strings.Contains(rs[0].Response, "for 3") {
		t.Errorf("after party size: %q at %s", rs[0].Response, rs[0].Metadata.CurrentNode)
	}
	if rs[1].Metadata.State["time"] != "12:30" || rs[1].Metadata.CurrentNode != "ConfirmBooking" {
		t.Errorf("after time: %v at %s", rs[1].Metadata.State, rs[1].Metadata.CurrentNode)
	}
	// With no booking yet, the reference question gets the other branch.
	s2 := session(t, "restaurant", SessionOptions{})
	s2.Start()
	if r := s2.Turn("what's my reference", nil); r.Metadata.CurrentNode != "NoReference" {
		t.Errorf("no booking: %s %q", r.Metadata.CurrentNode, r.Response)
	}
}

func TestRestaurantVariant(t *testing.T) {
	s := session(t, "restaurant", SessionOptions{VariantID: "spring"})
	g := s.Start()
	if !strings.Contains(g.Response, "spring menu") || !strings.Contains(g.Response, "Welcome") {
		t.Errorf("spring greeting = %q", g.Response)
	}
	if g.Metadata.State["variant_id"] != "spring" {
		t.Errorf("state variant_id = %v", g.Metadata.State["variant_id"])
	}
	r := play(s, "book a table", "2 people at 6pm")[1]
	if !strings.Contains(r.Response, "spring menu") || refRE.FindString(r.Response) == "" {
		t.Errorf("spring confirmation = %q", r.Response)
	}
	// An unknown variant falls back to the default wording.
	d := session(t, "restaurant", SessionOptions{VariantID: "winter"}).Start()
	if strings.Contains(d.Response, "spring") {
		t.Errorf("unknown variant used spring wording: %q", d.Response)
	}
}

func TestRestaurantKnowledge(t *testing.T) {
	type testCase struct {
		msg     string
		cited   string
		topics  []string
		sources []string
		reply   string
	}
	run := func(t *testing.T, tc testCase) {
		s := session(t, "restaurant", SessionOptions{})
		s.Start()
		r := s.Turn(tc.msg, nil)
		md := r.Metadata
		if md.CitedTopic != tc.cited || !reflect.DeepEqual(md.RetrievedTopics, tc.topics) || !reflect.DeepEqual(md.RetrievedSources, tc.sources) {
			t.Errorf("cited %q topics %v sources %v", md.CitedTopic, md.RetrievedTopics, md.RetrievedSources)
		}
		if !strings.Contains(r.Response, tc.reply) || r.IsOOD {
			t.Errorf("reply %q (ood %v), want %q", r.Response, r.IsOOD, tc.reply)
		}
	}
	for _, tc := range []testCase{
		{
			msg: "When are you open?", cited: "opening_hours", topics: []string{"opening_hours"},
			sources: []string{"https://bellatavola.example/hours"}, reply: "Tuesday to Sunday",
		},
		{
			msg: "do you have gluten free dishes or any nuts? I have allergies", cited: "allergens",
			topics:  []string{"allergens", "menu"},
			sources: []string{"https://bellatavola.example/allergens", "https://bellatavola.example/menu"},
			reply:   "nut-free",
		},
	} {
		t.Run(tc.msg, func(t *testing.T) { run(t, tc) })
	}
}

func TestRestaurantDelayedResponse(t *testing.T) {
	s := session(t, "restaurant", SessionOptions{})
	s.Start()
	s.Turn("I'd like to book a table", nil)
	r := s.Turn("10 people at 8pm", nil)
	if !r.Delayed || !strings.Contains(r.Response, "one moment") || r.Metadata.CurrentNode != "CheckAvailability" {
		t.Fatalf("holding reply: delayed=%v %q at %s", r.Delayed, r.Response, r.Metadata.CurrentNode)
	}
	if len(r.Metadata.FunctionEvents) != 0 {
		t.Errorf("function ran before the delay ended: %v", r.Metadata.FunctionEvents)
	}
	// Whatever the user says now, the real reply comes.
	r = s.Turn("blah blah", nil)
	if r.Delayed || r.IsOOD || !strings.Contains(r.Response, "private dining room") || refRE.FindString(r.Response) == "" {
		t.Errorf("delayed reply: delayed=%v ood=%v %q", r.Delayed, r.IsOOD, r.Response)
	}
	if want := []string{"CheckAvailability", "ConfirmBooking"}; !reflect.DeepEqual(r.Metadata.NodeTrace, want) {
		t.Errorf("trace = %v", r.Metadata.NodeTrace)
	}
	ev := r.Metadata.FunctionEvents
	if len(ev) != 1 || ev[0].Name != "check_availability" || ev[0].Status != "success" || ev[0].LatencyMS != 1800 {
		t.Fatalf("function events = %+v", ev)
	}
	if !reflect.DeepEqual(ev[0].Arguments, map[string]any{"party_size": "10", "time": "20:00"}) {
		t.Errorf("arguments = %v", ev[0].Arguments)
	}
	avail, _ := r.Metadata.State["availability"].(map[string]any)
	if avail["seats"] != "10" {
		t.Errorf("saved result = %v", r.Metadata.State["availability"])
	}
}

func TestRestaurantSmallTalkVariance(t *testing.T) {
	seen := map[string]bool{}
	for seed := range uint64(40) {
		s := session(t, "restaurant", SessionOptions{Rand: rand.New(rand.NewPCG(seed, seed))})
		s.Start()
		r := s.Turn("hello, how are you?", nil)
		seen[r.Response] = true
		if len(r.Metadata.LLMRequests) != 1 {
			t.Fatalf("llmRequests = %v", r.Metadata.LLMRequests)
		}
		req := r.Metadata.LLMRequests[0]
		if req["model"] != "sim-chat-1" || req["prompt_tokens"].(int) <= 120 || req["completion_tokens"].(int) <= 0 {
			t.Errorf("llm request = %v", req)
		}
	}
	if len(seen) != 3 {
		t.Errorf("saw %d phrasings, want all 3: %v", len(seen), seen)
	}
}

func TestSilenceAndFallback(t *testing.T) {
	type testCase struct {
		agent, msg string
		silence    bool
		reply      string
		trace      []string
	}
	run := func(t *testing.T, tc testCase) {
		s := session(t, tc.agent, SessionOptions{})
		s.Start()
		before := s.CurrentNode()
		r := s.Turn(tc.msg, nil)
		if r.IsSilence != tc.silence || r.IsOOD == tc.silence {
			t.Errorf("silence=%v ood=%v", r.IsSilence, r.IsOOD)
		}
		if r.Response != tc.reply {
			t.Errorf("reply = %q, want %q", r.Response, tc.reply)
		}
		if !reflect.DeepEqual(r.Metadata.NodeTrace, tc.trace) {
			t.Errorf("trace = %v, want %v", r.Metadata.NodeTrace, tc.trace)
		}
		if r.Metadata.CurrentNode != before {
			t.Errorf("current node moved from %s to %s", before, r.Metadata.CurrentNode)
		}
	}
	for _, tc := range []testCase{
		{"utility-billing", "", true, "Sorry, I didn't hear anything. Please tell me your 8-digit account number.", []string{"Silence", "AskAccount"}},
		{"utility-billing", "   ", true, "Sorry, I didn't hear anything. Please tell me your 8-digit account number.", []string{"Silence", "AskAccount"}},
		{"utility-billing", "purple elephants", false, "Sorry, I didn't understand that. Please tell me your 8-digit account number.", []string{"Fallback", "AskAccount"}},
		{"clinic", "", true, SilenceReply, []string{"Greeting"}},
		{"clinic", "purple elephants", false, FallbackReply, []string{"Greeting"}},
	} {
		t.Run(tc.agent+"/"+tc.msg, func(t *testing.T) { run(t, tc) })
	}
}

func TestUtilityBillHappyPathAndMetricArray(t *testing.T) {
	s := session(t, "utility-billing", SessionOptions{})
	s.Start()
	rs := play(s, "my account number is 12345678", "it's sw1a 1aa", "can I get a payment plan?", "no thanks, bye")
	if rs[0].Metadata.CurrentNode != "AskPostcode" || rs[0].Metadata.InFlow != "identity" || rs[0].Metadata.InStep != "postcode" {
		t.Errorf("after account: %s %s/%s", rs[0].Metadata.CurrentNode, rs[0].Metadata.InFlow, rs[0].Metadata.InStep)
	}
	r := rs[1]
	if r.Metadata.State["postcode"] != "SW1A 1AA" {
		t.Errorf("postcode = %v", r.Metadata.State["postcode"])
	}
	if want := []string{"Verify", "LookupBill", "ReadBill"}; !reflect.DeepEqual(r.Metadata.NodeTrace, want) {
		t.Errorf("trace = %v", r.Metadata.NodeTrace)
	}
	if !strings.Contains(r.Response, "Thanks Sam") || !strings.Contains(r.Response, "£84.20") || !strings.Contains(r.Response, "2026-07-15") {
		t.Errorf("bill reply = %q", r.Response)
	}
	if len(r.Metadata.FunctionEvents) != 2 || r.FunctionErrors != 0 {
		t.Errorf("function events = %+v errors %d", r.Metadata.FunctionEvents, r.FunctionErrors)
	}
	if r.Metadata.Metrics["SERVICE_REQUEST"] != "bill_enquiry" {
		t.Errorf("metrics after bill = %v", r.Metadata.Metrics)
	}
	r = rs[2]
	if got := r.Metadata.Metrics["SERVICE_REQUEST"]; !reflect.DeepEqual(got, []string{"bill_enquiry", "payment_plan"}) {
		t.Errorf("metric written twice = %#v", got)
	}
	if r.Metadata.State["payment_plan"] != "monthly" {
		t.Errorf("state = %v", r.Metadata.State)
	}
	// The earlier reply's snapshot is untouched by the later write.
	if rs[1].Metadata.Metrics["SERVICE_REQUEST"] != "bill_enquiry" {
		t.Errorf("earlier metrics snapshot changed: %v", rs[1].Metadata.Metrics)
	}
	if _, ok := rs[1].Metadata.State["payment_plan"]; ok {
		t.Errorf("earlier state snapshot changed: %v", rs[1].Metadata.State)
	}
	if !rs[3].Ended || rs[3].Handoff != nil {
		t.Errorf("goodbye: %+v", rs[3])
	}
}

func TestUtilityBillFailureHandsOff(t *testing.T) {
	s := session(t, "utility-billing", SessionOptions{})
	s.Start()
	r := s.Turn("account 99999999, postcode M1 1AE", nil)
	if r.FunctionErrors != 1 {
		t.Errorf("function errors = %d", r.FunctionErrors)
	}
	ev := r.Metadata.FunctionEvents
	if len(ev) != 2 || ev[1].Name != "lookup_bill" || ev[1].Status != "error" || !strings.Contains(ev[1].Error, "99999999") || ev[1].Result != nil {
		t.Errorf("function events = %+v", ev)
	}
	if _, ok := r.Metadata.State["bill"]; ok {
		t.Error("failed function wrote its result to state")
	}
	h := r.Handoff
	if h == nil || h.Destination != "billing_team" || h.Reason != "bill lookup failed" || h.SharedID != "99999999" {
		t.Fatalf("handoff = %+v", h)
	}
	want := map[string]any{"reason": "lookup_failed", "account_number": "99999999", "postcode": "M1 1AE"}
	if !reflect.DeepEqual(h.Data, want) {
		t.Errorf("handoff data = %v", h.Data)
	}
	if r.Metadata.HandoffDestination != "billing_team" || !r.Ended {
		t.Errorf("handoffDestination %q ended %v", r.Metadata.HandoffDestination, r.Ended)
	}
	if r.Metadata.Metrics["SERVICE_REQUEST"] != "bill_lookup_failed" {
		t.Errorf("metrics = %v", r.Metadata.Metrics)
	}
}

func TestUtilityAdvisorHandoffSharedIDOptional(t *testing.T) {
	s := session(t, "utility-billing", SessionOptions{IntegrationAttributes: map[string]any{"tier": "gold"}})
	g := s.Start()
	if !strings.Contains(g.Response, "As a gold customer") || g.Metadata.State["tier"] != "gold" {
		t.Errorf("greeting %q state %v", g.Response, g.Metadata.State)
	}
	r := s.Turn("let me speak to a real person", nil)
	h := r.Handoff
	if h == nil || h.Destination != "billing_team" || h.SharedID != "" || h.Data["tier"] != "gold" || h.Data["reason"] != "customer_request" {
		t.Errorf("handoff = %+v", h)
	}
	// Without the attribute, the state key is not written at all.
	plain := session(t, "utility-billing", SessionOptions{}).Start()
	if _, ok := plain.Metadata.State["tier"]; ok {
		t.Errorf("state has an empty tier: %v", plain.Metadata.State)
	}
}

func TestClinic(t *testing.T) {
	s := session(t, "clinic", SessionOptions{})
	s.Start()
	rs := play(s, "I need to book an appointment", "tomorrow at 9:15am")
	if !reflect.DeepEqual(rs[0].Intents, []string{"book_appointment"}) {
		t.Errorf("intents = %v", rs[0].Intents)
	}
	r := rs[1]
	code, _ := r.Metadata.State["booking_code"].(string)
	if !regexp.MustCompile(`^[A-Z0-9]{6}$`).MatchString(code) || !strings.Contains(r.Response, code) {
		t.Errorf("booking code %q in %q", code, r.Response)
	}
	if r.Metadata.Metrics["BOOKED"] != "true" || r.Metadata.State["day"] != "tomorrow" || r.Metadata.State["time"] != "09:15" {
		t.Errorf("metrics %v state %v", r.Metadata.Metrics, r.Metadata.State)
	}

	u := session(t, "clinic", SessionOptions{})
	u.Start()
	r = u.Turn("I have chest pain and feel dizzy", nil)
	h := r.Handoff
	if h == nil || h.Destination != "on_call_nurse" || !strings.Contains(h.Reason, "urgent") || !reflect.DeepEqual(h.Data, map[string]any{"reason": "urgent_symptoms"}) {
		t.Errorf("handoff = %+v", h)
	}
	if !r.Ended || r.Metadata.HandoffDestination != "on_call_nurse" {
		t.Errorf("ended %v destination %q", r.Ended, r.Metadata.HandoffDestination)
	}
}

func TestVoiceSessionBuiltins(t *testing.T) {
	clock := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	s := session(t, "utility-billing", SessionOptions{
		ConversationID: "voice-1", Channel: "VOICE-SIP", Env: "live", TTSLang: "cy-GB",
		IntegrationAttributes: map[string]any{"from_number": "+447700900123"},
		Now:                   func() time.Time { return clock },
	})
	g := s.Start()
	st := g.Metadata.State
	if st["from_"] != "+447700900123" || st["to"] != "+442071230002" || st["channel"] != "VOICE-SIP" || st["environment"] != "live" || st["conversation_id"] != "voice-1" {
		t.Errorf("built-in state = %v", st)
	}
	if sid, _ := st["call_sid"].(string); !regexp.MustCompile(`^CA[0-9a-f]{32}$`).MatchString(sid) {
		t.Errorf("call_sid = %q", sid)
	}
	if g.Metadata.ASRLangCode != "en-GB" || g.Metadata.TTSLangCode != "cy-GB" {
		t.Errorf("languages = %s/%s", g.Metadata.ASRLangCode, g.Metadata.TTSLangCode)
	}
	if g.Metadata.AgentResponseAudioURL != DefaultAudioBaseURL+"/voice-1/0.wav" {
		t.Errorf("audio url = %q", g.Metadata.AgentResponseAudioURL)
	}
	r := s.Turn("", nil)
	if r.Metadata.AgentResponseAudioURL != DefaultAudioBaseURL+"/voice-1/1.wav" {
		t.Errorf("audio url = %q", r.Metadata.AgentResponseAudioURL)
	}
	chat := session(t, "utility-billing", SessionOptions{}).Start()
	if _, ok := chat.Metadata.State["call_sid"]; ok || chat.Metadata.AgentResponseAudioURL != "" {
		t.Errorf("webchat session has voice members: %+v", chat.Metadata)
	}
}

// The built-in state and languages of a session follow its create call
// (docs/agent-definition.md, "Where each field comes from").
func TestSessionBuiltinState(t *testing.T) {
	type testCase struct {
		name   string
		opts   SessionOptions
		want   map[string]any
		absent []string
		asr    string
	}
	run := func(t *testing.T, tc testCase) {
		g := session(t, "utility-billing", tc.opts).Start()
		for k, v := range tc.want {
			if got := g.Metadata.State[k]; got != v {
				t.Errorf("state[%s] = %v, want %v", k, got, v)
			}
		}
		for _, k := range tc.absent {
			if v, ok := g.Metadata.State[k]; ok {
				t.Errorf("state[%s] = %v, want no key", k, v)
			}
		}
		if g.Metadata.ASRLangCode != tc.asr {
			t.Errorf("asrLangCode = %q, want %q", g.Metadata.ASRLangCode, tc.asr)
		}
	}
	for _, tc := range []testCase{
		{
			name:   "defaults",
			want:   map[string]any{"channel": DefaultChannel, "environment": DefaultEnv},
			absent: []string{"variant_id", "from_", "to", "call_sid"},
			asr:    "en-GB",
		},
		{
			name:   "SMS skips an empty from_number",
			opts:   SessionOptions{Channel: "SMS", ASRLang: "fr-FR", IntegrationAttributes: map[string]any{"from_number": "", "from_": "+15550001"}},
			want:   map[string]any{"from_": "+15550001", "to": "+442071230002"},
			absent: []string{"call_sid"},
			asr:    "fr-FR",
		},
		{
			name: "from_number comes first",
			opts: SessionOptions{Channel: "SMS", IntegrationAttributes: map[string]any{"from_number": "+15550001", "from": "+15550002"}},
			want: map[string]any{"from_": "+15550001"},
			asr:  "en-GB",
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestTemplatesAndConditions(t *testing.T) {
	src := `id: tpl
start: A
intents:
  go: {keywords: [go]}
entities:
  n: {type: number}
functions:
  echo:
    result: {said: "${args.word}", at: "${now}"}
routes:
  - if: {match: '^\d+$', atLeast: {n: 10}}
    goto: Big
  - if: {match: '^\d+$', below: {n: 10}, unset: [missing]}
    goto: Small
  - if: {equals: {mode: fast}, intent: go}
    goto: Fast
nodes:
  A:
    set:
      mode: fast
      from_input: "${input.x}"
      copy: "${state.mode}"
    call:
      function: echo
      args: {word: "${conv.id}/${conv.channel}/${conv.environment}/${conv.turn}"}
      saveAs: echoed
    say: "${state.echoed.said} ${state.echoed.at} ${random.digits:4} [${state.nothing}]"
  Big:
    say: big ${input.n}
  Small:
    say: small
  Fast:
    say: fast ${conv.variant_name}
`
	def := mustLoad(t, "tpl.yaml", src)
	clock := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	s := def.NewSession(SessionOptions{ConversationID: "c9", Env: "pre-release", Now: func() time.Time { return clock }})
	g := s.Start()
	if !regexp.MustCompile(`^c9/WEBCHAT/pre-release/0 2026-05-06T07:08:09Z \d{4} \[\]$`).MatchString(g.Response) {
		t.Errorf("greeting = %q", g.Response)
	}
	if _, ok := g.Metadata.State["from_input"]; ok {
		t.Error("empty input reference wrote state")
	}
	if g.Metadata.State["copy"] != "fast" {
		t.Errorf("copy = %v", g.Metadata.State["copy"])
	}
	if r := s.Turn("5", nil); r.Response != "small" {
		t.Errorf("5 -> %q", r.Response)
	}
	if r := s.Turn("let's go", nil); r.Response != "fast " {
		t.Errorf("go -> %q", r.Response)
	}
	if r := s.Turn("12", map[string]any{"n": 12.5}); r.Response != "big 12.5" {
		t.Errorf("12 -> %q", r.Response)
	}
	if r := s.Turn("12 apples", nil); !r.IsOOD {
		t.Errorf("match condition ignored: %q", r.Response)
	}
	if _, err := json.Marshal(g); err != nil {
		t.Errorf("reply does not encode: %v", err)
	}
}

func TestNumberTimePhoneEmail(t *testing.T) {
	type testCase struct {
		typ, in, want string
		ok            bool
	}
	for _, tc := range []testCase{
		{"time", "7pm", "19:00", true},
		{"time", "at 7:30 p.m.", "19:30", true},
		{"time", "12am", "00:00", true},
		{"time", "12 pm", "12:00", true},
		{"time", "19:45", "19:45", true},
		{"time", "noon", "12:00", true},
		{"time", "25:00", "", false},
		{"time", "13pm", "", false},
		{"time", "0am", "", false},
		{"time", "13am", "", false},
		{"time", "7PM", "19:00", true},
		{"time", "MIDNIGHT", "00:00", true},
		{"time", "24:00", "", false},
		{"time", "19:60", "", false},
		{"time", "23:59", "23:59", true},
		{"phone", "123-4567", "1234567", true},
		{"phone", "12-34-5", "", false},
		{"number", "four", "4", true},
		{"number", "007", "7", true},
		{"number", "many", "", false},
		{"phone", "+44 (20) 7946-0018", "+442079460018", true},
		{"email", "Mail Sam.T@Example.org please", "sam.t@example.org", true},
	} {
		typ, _ := builtinEntityType(tc.typ)
		e := &entity{name: "x", typ: typ, patterns: []*pattern{newPattern(typ.pattern)}, wholeMatch: tc.typ == "time"}
		got, ok := e.extract(tc.in, strings.ToLower(tc.in), isASCII(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s %q = %q, %v; want %q, %v", tc.typ, tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// An entity takes its pattern's first non-empty group and folds its case
// as the definition asks.
func TestEntityGroupsAndCase(t *testing.T) {
	src := `id: ent
start: A
entities:
  ref: {type: number, patterns: '(#)?(\d+)'}
  code: {patterns: 'code (\w+)', case: lower, stateKey: secret}
routes:
  - if: {entities: [ref]}
    goto: B
nodes:
  A: {say: hello}
  B: {say: "ref ${state.ref}"}
`
	def := mustLoad(t, "ent.yaml", src)
	s := def.NewSession(SessionOptions{})
	s.Start()
	r := s.Turn("5, code ABC", nil)
	want := []map[string]any{{"ref": "5"}, {"code": "abc"}}
	if !reflect.DeepEqual(r.Entities, want) {
		t.Errorf("entities = %v, want %v", r.Entities, want)
	}
	if st := r.Metadata.State; st["secret"] != "abc" || st["code"] != nil {
		t.Errorf("state = %v, want the code under its stateKey only", st)
	}
	if r.Response != "ref 5" {
		t.Errorf("response = %q, want the entities rule to fire", r.Response)
	}
}

// A fallback handler is a detour back to the interrupted node only when it
// neither moves on, ends the conversation nor delays its reply.
func TestFallbackDetour(t *testing.T) {
	type testCase struct {
		name, handler, want, current string
		ended                        bool
	}
	run := func(t *testing.T, tc testCase) {
		src := "id: det\nstart: A\nfallback: H\nnodes:\n  A: {say: hello, reprompt: again}\n  B: {say: at B}\n  H: " + tc.handler + "\n"
		def := mustLoad(t, "det.yaml", src)
		s := def.NewSession(SessionOptions{})
		s.Start()
		r := s.Turn("purple elephants", nil)
		if r.Response != tc.want || r.Metadata.CurrentNode != tc.current || r.Ended != tc.ended {
			t.Errorf("got %q at %s (ended %v), want %q at %s (ended %v)", r.Response, r.Metadata.CurrentNode, r.Ended, tc.want, tc.current, tc.ended)
		}
	}
	for _, tc := range []testCase{
		{name: "returns", handler: "{say: pardon}", want: "pardon again", current: "A"},
		{name: "moves on", handler: "{say: pardon, goto: B}", want: "pardon at B", current: "B"},
		{name: "ends", handler: "{say: bye, end: true}", want: "bye", current: "H", ended: true},
		{name: "delays", handler: "{delay: wait, say: bye}", want: "wait", current: "H"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// A string entity whose pattern captures only blanks extracts nothing.
func TestStringEntityNeedsText(t *testing.T) {
	typ, _ := builtinEntityType("string")
	e := &entity{name: "x", typ: typ, patterns: []*pattern{newPattern(regexp.MustCompile(`name:(\s*)$`))}}
	if got, ok := e.extract("name:  ", "name:  ", true); ok {
		t.Errorf("extracted %q from blanks", got)
	}
}

func TestContainsWord(t *testing.T) {
	for _, tc := range []struct {
		s, kw string
		want  bool
	}{
		{"hi there", "hi", true},
		{"this is it", "hi", false},
		{"oh, hi!", "hi", true},
		{"thank you so much", "thank you", true},
		{"abc", "abcd", false},
		{"sushi", "hi", false},
		{"hi5", "hi", false},
		{"hi_there", "hi", false},
		{"hi\u00e9", "hi", false},
		// The first occurrence is inside a word, the overlapping second
		// stands alone.
		{"xa-a-a", "a-a", true},
	} {
		if got := containsWord(tc.s, tc.kw); got != tc.want {
			t.Errorf("containsWord(%q, %q) = %v", tc.s, tc.kw, got)
		}
	}
}

// The greeting can be asked for once; Start again returns nothing new.
func TestStartTwice(t *testing.T) {
	s := session(t, "restaurant", SessionOptions{})
	s.Start()
	r := s.Start()
	if r.Response != "" || len(r.Metadata.NodeTrace) != 0 || r.Metadata.CurrentNode != "Greeting" {
		t.Errorf("second Start = %+v", r)
	}
}

// A conditional loop is legal in a definition but must not hang a turn.
func TestConditionalLoopIsBounded(t *testing.T) {
	src := `id: loop
start: A
nodes:
  A:
    then:
      - if: {unset: [never]}
        goto: B
  B:
    then:
      - if: {unset: [never]}
        goto: A
`
	def := mustLoad(t, "loop.yaml", src)
	r := def.NewSession(SessionOptions{}).Start()
	if len(r.Metadata.NodeTrace) != maxHops {
		t.Errorf("trace length = %d, want %d", len(r.Metadata.NodeTrace), maxHops)
	}
}

// Keywords are case-insensitive whole words, whatever case the
// definition writes them in (docs/agent-definition.md, intents).
func TestIntentKeywords(t *testing.T) {
	src := `id: kw
start: A
intents:
  book: {keywords: [Reservation, make a booking]}
  greet: {keywords: [hi]}
nodes:
  A: {say: hello}
`
	def := mustLoad(t, "kw.yaml", src)
	for _, tc := range []struct {
		msg  string
		want []string
	}{
		{"A RESERVATION, please", []string{"book"}},
		{"Could you Make a Booking? hi", []string{"book", "greet"}},
		{"this is a thing", nil},
	} {
		s := def.NewSession(SessionOptions{})
		s.Start()
		if got := s.Turn(tc.msg, nil).Intents; !slices.Equal(got, tc.want) {
			t.Errorf("%q: intents %v, want %v", tc.msg, got, tc.want)
		}
	}
}

// A delayed node that moves on to another delayed node holds again: only
// the node whose reply was due plays in full.
func TestDelayedChainHoldsAgain(t *testing.T) {
	src := `id: chain
start: A
nodes:
  A: {delay: wait A, say: done A, goto: B}
  B: {delay: wait B, say: done B}
`
	def := mustLoad(t, "chain.yaml", src)
	s := def.NewSession(SessionOptions{})
	want := []string{"wait A", "done A wait B", "done B"}
	got := []string{s.Start().Response, s.Turn("hello", nil).Response, s.Turn("hello", nil).Response}
	if !slices.Equal(got, want) {
		t.Errorf("replies = %q, want %q", got, want)
	}
}

// A node's say falls back from a variant without its own wording, its
// llm request counts the said words, and an empty saved result counts as
// unset (docs/agent-definition.md, conditions and llmRequests).
func TestNodeSayLLMAndEmptyState(t *testing.T) {
	src := `id: np
start: A
variants: [{id: a, name: A}, {id: b, name: B}]
functions:
  empty: {result: ""}
nodes:
  A:
    call: {function: empty, saveAs: r}
    say: two words
    variants: {b: other words}
    llm: {model: m, promptTokens: 10}
    then:
      - if: {set: [r]}
        goto: Set
      - if: {unset: [r]}
        goto: Unset
  Set: {say: set}
  Unset: {say: unset}
`
	def := mustLoad(t, "np.yaml", src)
	g := def.NewSession(SessionOptions{VariantID: "a"}).Start()
	if g.Response != "two words unset" {
		t.Errorf("response = %q, want %q", g.Response, "two words unset")
	}
	want := []map[string]any{{"model": "m", "prompt_tokens": 10, "completion_tokens": 3}}
	if !reflect.DeepEqual(g.Metadata.LLMRequests, want) {
		t.Errorf("llmRequests = %v, want %v", g.Metadata.LLMRequests, want)
	}
	if g.Metadata.Metrics != nil {
		t.Errorf("metrics = %v before any was written, want none", g.Metadata.Metrics)
	}
	if ev := g.Metadata.FunctionEvents; len(ev) != 1 || ev[0].LatencyMS != defaultLatencyMS {
		t.Errorf("function events = %+v, want one with the default latency", ev)
	}
}

// Each condition key at its boundary (docs/agent-definition.md, "routes
// and rules").
func TestConditionBounds(t *testing.T) {
	def := mustLoad(t, "c.yaml", minimal+"knowledge:\n  hours: {keywords: [open], answer: noon}\n")
	yes, no := true, false
	for _, tc := range []struct {
		name, n, msg string
		c            cond
		want         bool
	}{
		{"atLeast at the bound", "10", "", cond{atLeast: []keyNumber{{"n", 10}}}, true},
		{"atLeast below it", "9.5", "", cond{atLeast: []keyNumber{{"n", 10}}}, false},
		{"below at the bound", "10", "", cond{below: []keyNumber{{"n", 10}}}, false},
		{"below under it", "9.5", "", cond{below: []keyNumber{{"n", 10}}}, true},
		{"atLeast on a non-number", "ten", "", cond{atLeast: []keyNumber{{"n", 0}}}, false},
		{"knowledge false without a topic", "", "hello", cond{knowledge: &no}, true},
		{"knowledge false with a topic", "", "are you open", cond{knowledge: &no}, false},
		{"knowledge true with a topic", "", "are you open", cond{knowledge: &yes}, true},
	} {
		s := def.NewSession(SessionOptions{})
		if tc.n != "" {
			s.setState("n", tc.n)
		}
		if got := s.holds(&turnCtx{msg: tc.msg}, &tc.c); got != tc.want {
			t.Errorf("%s: holds = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Topics rank by hits, ties in file order.
func TestKnowledgeRanking(t *testing.T) {
	def, diags := Load("k.yaml", []byte(minimal+`knowledge:
  a: {keywords: [open], answer: x}
  b: {keywords: [hours], answer: x}
  c: {keywords: [open, hours], answer: x}
`))
	if diags.HasErrors() {
		t.Fatalf("diagnostics:\n%v", diags)
	}
	var names []string
	for _, tp := range (&turnCtx{msg: "open hours"}).knowledge(def) {
		names = append(names, tp.name)
	}
	if want := []string{"c", "a", "b"}; !slices.Equal(names, want) {
		t.Errorf("topics = %v, want %v", names, want)
	}
}

// Texts are joined with one space; a node whose say renders empty adds
// none, and a reference may have blanks inside its braces.
func TestSaidTextsJoin(t *testing.T) {
	src := `id: join
start: A
nodes:
  A: {say: a, goto: B}
  B: {say: "${state.none}", goto: C}
  C: {say: "b ${ conv.id }"}
`
	def := mustLoad(t, "join.yaml", src)
	if got := def.NewSession(SessionOptions{ConversationID: "c1"}).Start().Response; got != "a b c1" {
		t.Errorf("response = %q, want %q", got, "a b c1")
	}
}

// A value that is exactly one reference keeps its type; random.code
// defaults to 6 characters; a session without a variant has an empty
// variant id even when the agent has variants.
func TestTemplateValues(t *testing.T) {
	src := `id: tv
start: A
variants: [{id: v1, name: One}]
nodes:
  A:
    set:
      obj: {k: "1"}
    goto: B
  B:
    set:
      copy: "${state.obj}"
    say: "${random.code} [${conv.variant_id}${kb.answer}] ${conv.integration_attributes.n} ${conv.integration_attributes.l} ${now}"
`
	def := mustLoad(t, "tv.yaml", src)
	clock := time.Date(2026, 5, 6, 9, 8, 9, 0, time.FixedZone("CEST", 2*3600))
	g := def.NewSession(SessionOptions{
		IntegrationAttributes: map[string]any{"n": 1e21, "l": []string{"a", "b"}},
		Now:                   func() time.Time { return clock },
	}).Start()
	if !regexp.MustCompile(`^[A-Z0-9]{6} \[\] 1000000000000000000000 a, b 2026-05-06T07:08:09Z$`).MatchString(g.Response) {
		t.Errorf("response = %q, want six code characters, no variant, no answer, plain numbers, a joined list and UTC", g.Response)
	}
	if got, want := g.Metadata.State["copy"], map[string]any{"k": "1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("copy = %#v, want the map %#v", got, want)
	}
}

// A delayed reply answers the message it was delayed on: what the user
// says meanwhile is not interpreted, not even by the node's retrieve and
// conditions (docs/agent-definition.md, "Delayed responses").
func TestDelayedReplyAnswersTheEarlierMessage(t *testing.T) {
	def := mustLoad(t, "late.yaml", `id: late
start: A
routes:
  - if: {knowledge: true}
    goto: Answer
knowledge:
  hours: {keywords: [open], answer: We open at noon.}
nodes:
  A: {say: hi}
  Answer:
    delay: let me check
    retrieve: true
    say: "${kb.answer}"
    then:
      - if: {match: thanks}
        goto: A
`)
	for _, meanwhile := range []string{"ok", "thanks", ""} {
		s := def.NewSession(SessionOptions{})
		s.Start()
		s.Turn("when are you open", nil)
		r := s.Turn(meanwhile, nil)
		if r.Response != "We open at noon." || r.Metadata.CitedTopic != "hours" || len(r.Intents) != 0 {
			t.Errorf("%q meanwhile: reply %q citing %q, intents %v; want the answer to the earlier question", meanwhile, r.Response, r.Metadata.CitedTopic, r.Intents)
		}
	}
}

// billerYAML is an agent whose answer to "my bill" is split: "Let me
// check." then, after a pause, the bill (pauseMs on the node that reads
// it). A pause before the turn's first words, or on a node that says
// nothing (or words that render empty), splits nothing, and words
// without a pause join the message before them.
const billerYAML = `id: biller
name: Biller
start: Hello
intents:
  bill: {keywords: [bill]}
  hours: {keywords: [hours]}
  blank: {keywords: [blank]}
routes:
  - {intent: bill, goto: Check}
  - {intent: hours, goto: Quiet}
  - {intent: blank, goto: One}
nodes:
  Hello: {say: "Hi.", pauseMs: 500}
  Check: {say: "Let me check.", goto: Lookup}
  Lookup: {pauseMs: 300, goto: Bill}
  Bill: {say: "Your bill is £84.20.", pauseMs: 800, goto: Anything}
  Anything: {say: "Anything else?", pauseMs: 200}
  Quiet: {pauseMs: 900, say: "We open at 9.", goto: Plain}
  Plain: {say: "Closed Sundays."}
  One: {say: "One.", goto: Blank}
  Blank: {pauseMs: 100, say: "${state.none}"}
`

// TestSplitAnswer: a node with pauseMs that speaks after the turn has
// spoken starts a message of its own, with its pause before it; the
// reply's Response still joins them all (debug chat's answer).
func TestSplitAnswer(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, "biller.yaml", billerYAML).NewSession(SessionOptions{})
	if g := s.Start(); g.Parts != nil || g.Response != "Hi." {
		t.Errorf("greeting: %q, parts %+v", g.Response, g.Parts)
	}
	r := s.Turn("my bill", nil)
	if r.Response != "Let me check. Your bill is £84.20. Anything else?" {
		t.Errorf("response %q", r.Response)
	}
	want := []Part{{Text: "Let me check."}, {Text: "Your bill is £84.20.", Pause: 800 * time.Millisecond}, {Text: "Anything else?", Pause: 200 * time.Millisecond}}
	if !slices.Equal(r.Parts, want) {
		t.Errorf("parts %+v, want %+v", r.Parts, want)
	}
	if r := s.Turn("hours", nil); r.Parts != nil || r.Response != "We open at 9. Closed Sundays." {
		t.Errorf("a pause before the first words, words without one after them: %q, parts %+v", r.Response, r.Parts)
	}
	if r := s.Turn("blank", nil); r.Parts != nil || r.Response != "One." {
		t.Errorf("a pause before words that render empty: %q, parts %+v", r.Response, r.Parts)
	}
}
