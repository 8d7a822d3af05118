package scenario

import (
	"os"
	"slices"
	"testing"
)

func TestParseShard(t *testing.T) {
	t.Parallel()
	const notKN, outOfRange = " is not K/N, e.g. 2/4 for the second of four shards", ": want 1 <= K <= N, e.g. 2/4 for the second of four shards"
	for _, tc := range []struct {
		in   string
		want Shard
		// err is the whole message, "" for none: a K or an N that is
		// not a number is not K/N, whatever the other is.
		err string
	}{
		{in: "1/1", want: Shard{1, 1}},
		{in: "2/4", want: Shard{2, 4}},
		{in: " 3 / 3 ", want: Shard{3, 3}},
		{in: "0/3", err: `"0/3"` + outOfRange},
		{in: "4/3", err: `"4/3"` + outOfRange},
		{in: "1/0", err: `"1/0"` + outOfRange},
		{in: "-1/2", err: `"-1/2"` + outOfRange},
		{in: "2", err: `"2"` + notKN},
		{in: "a/b", err: `"a/b"` + notKN},
		{in: "a/2", err: `"a/2"` + notKN},
		{in: "1/b", err: `"1/b"` + notKN},
	} {
		got, err := ParseShard(tc.in)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != tc.err || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %q; want %v, %q", tc.in, got, msg, tc.want, tc.err)
		}
	}
	if s := (Shard{2, 4}).String(); s != "2/4" {
		t.Errorf("String() = %q", s)
	}
	if s := (Shard{}).String(); s != "" {
		t.Errorf("zero String() = %q", s)
	}
}

// names lists the scenarios of suites as file:line name.
func names(suites []*Suite) []string {
	var out []string
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			out = append(out, sc.Pos.String()+" "+sc.Name)
		}
	}
	return out
}

// The repository's own suites and examples (YAML, features, outlines):
// for N in 1..5 the shards partition the selection exactly, each within
// one scenario of the others, the same whatever order the files came in.
func TestShardsPartitionTheSelection(t *testing.T) {
	t.Parallel()
	suites, diags := Load(os.DirFS("../.."), []string{"suites", "examples", "examples-failing", "features"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	all := names(suites)
	if len(all) < 50 {
		t.Fatalf("only %d scenarios loaded", len(all))
	}
	reversed := slices.Clone(suites)
	slices.Reverse(reversed)
	// A nil suite is passed over, not the end of the list.
	reversed = slices.Insert(reversed, len(reversed)/2, nil)
	for n := 1; n <= 5; n++ {
		seen := map[string]int{}
		var sizes []int
		for k := 1; k <= n; k++ {
			sh := Shard{Index: k, Total: n}
			got := names(sh.Apply(suites))
			if other := names(sh.Apply(reversed)); !sameSet(got, other) {
				t.Errorf("shard %s depends on the order of the files", sh)
			}
			sizes = append(sizes, len(got))
			for _, name := range got {
				seen[name]++
			}
		}
		for _, name := range all {
			if seen[name] != 1 {
				t.Errorf("N=%d: %s is in %d shards", n, name, seen[name])
			}
		}
		if len(seen) != len(all) {
			t.Errorf("N=%d: shards hold %d scenarios, the selection %d", n, len(seen), len(all))
		}
		if slices.Max(sizes)-slices.Min(sizes) > 1 {
			t.Errorf("N=%d: shard sizes %v are not balanced within one", n, sizes)
		}
	}
	if got := (Shard{}).Apply(suites); len(names(got)) != len(all) {
		t.Errorf("the zero shard is not the whole selection")
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	suites, diags := Load(os.DirFS("../.."), []string{"suites"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	reversed := slices.Clone(suites)
	slices.Reverse(reversed)
	fp := Fingerprint(suites)
	if Fingerprint(reversed) != fp {
		t.Error("the fingerprint depends on the order of the files")
	}
	if Fingerprint(suites[1:]) == fp {
		t.Error("a smaller selection has the same fingerprint")
	}
	if Fingerprint((Shard{Index: 1, Total: 2}).Apply(suites)) == fp {
		t.Error("a shard has the fingerprint of the whole selection")
	}
}
