package agent

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// coin has one weighted move (flip) and one weighted reply (ask).
const coin = `id: coin
start: Hello
intents:
  flip: {keywords: [flip]}
  ask: {keywords: [ask]}
  roll: {keywords: [roll]}
routes:
  - intent: flip
    goto:
      - {node: Heads, weight: 3}
      - {node: Tails, weight: 1}
  - intent: ask
    goto: Answer
  - intent: roll
    goto: Die
nodes:
  Hello: {say: hi}
  Heads: {say: heads}
  Tails: {say: tails}
  Answer:
    say:
      - {text: right, weight: 0.9}
      - {text: wrong, weight: 0.1}
  Die:
    say: [one, two, three]
`

func loadCoin(t testing.TB) *Definition {
	t.Helper()
	def, diags := Load("coin.yaml", []byte(coin))
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	return def
}

// coinSession is conversation i under seed: the simulator seeds each
// session's Rand from its seed and the conversation id the same way.
func coinSession(def *Definition, seed, i uint64) *Session {
	return def.NewSession(SessionOptions{ConversationID: "c", Rand: rand.New(rand.NewPCG(seed, i))})
}

func TestWeightedChoicesFollowTheirWeights(t *testing.T) {
	def := loadCoin(t)
	type testCase struct {
		say  string
		want map[string]float64
	}
	const n = 10000
	// At n = 10000 the standard deviation of a share is at most 0.005, so
	// 0.02 is four of them; the draws are fixed by the seed, so the test
	// cannot flake, and it fails when weights are ignored (0.5 for flip).
	const tolerance = 0.02
	run := func(t *testing.T, tc testCase) {
		counts := map[string]int{}
		for i := range uint64(n) {
			counts[coinSession(def, 1, i).Turn(tc.say, nil).Response]++
		}
		for reply, share := range tc.want {
			if got := float64(counts[reply]) / n; math.Abs(got-share) > tolerance {
				t.Errorf("%q: %q in %.3f of %d sessions, want %.3f ± %.2f (%v)", tc.say, reply, got, n, share, tolerance, counts)
			}
		}
		if len(counts) != len(tc.want) {
			t.Errorf("%q: replies %v, want only %v", tc.say, counts, tc.want)
		}
	}
	testCases := []testCase{
		{say: "flip", want: map[string]float64{"heads": 0.75, "tails": 0.25}},
		{say: "ask", want: map[string]float64{"right": 0.9, "wrong": 0.1}},
		{say: "roll", want: map[string]float64{"one": 1.0 / 3, "two": 1.0 / 3, "three": 1.0 / 3}},
	}
	for _, tc := range testCases {
		t.Run(tc.say, func(t *testing.T) { run(t, tc) })
	}
}

// A conversation's draws depend on its Rand alone: the same seed replays
// it exactly, another seed does not.
func TestWeightedChoicesReplayUnderTheSeed(t *testing.T) {
	def := loadCoin(t)
	transcript := func(seed, conv uint64) string {
		s := coinSession(def, seed, conv)
		var b strings.Builder
		for range 40 {
			b.WriteString(s.Turn("flip", nil).Response)
			b.WriteString(s.Turn("ask", nil).Response)
		}
		return b.String()
	}
	a := transcript(7, 3)
	if b := transcript(7, 3); a != b {
		t.Errorf("same seed, different conversation:\n%s\n%s", a, b)
	}
	if b := transcript(8, 3); a == b {
		t.Error("another seed replayed the same conversation")
	}
}

func TestWeightedGotoLoops(t *testing.T) {
	type testCase struct {
		name    string
		nodes   string
		wantErr string
	}
	run := func(t *testing.T, tc testCase) {
		_, diags := Load("loop.yaml", []byte("id: loop\nstart: A\nnodes:\n"+tc.nodes))
		switch {
		case tc.wantErr == "" && diags.HasErrors():
			t.Errorf("unexpected diagnostics:\n%v", diags)
		case tc.wantErr != "" && !strings.Contains(diags.Error(), tc.wantErr):
			t.Errorf("diagnostics %v, want %q", diags, tc.wantErr)
		}
	}
	testCases := []testCase{
		{
			// A stays with weight 1 and leaves with weight 1: the turn ends
			// with probability 1 (and maxHops bounds it).
			name:  "a way out",
			nodes: "  A:\n    goto:\n      - {node: A, weight: 1}\n      - {node: B, weight: 1}\n  B: {say: out}\n",
		},
		{
			name:    "every branch loops",
			nodes:   "  A:\n    goto:\n      - {node: B, weight: 1}\n      - {node: C, weight: 1}\n  B: {goto: A}\n  C: {goto: B}\n",
			wantErr: `node "A" starts an endless goto loop`,
		},
		{
			name:    "a branch into a loop",
			nodes:   "  A:\n    goto:\n      - {node: B, weight: 1}\n      - {node: B, weight: 2}\n  B: {goto: C}\n  C: {goto: B}\n",
			wantErr: `listed twice`,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestNodeLatencyAddsUp(t *testing.T) {
	def, diags := Load("slow.yaml", []byte(`id: slow
start: Hello
routes:
  - if: {match: '^go$'}
    goto: A
nodes:
  Hello: {say: hi, latencyMs: 20}
  A: {say: a, latencyMs: 100, goto: B}
  B: {say: b, latencyMs: 50}
`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := def.NewSession(SessionOptions{ConversationID: "c"})
	if got := s.Start().Latency; got != 20*time.Millisecond {
		t.Errorf("greeting latency %v, want 20ms", got)
	}
	if got := s.Turn("go", nil).Latency; got != 150*time.Millisecond {
		t.Errorf("turn latency %v, want 150ms (A and B)", got)
	}
	if got := s.Turn("nothing", nil).Latency; got != 0 {
		t.Errorf("fallback latency %v, want 0", got)
	}
}

func TestVersions(t *testing.T) {
	def := builtin(t, "restaurant")
	if got, want := def.Versions(), []string{"1.2", "1.1", "1.0"}; !slices.Equal(got, want) {
		t.Fatalf("Versions() = %v, want %v", got, want)
	}
	for env, want := range map[string]string{"sandbox": "1.2", "pre-release": "1.1", "live": "1.0"} {
		if got := def.Deployed(env); got != want {
			t.Errorf("Deployed(%s) = %q, want %q", env, got, want)
		}
	}
	if _, ok := def.AtVersion("9.9"); ok {
		t.Error("AtVersion(9.9) found a version")
	}
	// Each version answers with its own parts and the file's others.
	type testCase struct {
		version string
		say     string
		want    string // substring of the reply
		latency time.Duration
	}
	run := func(t *testing.T, tc testCase) {
		v, ok := def.AtVersion(tc.version)
		if !ok || v.Version != tc.version || v.ID != "restaurant" || v.Path != def.Path {
			t.Fatalf("AtVersion(%s) = %+v, %v", tc.version, v, ok)
		}
		if back, _ := v.AtVersion("1.2"); back != def {
			t.Error("a version does not reach its siblings")
		}
		r := v.NewSession(SessionOptions{ConversationID: "c"}).Turn(tc.say, nil)
		if !strings.Contains(r.Response, tc.want) || r.Latency != tc.latency {
			t.Errorf("%s: %q gave %q in %v, want %q in %v", tc.version, tc.say, r.Response, r.Latency, tc.want, tc.latency)
		}
	}
	const nuts, closing, ref, book = "I have a nut allergy", "when do you close?", "what's my reference?", "a table for 2 at 7pm"
	testCases := []testCase{
		{"1.2", nuts, "our kitchen is nut-free", 0},
		{"1.1", nuts, "and gluten-free pasta is available.", 0},
		{"1.0", nuts, "our kitchen is nut-free", 0},
		{"1.2", closing, "10pm", 0},
		{"1.1", closing, "10pm", 0},
		{"1.0", closing, "Sorry, I didn't quite get that", 0},
		{"1.2", ref, "Would you like to book a table?", 0},
		{"1.1", ref, "Shall I book a table for you?", 0},
		{"1.2", book, "All set!", 0},
		{"1.1", book, "All set!", 400 * time.Millisecond},
	}
	for _, tc := range testCases {
		t.Run(tc.version+" "+tc.say, func(t *testing.T) { run(t, tc) })
	}
}

func TestNoVersions(t *testing.T) {
	def, diags := Load("demo.yaml", []byte(minimal))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := def.Versions(); !slices.Equal(got, []string{DefaultVersion}) {
		t.Errorf("Versions() = %v", got)
	}
	if v, ok := def.AtVersion(DefaultVersion); !ok || v != def || def.Deployed("live") != DefaultVersion {
		t.Errorf("AtVersion(%s) = %v, %v; Deployed(live) = %q", DefaultVersion, v, ok, def.Deployed("live"))
	}
	if _, ok := def.AtVersion("2"); ok {
		t.Error("AtVersion(2) found a version the file does not have")
	}
}

// fixedSource returns the same bits on every draw and counts the draws.
type fixedSource struct {
	bits  uint64
	draws int
}

func (f *fixedSource) Uint64() uint64 { f.draws++; return f.bits }

// A draw on a boundary goes to the upper alternative, so each of two
// equal weights owns half of [0, 1); one alternative draws nothing.
func TestWeightedPickBoundaries(t *testing.T) {
	half := &fixedSource{bits: 1 << 52} // Float64 = 2^52 / 2^53
	if got := newWeights([]float64{1, 1}).pick(rand.New(half), 2); got != 1 {
		t.Errorf("pick at 0.5 = %d, want 1", got)
	}
	one := &fixedSource{}
	if got := weights(nil).pick(rand.New(one), 1); got != 0 || one.draws != 0 {
		t.Errorf("pick of one = %d after %d draws, want 0 after none", got, one.draws)
	}
}

// Huge weights are relative like any others.
func TestWeightsNearMaxFloat(t *testing.T) {
	got := newWeights([]float64{math.MaxFloat64, math.MaxFloat64})
	if want := (weights{0.5, 1}); !slices.Equal(got, want) {
		t.Errorf("cumulative weights = %v, want %v", got, want)
	}
}
