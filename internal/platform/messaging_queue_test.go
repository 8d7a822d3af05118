package platform

import (
	"bytes"
	"testing"
)

// TestFrameQueueBoundsBytes: a socket's reader queues frames no turn has
// taken only up to the limit in bytes (one frame always goes), and goes
// on once one is taken, in order. Before, it queued 64 frames whatever
// their size: a platform pushing 16 MiB frames between turns had the
// client hold a gigabyte a session.
func TestFrameQueueBoundsBytes(t *testing.T) {
	t.Parallel()
	frame := func(b byte, n int) inbound { return inbound{data: bytes.Repeat([]byte{b}, n)} }
	q := newFrameQueue(4 << 10)
	quit := make(chan struct{})
	for _, in := range []inbound{frame('a', 3<<10), frame('b', 1<<10)} {
		if !q.put(in, quit) {
			t.Fatal("put refused with room in the queue")
		}
	}
	if q.reserve(1) {
		t.Fatal("room for a byte past the limit")
	}
	// The reader holds the next frame back until one is taken.
	put := make(chan bool)
	go func() { put <- q.put(frame('c', 2<<10), quit) }()
	if in := q.took(<-q.ch); in.data[0] != 'a' {
		t.Fatalf("took %q first", in.data[:1])
	}
	if !<-put {
		t.Fatal("the held frame was refused once there was room")
	}
	for _, want := range []byte{'b', 'c'} {
		if in := q.took(<-q.ch); in.data[0] != want {
			t.Fatalf("took %q, want %q", in.data[:1], want)
		}
	}
	// Empty, it takes a frame larger than the limit (the frame limit
	// bounds those), and a reader held back stops when the session
	// closes.
	if !q.put(frame('d', 8<<10), quit) {
		t.Fatal("an empty queue refused a large frame")
	}
	go func() { put <- q.put(frame('e', 1), quit) }()
	close(quit)
	if <-put {
		t.Fatal("a held frame went in after the session closed")
	}
}
