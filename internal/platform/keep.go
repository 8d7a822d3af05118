package platform

import "sync"

// keeper copies the bodies a run keeps until its reports are written
// (every reply of every transcript) into large shared chunks instead of an
// allocation each. A run of 100,000 scenarios keeps 200,000 replies among
// a far larger number of short-lived objects (requests, decoded metadata,
// the finished scenarios' programs); allocated one by one, they end up
// scattered over memory pages that the rest of the garbage vacates, and
// the heap holds half as much again as they need.
type keeper struct {
	mu    sync.Mutex
	chunk []byte
	// same holds one copy of each request body kept so far (see
	// request), up to keepSame of them.
	same map[string][]byte
}

const (
	// keepChunk is the size of a chunk: some 140 replies of the
	// simulator.
	keepChunk = 64 << 10
	// keepMax is the largest body kept in a chunk; larger ones (rare,
	// hostile) get their own allocation so a chunk is not wasted.
	keepMax = 4 << 10
	// keepSame bounds the distinct request bodies shared, and
	// keepSameMax the size of one.
	keepSame    = 4096
	keepSameMax = 512
)

// request returns a kept copy of a request body. Suites send the same
// turns over and over (every scenario's greeting, the rows of examples),
// so identical small bodies share one copy.
func (k *keeper) request(b []byte) []byte {
	if len(b) > keepSameMax {
		return k.copy(b)
	}
	k.mu.Lock()
	kept, ok := k.same[string(b)]
	k.mu.Unlock()
	if ok {
		return kept
	}
	kept = k.copy(b)
	k.mu.Lock()
	if k.same == nil {
		k.same = make(map[string][]byte)
	}
	if len(k.same) < keepSame {
		k.same[string(kept)] = kept
	}
	k.mu.Unlock()
	return kept
}

// copy returns a copy of b that is never written to and lives as long as
// anything refers to its chunk.
func (k *keeper) copy(b []byte) []byte {
	n := len(b)
	if n == 0 {
		return []byte{}
	}
	if n > keepMax {
		return append([]byte(nil), b...)
	}
	k.mu.Lock()
	if len(k.chunk) < n {
		k.chunk = make([]byte, keepChunk)
	}
	out := k.chunk[:n:n]
	k.chunk = k.chunk[n:]
	k.mu.Unlock()
	copy(out, b)
	return out
}
