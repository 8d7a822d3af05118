package secret

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// skipKeys are keys of every kind of form: plain, with characters JSON
// and URLs escape, non-ASCII, and the shortest accepted.
var skipKeys = [][]string{
	{"sim-build-key-not-a-secret", "sim-runtime-key-not-a-secret"},
	{"short-key-12"},
	{`k&<ey>"quoted"-0123456`},
	{"clé-spéciale-ümlaut-ß"},
	{`back\slash.(group)[x]{2}^$|?*`},
	{"emoji-😀-key-0123456789", "eyJhbGci.PLANTED+key/with="},
}

// skipTexts are texts for find to scan: replies, the keys' forms planted
// in them at random, and random bytes around them.
func skipTexts(keys []string, rng *rand.Rand) []string {
	texts := []string{"", "a", string(benchReply)}
	for range 40 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			switch rng.IntN(6) {
			case 0:
				k := keys[rng.IntN(len(keys))]
				b.WriteString(encodeMixed(k, rng))
			case 1:
				k := keys[rng.IntN(len(keys))]
				forms := []string{hex.EncodeToString([]byte(k)), strings.ToUpper(hex.EncodeToString([]byte(k))),
					base64.StdEncoding.EncodeToString([]byte(k)), base64.URLEncoding.EncodeToString([]byte("x" + k))}
				b.WriteString(forms[rng.IntN(len(forms))])
			case 2:
				for range rng.IntN(40) {
					b.WriteByte(byte(rng.IntN(256)))
				}
			default:
				s := string(benchReply)
				i := rng.IntN(len(s))
				b.WriteString(s[i:min(len(s), i+rng.IntN(200))])
			}
		}
		texts = append(texts, b.String())
	}
	return texts
}

// TestFindSkipsNothing: find, which tests every minLen-1-th pair and
// skips the starts between, finds what trying every start finds, from
// every position.
func TestFindSkipsNothing(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, keys := range skipKeys {
		r := mustNew(t, keys...).current()
		if r.minLen < 3 {
			t.Errorf("%q: shortest match %d bytes: the scan cannot skip", keys, r.minLen)
		}
		for _, text := range skipTexts(keys, rng) {
			checkFindEverywhere(t, r, text)
		}
	}
}

func checkFind(t *testing.T, r *table, text string, from int) {
	t.Helper()
	s, e, ok := find(r, text, from)
	ws, we, wok := findIn(r, text, from, len(text))
	if s != ws || e != we || ok != wok {
		t.Fatalf("find(%q, %d) = %d, %d, %v; every start tried: %d, %d, %v", text, from, s, e, ok, ws, we, wok)
	}
	if bs, be, bok := find(r, []byte(text), from); bs != s || be != e || bok != ok {
		t.Fatalf("find of bytes(%q, %d) = %d, %d, %v; of the string: %d, %d, %v", text, from, bs, be, bok, s, e, ok)
	}
}

// checkFindEverywhere is checkFind from every position of text. Trying
// every start from a position finds the match at the first start, at or
// after it, that has one (findIn tries the starts in order): each start
// is tried once, from the end back, rather than the rest of the text
// from every position, which made the check quadratic in the text.
func checkFindEverywhere(t *testing.T, r *table, text string) {
	t.Helper()
	type found struct {
		s, e int
		ok   bool
	}
	wants := make([]found, len(text)+1)
	var next found // the first match at or after from
	for from := len(text); from >= 0; from-- {
		if s, e, ok := findIn(r, text, from, from+1); ok {
			next = found{s, e, true}
		}
		wants[from] = next
	}
	// The oracle is findIn's over the rest of the text, start by start.
	for _, from := range []int{0, len(text) / 2} {
		if s, e, ok := findIn(r, text, from, len(text)); (found{s, e, ok}) != wants[from] {
			t.Fatalf("findIn(%q, %d) over the rest of the text = %d, %d, %v; start by start: %+v", text, from, s, e, ok, wants[from])
		}
	}
	for from, w := range wants {
		s, e, ok := find(r, text, from)
		if (found{s, e, ok}) != w {
			t.Fatalf("find(%q, %d) = %d, %d, %v; every start tried: %d, %d, %v", text, from, s, e, ok, w.s, w.e, w.ok)
		}
		if bs, be, bok := find(r, []byte(text), from); bs != s || be != e || bok != ok {
			t.Fatalf("find of bytes(%q, %d) = %d, %d, %v; of the string: %d, %d, %v", text, from, bs, be, bok, s, e, ok)
		}
	}
}

// TestWithScansEveryStart: a redactor that adds a key (a session's
// token) tries every start, for its own forms and the keys it extends
// alike; one that adds none skips as the one it extends.
func TestWithScansEveryStart(t *testing.T) {
	t.Parallel()
	const longKey = "a-much-longer-key-than-the-shortest-0123456789"
	long := mustNew(t, longKey)
	for _, keys := range [][]string{{""}, {longKey}} {
		same, err := long.With(keys...)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := same.current().minLen, long.current().minLen; got != want || got < 3 {
			t.Errorf("With %q: minLen %d, want %d", keys, got, want)
		}
	}
	short, err := long.With("short-key-12")
	if err != nil {
		t.Fatal(err)
	}
	if got := short.current().minLen; got != 0 {
		t.Errorf("With a key: minLen %d, want 0 (every start tried)", got)
	}
	text := "a reply quoting short-key-12, short%2Dkey%2D12 and a-much-longer-key-than-the-shortest-0123456789"
	checkFindEverywhere(t, short.current(), text)
	if got := short.String(text); strings.Contains(got, "short") || strings.Contains(got, "longer") {
		t.Errorf("not redacted: %q", got)
	}
}

// FuzzFind: for any keys, text and start, find agrees with trying every
// start.
func FuzzFind(f *testing.F) {
	f.Add("sim-build-key-not-a-secret", string(benchReply), "sim-build-key-not-a-secret", uint16(0))
	f.Add("short-key-12", "xx short%2dkey-12 yy", "", uint16(3))
	f.Add(`k&<ey>"quoted"-0123456`, `{"a":"k&amp;&lt;ey&gt;\"quoted\"-0123456"}`, "clé-spéciale-ümlaut-ß", uint16(1))
	f.Fuzz(func(t *testing.T, key, text, key2 string, at uint16) {
		if CheckKey("key", key) != nil || (key2 != "" && CheckKey("key", key2) != nil) {
			return
		}
		r := mustNew(t, key, key2).current()
		checkFind(t, r, text, int(at)%(len(text)+1))
		planted := text[:len(text)/2] + encodeMixed(key, rand.New(rand.NewPCG(uint64(at), 1))) + text[len(text)/2:]
		checkFind(t, r, planted, int(at)%(len(planted)+1))
		checkFind(t, r, planted, 0)
	})
}

// TestSkipNeedsEveryPair: a pattern with a unit that can span nothing
// (no form the package writes has one; a guard for one that would) joins
// the bytes around that unit in a match, a pair inner does not hold, so
// the scan tries every start rather than skip past the match.
func TestSkipNeedsEveryPair(t *testing.T) {
	t.Parallel()
	r := &table{inner: new([1 << 16 / 64]uint64)}
	u := func(forms ...string) unit {
		var out unit
		for _, f := range forms {
			out = append(out, alt{s: f})
		}
		return out
	}
	r.add(pattern{units: []unit{u("ab"), u("cd"), u("", "x"), u("ef"), u("gh")}}, map[unitID]*unitEdges{})
	if r.minLen != 0 {
		t.Errorf("minLen %d, want 0 (every start tried)", r.minLen)
	}
	text := "0123456789abcdefgh"
	if s, e, ok := find(r, text, 0); !ok || text[s:e] != "abcdefgh" {
		t.Errorf("find(%q) = %d, %d, %v; want the match abcdefgh", text, s, e, ok)
	}
}

// TestDeriveSkips: a redactor of Derive's (a client's, which scans every
// reply) skips as New's does, for its own keys and its base's, and goes
// on skipping once its base learns a key, which it masks from then on.
func TestDeriveSkips(t *testing.T) {
	t.Parallel()
	const built, added, learnt = "sim-build-key-not-a-secret", "short-key-12", "whsec_learnt-7d2a9c41e0"
	base := mustNew(t, built)
	d, err := base.Derive(added)
	if err != nil {
		t.Fatal(err)
	}
	text := "a reply quoting " + built + ", short%2Dkey%2D12 and " + learnt
	check := func(when string, want string) {
		t.Helper()
		checkSkips(t, when, d, text, want)
	}
	check("derived", "a reply quoting "+Mask+", "+Mask+" and "+learnt)
	if err := base.Learn("the signing secret", learnt); err != nil {
		t.Fatal(err)
	}
	check("after its base learnt a key", "a reply quoting "+Mask+", "+Mask+" and "+Mask)
	if got := base.String(added); got != added {
		t.Errorf("the base masks the derived redactor's key: %q", got)
	}
	if nd, err := (*Redactor)(nil).Derive(added); err != nil || nd.String(added) != Mask || nd.current().minLen < 3 {
		t.Errorf("Derive of nil: %v", err)
	}
}

// checkSkips checks, at the moment when names, that r's scans skip, that
// they find in text from every start what trying every start finds, and
// that r redacts text to want.
func checkSkips(t *testing.T, when string, r *Redactor, text, want string) {
	t.Helper()
	tb := r.current()
	if tb.minLen < 3 {
		t.Errorf("%s: shortest match %d bytes: the scan cannot skip", when, tb.minLen)
	}
	checkFindEverywhere(t, tb, text)
	if got := r.String(text); got != want {
		t.Errorf("%s: %q, want %q", when, got, want)
	}
}

// TestDeriveOfItsBaseKeys: a redactor derived with keys its base has
// already (a client's, from its command's) takes a copy of its base's
// table instead of building it again; it still masks and skips as a
// whole table does, keeps its own table to follow its base's learning
// with, and learns apart from its base. A base that is not whole (one of
// With's, which tries every start) is built again, whole.
func TestDeriveOfItsBaseKeys(t *testing.T) {
	t.Parallel()
	const built, runtime, learnt, own = "sim-build-key-not-a-secret", "sim-runtime-key-not-a-secret", "whsec_learnt-7d2a9c41e0", "own-learnt-key-0123"
	base := mustNew(t, built, runtime)
	d, err := base.Derive(runtime, "", built)
	if err != nil {
		t.Fatal(err)
	}
	if d.current() == base.current() || d.current().from != base.current() {
		t.Fatalf("the derived redactor scans with its base's own table (from %p, base's %p)", d.current().from, base.current())
	}
	text := "a reply quoting " + built + ", " + strings.ReplaceAll(runtime, "-", "%2D") + ", " + learnt + " and " + own
	check := func(when string, r *Redactor, want string) {
		t.Helper()
		checkSkips(t, when, r, text, want)
	}
	check("derived", d, "a reply quoting "+Mask+", "+Mask+", "+learnt+" and "+own)
	if err := base.Learn("the signing secret", learnt); err != nil {
		t.Fatal(err)
	}
	check("after its base learnt a key", d, "a reply quoting "+Mask+", "+Mask+", "+Mask+" and "+own)
	if err := d.Learn("a key of its own", own); err != nil {
		t.Fatal(err)
	}
	check("after it learnt a key", d, "a reply quoting "+Mask+", "+Mask+", "+Mask+" and "+Mask)
	check("its base", base, "a reply quoting "+Mask+", "+Mask+", "+Mask+" and "+own)

	partial, err := mustNew(t, built).With(runtime)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := partial.Derive(built)
	if err != nil {
		t.Fatal(err)
	}
	check("derived from a With redactor", pd, "a reply quoting "+Mask+", "+Mask+", "+learnt+" and "+own)
}

// TestSharedUnitsBuildTheSameTable: the units every key shares (the
// ASCII characters, and their base64 forms at a line break) bring their
// pairs and edges worked out once (sharedInfo); a table built with them
// is the table built from each unit's forms, pair for pair.
func TestSharedUnitsBuildTheSameTable(t *testing.T) {
	t.Parallel()
	for _, keys := range append(skipKeys, testKeys) {
		shared, err := newTable(keys)
		if err != nil {
			t.Fatal(err)
		}
		// The same patterns, every unit a copy of its own: none is
		// shared, so each is worked out from its forms.
		own := &table{inner: new([1 << 16 / 64]uint64), whole: true}
		memo := map[unitID]*unitEdges{}
		sharedUnits := 0
		for _, k := range keys {
			own.keys = append(own.keys, k)
			for _, p := range keyPatterns(k) {
				units := make([]unit, len(p.units))
				for i, u := range p.units {
					if sharedInfo(u) != nil {
						sharedUnits++
					}
					units[i] = slices.Clone(u)
					if sharedInfo(units[i]) != nil {
						t.Fatalf("%q: a copy of a unit taken for a shared one", keys)
					}
				}
				p.units = units
				own.add(p, memo)
			}
		}
		if sharedUnits == 0 {
			t.Fatalf("%q: no unit of the keys' patterns is shared: the test compares nothing", keys)
		}
		if *shared.inner != *own.inner {
			t.Errorf("%q: inner differs from the one built from every unit's forms", keys)
		}
		if shared.pairs != own.pairs || shared.minLen != own.minLen || shared.reach != own.reach || shared.escBreaks != own.escBreaks {
			t.Errorf("%q: pairs equal %t; minLen %d, reach %d, escBreaks %t; from every unit's forms: %d, %d, %t",
				keys, shared.pairs == own.pairs, shared.minLen, shared.reach, shared.escBreaks, own.minLen, own.reach, own.escBreaks)
		}
		// A table extend builds, without inner, takes its reach from the
		// units' spans rather than their edges: the same.
		ext, err := (*table)(nil).extend(keys)
		if err != nil {
			t.Fatal(err)
		}
		if ext.reach != shared.reach || ext.escBreaks != shared.escBreaks || ext.pairs != shared.pairs {
			t.Errorf("%q: extended from none, reach %d, escBreaks %t (pairs equal %t); built whole: %d, %t",
				keys, ext.reach, ext.escBreaks, ext.pairs == shared.pairs, shared.reach, shared.escBreaks)
		}
	}
}
