package platform

import (
	"bytes"
	"context"
	"errors"
	"testing"
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
