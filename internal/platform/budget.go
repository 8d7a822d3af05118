package platform

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// budget bounds the response bytes a client holds while reading bodies,
// across all its calls: without it, memory grows with the calls in flight
// times the body limit (hundreds of parallel turns each reading a hostile
// 20 MB reply). A call acquires budget as its body arrives, by the bytes it
// reads, and releases it when the body has been decoded.
//
// Readers must never wait for budget while holding some that others need,
// or a full budget of half-read bodies would wait for ever. So every body
// starts with at most one chunk, and to hold more a reader first takes a
// place in the lanes, weighted by the most its body may hold (its length
// when announced, else its limit). The budget keeps a chunk for every
// possible reader besides the lanes' capacity, so whoever waits for budget
// can always get it once the others that are not waiting are done: a
// reader outside the lanes needs at most a chunk, and the lane holders'
// needs fit in the lanes.
type budget struct {
	sem  *semaphore.Weighted
	size int64
	// lanes admits growing readers by the bytes they may come to hold.
	lanes *semaphore.Weighted
	// held and peak count what is acquired, for tests and benchmarks.
	held, peak atomic.Int64
}

// budgetChunk is the first reservation of a body of unknown length: most
// replies fit in it whole.
const budgetChunk = 64 << 10

// newBudget returns a budget of size bytes for at most readers calls at
// once, raised so that a chunk for each of them plus one body of maxBody
// bytes always fit. What is left over the chunks is the lanes' capacity.
func newBudget(size int64, readers int, maxBody int64) *budget {
	reserve := int64(readers) * budgetChunk
	size = max(size, reserve+maxBody)
	return &budget{sem: semaphore.NewWeighted(size), size: size, lanes: semaphore.NewWeighted(size - reserve)}
}

func (b *budget) acquire(ctx context.Context, n int64) error {
	if err := b.sem.Acquire(ctx, n); err != nil {
		return err
	}
	held := b.held.Add(n)
	for {
		p := b.peak.Load()
		if held <= p || b.peak.CompareAndSwap(p, held) {
			return nil
		}
	}
}

func (b *budget) release(n int64) {
	if n > 0 {
		b.held.Add(-n)
		b.sem.Release(n)
	}
}

// errTooLarge says a body went past its limit.
var errTooLarge = errors.New("body over the limit")

// read reads body into buf, at most limit bytes, acquiring budget as it
// goes. length is the announced Content-Length (-1 when unknown, as for a
// body the transport decompresses). It returns the budget held, which the
// caller releases once done with buf, on error too.
func (b *budget) read(ctx context.Context, buf *bytes.Buffer, body io.Reader, length, limit int64) (held int64, err error) {
	want := min(int64(budgetChunk), limit+1)
	if length >= 0 {
		// The transport ends a body at its Content-Length; asking for
		// one byte more reads the end of the body too, which lets the
		// transport reuse the connection.
		want = min(want, length+1)
	}
	if err := b.acquire(ctx, want); err != nil {
		return 0, err
	}
	held = want
	buf.Grow(int(min(want, limit)))
	var lane int64
	defer func() { b.lanes.Release(lane) }()
	for {
		err := readN(buf, body, held-int64(buf.Len()))
		eof := errors.Is(err, io.EOF)
		switch {
		case err != nil && !eof:
			return held, err
		case int64(buf.Len()) > limit:
			return held, errTooLarge
		case eof:
			return held, nil
		}
		// More than a chunk: take a lane for the most this body may
		// hold, then grow, all at once when the length is known, else by
		// doubling.
		if lane == 0 {
			lane = limit + 1
			if length >= 0 {
				lane = min(length+1, lane)
			}
			if err := b.lanes.Acquire(ctx, lane); err != nil {
				lane = 0
				return held, err
			}
		}
		more := lane - held
		if length < 0 {
			more = min(held, more)
		}
		if err := b.acquire(ctx, more); err != nil {
			return held, err
		}
		held += more
		buf.Grow(int(more))
	}
}

// readN appends n bytes of r to buf, with io.CopyN(buf, r, n)'s error:
// nil once n bytes are in, whatever error came with the last of them,
// else io.EOF when r ends first, else r's error. It reads into buf's own
// free space (read grows buf to hold n beforehand), where io.CopyN
// allocates a LimitedReader on every call.
func readN(buf *bytes.Buffer, r io.Reader, n int64) error {
	for n > 0 {
		free := buf.AvailableBuffer()
		if cap(free) == 0 {
			buf.Grow(int(min(n, bytes.MinRead)))
			continue
		}
		free = free[:min(int64(cap(free)), n)]
		m, err := r.Read(free)
		buf.Write(free[:m])
		if n -= int64(m); n > 0 && err != nil {
			return err
		}
	}
	return nil
}
