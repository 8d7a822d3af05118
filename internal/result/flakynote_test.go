package result

import "testing"

// TestFlakyNote: a flaky case says what its earlier attempts met, so
// that a retry past a platform error does not read as an agent that
// varies.
func TestFlakyNote(t *testing.T) {
	t.Parallel()
	failed := &Attempt{Status: Failed}
	errored := func(kind string, status int) *Attempt {
		return &Attempt{Status: Errored, Error: &Error{Kind: kind, Status: status}}
	}
	for _, tc := range []struct {
		before []*Attempt
		want   string
	}{
		{[]*Attempt{failed}, "passed on attempt 2 of 2 after a failed check"},
		{[]*Attempt{errored(KindHTTP, 500)}, "passed on attempt 2 of 2 after a platform error (500)"},
		{[]*Attempt{errored(KindHTTP, 0)}, "passed on attempt 2 of 2 after a platform error"},
		{[]*Attempt{errored(KindTimeout, 0), errored(KindTimeout, 0)}, "passed on attempt 3 of 3 after a timeout"},
		{[]*Attempt{failed, errored(KindNetwork, 0), failed}, "passed on attempt 4 of 4 after a failed check and a network error"},
	} {
		c := &Case{Status: Flaky}
		for i, a := range append(tc.before, &Attempt{Status: Passed}) {
			a := *a
			a.Number = i + 1
			c.Attempts = append(c.Attempts, &a)
		}
		if got := c.FlakyNote(); got != tc.want {
			t.Errorf("FlakyNote = %q, want %q", got, tc.want)
		}
	}
}
