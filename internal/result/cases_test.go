package result

import (
	"slices"
	"testing"
)

func TestCasesSkipNilAndKeepOrder(t *testing.T) {
	t.Parallel()
	a, b, c, alert := &Case{Name: "a"}, &Case{Name: "b"}, &Case{Name: "c"}, &Case{Name: "alert gate"}
	f1 := &File{Path: "one.yaml", Cases: []*Case{a, nil, b}}
	f2 := &File{Path: "two.feature", Cases: []*Case{c}}
	r := &Result{Files: []*File{f1, nil, {Path: "empty.yaml"}, f2}, Checks: []*Case{nil, alert}}

	type pair struct {
		file string
		name string
	}
	walk := func(seq func(func(*File, *Case) bool), stopAfter int) []pair {
		var got []pair
		for f, c := range seq {
			p := pair{name: c.Name}
			if f != nil {
				p.file = f.Path
			}
			got = append(got, p)
			if len(got) == stopAfter {
				break
			}
		}
		return got
	}
	for _, tc := range []struct {
		name      string
		seq       func(func(*File, *Case) bool)
		stopAfter int
		want      []pair
	}{
		{"scenarios", r.Scenarios(), 0, []pair{{"one.yaml", "a"}, {"one.yaml", "b"}, {"two.feature", "c"}}},
		{"cases end with the checks, without a file", r.Cases(), 0, []pair{{"one.yaml", "a"}, {"one.yaml", "b"}, {"two.feature", "c"}, {"", "alert gate"}}},
		{"break in the files", r.Cases(), 2, []pair{{"one.yaml", "a"}, {"one.yaml", "b"}}},
		{"break at the first check", r.Cases(), 4, []pair{{"one.yaml", "a"}, {"one.yaml", "b"}, {"two.feature", "c"}, {"", "alert gate"}}},
		{"empty result", (&Result{}).Cases(), 0, nil},
	} {
		if got := walk(tc.seq, tc.stopAfter); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
