package platform

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// endless is a body that never ends, counting the bytes read from it.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.read += int64(len(p))
	return len(p), nil
}

// TestBudgetReadsNoMoreThanItHolds: a body over its limit is read one
// byte past the limit and no further, and every byte read is held in the
// budget, announced length or not: a hostile reply that never ends costs
// its limit, not what the reader took in before looking.
func TestBudgetReadsNoMoreThanItHolds(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	for _, length := range []int64{-1, 3 * limit} {
		b := newBudget(0, 1, limit+1)
		var buf bytes.Buffer
		body := &endless{}
		held, err := b.read(context.Background(), &buf, body, length, limit)
		if !errors.Is(err, errTooLarge) || body.read != limit+1 || held != limit+1 || int64(buf.Len()) != limit+1 {
			t.Errorf("length %d: err = %v after reading %d bytes, holding %d for %d; want the limit's error after %d, all held",
				length, err, body.read, held, buf.Len(), limit+1)
		}
		b.release(held)
	}
}

// TestBudgetKeepsAChunkForEveryReader: with every reader holding its
// first chunk, the budget still holds what the lanes may give out, and
// the lanes give out no more: a reader granted a lane can grow to its
// whole body, whatever the readers outside the lanes hold. Without the
// chunks kept, two readers of large bodies waited for ever, one for the
// budget the other's chunk held, the other for the lane.
func TestBudgetKeepsAChunkForEveryReader(t *testing.T) {
	t.Parallel()
	const readers, maxBody = 4, 1 << 20
	for _, size := range []int64{0, 8 << 20} {
		b := newBudget(size, readers, maxBody)
		for range readers {
			if err := b.acquire(context.Background(), budgetChunk); err != nil {
				t.Fatal(err)
			}
		}
		free := b.size - readers*budgetChunk
		if free < maxBody || !b.sem.TryAcquire(free) {
			t.Errorf("size %d: %d bytes left besides the readers' chunks, not all of them free; want at least %d", size, free, maxBody)
		}
		if b.lanes.TryAcquire(free + 1) {
			t.Errorf("size %d: the lanes gave out more than the %d bytes the budget has for them", size, free)
		}
	}
}

// cancelling is a body that cancels its read's context once at bytes of
// it were read: a reader that stopped short of its end and asked the
// budget for more fails then instead of spinning.
type cancelling struct {
	r        *bytes.Reader
	at, read int
	cancel   context.CancelFunc
}

func (c *cancelling) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.read += n; c.read >= c.at {
		c.cancel()
	}
	return n, err
}

// TestBudgetReadsAnAnnouncedBodyWhole: a body of announced length past a
// chunk and within its limit is read whole, holding its length and the
// byte that finds its end. A lane one byte short (length-1 for length+1)
// stopped a byte before the end and asked for nothing more, for ever.
func TestBudgetReadsAnAnnouncedBodyWhole(t *testing.T) {
	t.Parallel()
	const length, limit = 3 * budgetChunk, 1 << 20
	b := newBudget(0, 1, limit+1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	body := &cancelling{r: bytes.NewReader(make([]byte, length)), at: length - 1, cancel: cancel}
	held, err := b.read(ctx, &buf, body, length, limit)
	if err != nil || buf.Len() != length || held != length+1 {
		t.Errorf("err = %v, read %d bytes holding %d; want %d holding %d", err, buf.Len(), held, length, length+1)
	}
	b.release(held)
}

// TestBudgetHoldsWhatASmallBodyNeeds: a body shorter than a chunk holds
// no more of the budget than it may need, and takes no lane: its
// announced length and the byte that finds its end, or, unannounced, its
// limit and that byte. A whole chunk held for every small reply would
// leave room for a sixty-fourth of the replies in flight the budget is
// sized for.
func TestBudgetHoldsWhatASmallBodyNeeds(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name          string
		body          int
		length, limit int64
		held          int64
	}
	run := func(t *testing.T, tc testCase) {
		b := newBudget(0, 1, tc.limit+1)
		// Nor does it need a lane: with every lane taken and its context
		// ended once the body is read, it still ends.
		if !b.lanes.TryAcquire(b.size - budgetChunk) {
			t.Fatal("the lanes are not free")
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var buf bytes.Buffer
		body := &cancelling{r: bytes.NewReader(make([]byte, tc.body)), at: tc.body, cancel: cancel}
		held, err := b.read(ctx, &buf, body, tc.length, tc.limit)
		if err != nil || buf.Len() != tc.body || held != tc.held || b.held.Load() != tc.held {
			t.Errorf("err = %v, read %d bytes holding %d (budget %d); want %d holding %d", err, buf.Len(), held, b.held.Load(), tc.body, tc.held)
		}
		b.release(held)
		if b.held.Load() != 0 {
			t.Errorf("%d bytes still held after the release", b.held.Load())
		}
	}
	for _, tc := range []testCase{
		{name: "announced", body: 10, length: 10, limit: 1 << 20, held: 11},
		{name: "announced empty", body: 0, length: 0, limit: 1 << 20, held: 1},
		{name: "unannounced, small limit", body: 50, length: -1, limit: 100, held: 101},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestBudgetLaneRefusedIsNotGivenBack: a read whose context ends while it
// waits for a lane returns the context's error holding its first chunk,
// and gives back no lane it did not get: the lanes others hold stay
// theirs, and once they give them back every lane is free again, no more.
// A read that got its lane gives it back when done.
func TestBudgetLaneRefusedIsNotGivenBack(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	b := newBudget(0, 1, limit+1)
	lanes := b.size - budgetChunk
	if !b.lanes.TryAcquire(lanes) {
		t.Fatal("the lanes are not free")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	body := &cancelling{r: bytes.NewReader(make([]byte, 2*budgetChunk)), at: budgetChunk, cancel: cancel}
	held, err := b.read(ctx, &buf, body, -1, limit)
	if !errors.Is(err, context.Canceled) || held != budgetChunk {
		t.Errorf("err = %v holding %d, want the context's error holding a chunk (%d)", err, held, budgetChunk)
	}
	b.release(held)
	if b.lanes.TryAcquire(1) {
		t.Error("a lane was given back that the read never got")
	}
	b.lanes.Release(lanes)
	if !b.lanes.TryAcquire(lanes) || b.lanes.TryAcquire(1) {
		t.Errorf("the lanes hold other than their %d bytes once all are given back", lanes)
	}
	b.lanes.Release(lanes)
	// A read that got its lane gives it back when done. Of unknown
	// length, it grew by doubling: 64 KiB, 128, then 256 to find the
	// end, not its whole lane at once.
	buf.Reset()
	held, err = b.read(context.Background(), &buf, bytes.NewReader(make([]byte, 2*budgetChunk)), -1, limit)
	if err != nil || buf.Len() != 2*budgetChunk || held != 4*budgetChunk {
		t.Fatalf("err = %v after %d bytes holding %d, want %d", err, buf.Len(), held, 4*budgetChunk)
	}
	b.release(held)
	if !b.lanes.TryAcquire(lanes) {
		t.Error("the lane of a finished read was not given back")
	}
}

// TestBudgetRefusedHoldsOnlyWhatItGot: a read the budget refuses (its
// context ended while the budget is taken) holds what it got and no more,
// and says why: nothing when its first reservation is refused, what it
// had grown to when its next growth is. What the read reports held is what the
// budget counts, so the caller's release gives back exactly that.
func TestBudgetRefusedHoldsOnlyWhatItGot(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	for _, tc := range []struct {
		name string
		free int64 // of the budget, before the read
		held int64
	}{
		{name: "first reservation refused", free: 0, held: 0},
		// Growing by doubling: the first chunk, then a second with the
		// lane, and the third refused.
		{name: "growth refused", free: 2 * budgetChunk, held: 2 * budgetChunk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBudget(0, 1, limit+1)
			taken := b.size - tc.free
			if !b.sem.TryAcquire(taken) {
				t.Fatal("the budget is not free")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.free == 0 {
				cancel()
			}
			var buf bytes.Buffer
			body := &cancelling{r: bytes.NewReader(make([]byte, 4*budgetChunk)), at: int(tc.held), cancel: cancel}
			held, err := b.read(ctx, &buf, body, -1, limit)
			if !errors.Is(err, context.Canceled) || held != tc.held || b.held.Load() != tc.held {
				t.Errorf("err = %v holding %d (budget counts %d), want the context's error holding %d", err, held, b.held.Load(), tc.held)
			}
			b.release(held)
			b.sem.Release(taken)
			if !b.sem.TryAcquire(b.size) {
				t.Error("the budget is not all free once everything is given back")
			}
		})
	}
}

// TestReadNIsCopyN: readN appends what io.CopyN would and returns its
// error, for bodies that end early, end with their last bytes, come a
// byte at a time or fail part way, into buffers with and without room.
func TestReadNIsCopyN(t *testing.T) {
	t.Parallel()
	data := []byte("0123456789abcdef")
	type testCase struct {
		name string
		body func() io.Reader
		n    int64
		grow int
	}
	run := func(t *testing.T, tc testCase) {
		var want, got bytes.Buffer
		want.WriteString("kept")
		got.WriteString("kept")
		got.Grow(tc.grow)
		_, wantErr := io.CopyN(&want, tc.body(), tc.n)
		gotErr := readN(&got, tc.body(), tc.n)
		if got.String() != want.String() || gotErr != wantErr {
			t.Errorf("readN: %q, %v; io.CopyN: %q, %v", got.String(), gotErr, want.String(), wantErr)
		}
	}
	for _, tc := range []testCase{
		{name: "part of the body", body: func() io.Reader { return bytes.NewReader(data) }, n: 10, grow: 10},
		{name: "the whole body", body: func() io.Reader { return bytes.NewReader(data) }, n: 16, grow: 16},
		{name: "one more than the body", body: func() io.Reader { return bytes.NewReader(data) }, n: 17, grow: 17},
		{name: "no room made", body: func() io.Reader { return bytes.NewReader(data) }, n: 17},
		{name: "end with the last bytes", body: func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) }, n: 16, grow: 16},
		{name: "end with the last bytes, asked more", body: func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) }, n: 20, grow: 4},
		{name: "a byte at a time", body: func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) }, n: 12, grow: 12},
		{name: "fails part way", body: func() io.Reader { return iotest.TimeoutReader(iotest.HalfReader(bytes.NewReader(data))) }, n: 16, grow: 16},
		{name: "fails after the bytes asked", body: func() io.Reader { return iotest.TimeoutReader(iotest.HalfReader(bytes.NewReader(data))) }, n: 8, grow: 8},
		{name: "fails with the last bytes", body: func() io.Reader {
			return io.MultiReader(bytes.NewReader(data[:4]), iotest.ErrReader(errors.New("reset")))
		}, n: 4, grow: 4},
		{name: "nothing asked", body: func() io.Reader { return iotest.ErrReader(errors.New("reset")) }, n: 0},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
