package platform

import "testing"

// TestKeeperSharesRepeatedRequests: a small request body sent again is
// kept once and its copy shared, as suites send the same turns over and
// over; a different body gets a copy of its own. (The package's other
// tests met the shared copy only when their calls happened to interleave.)
func TestKeeperSharesRepeatedRequests(t *testing.T) {
	t.Parallel()
	var k keeper
	const hello, bye = `{"text":"hello"}`, `{"text":"bye"}`
	a, b := k.request([]byte(hello)), k.request([]byte(hello))
	if string(a) != hello || string(b) != hello || &a[0] != &b[0] {
		t.Errorf("the same body kept twice: %q at %p and %q at %p, want one shared copy", a, &a[0], b, &b[0])
	}
	if c := k.request([]byte(bye)); string(c) != bye || &c[0] == &a[0] {
		t.Errorf("another body kept as %q at %p, the first at %p", c, &c[0], &a[0])
	}
}
