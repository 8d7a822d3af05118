package yamlerr

import "testing"

// TestFirstFailingLineGivesUp: where no leading part of the file fails
// the way the whole does, the parser's line stands.
func TestFirstFailingLineGivesUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		lines []string
		from  int
	}{
		{"valid file", []string{"a: 1\n", "b: 2\n"}, 1},
		{"line beyond the file", []string{"a: [\n"}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if n := firstFailingLine(tc.lines, tc.from); n != 0 {
				t.Errorf("firstFailingLine = %d, want 0", n)
			}
		})
	}
}
