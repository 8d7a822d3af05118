package scenario

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/result"
)

// Shard is one share of a selection, for splitting a long suite across CI
// machines (`--shard K/N`): shard Index of Total. The zero Shard is the
// whole selection.
//
// The selection is sorted by file, then by where each scenario is
// written, and dealt round-robin: the i-th scenario (from 0) goes to
// shard i mod Total + 1. So every scenario is in exactly one shard, the
// shards differ in size by one scenario at most, and every machine that
// loads the same files with the same filters deals the same shares,
// whatever order it found the files in.
type Shard struct {
	Index int
	Total int
}

// ParseShard reads K/N (1 <= K <= N).
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	ki, kerr := strconv.Atoi(strings.TrimSpace(k))
	ni, nerr := strconv.Atoi(strings.TrimSpace(n))
	if !ok || kerr != nil || nerr != nil {
		return Shard{}, fmt.Errorf("%q is not K/N, e.g. 2/4 for the second of four shards", s)
	}
	if _, err := (result.Shard{Index: ki, Total: ni}).Check(); err != nil {
		return Shard{}, fmt.Errorf("%q: want 1 <= K <= N, e.g. 2/4 for the second of four shards", s)
	}
	return Shard{Index: ki, Total: ni}, nil
}

// String renders the shard as K/N ("" for the whole selection).
func (sh Shard) String() string {
	if sh.Total == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", sh.Index, sh.Total)
}

// IsZero reports whether sh is the whole selection.
func (sh Shard) IsZero() bool { return sh.Total == 0 }

// sorted returns the scenarios of suites with their suites, in dealing
// order: by file, then position, then name (examples rows of one line).
func sorted(suites []*Suite) []dealt {
	var all []dealt
	for _, s := range suites {
		if s == nil {
			continue
		}
		for _, sc := range s.Scenarios {
			if sc != nil {
				all = append(all, dealt{s, sc})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b dealt) int {
		return cmp.Or(cmp.Compare(a.file(), b.file()), cmp.Compare(a.sc.Pos.Line, b.sc.Pos.Line),
			cmp.Compare(a.sc.Pos.Col, b.sc.Pos.Col), cmp.Compare(a.sc.Name, b.sc.Name))
	})
	return all
}

type dealt struct {
	suite *Suite
	sc    *Scenario
}

func (d dealt) file() string { return cmp.Or(d.sc.Pos.File, d.suite.Path) }

// Apply returns the suites with only the scenarios of the shard, in their
// original order (like Select, suites that lose scenarios are copies and
// suites left with none are dropped). The zero Shard returns suites.
func (sh Shard) Apply(suites []*Suite) []*Suite {
	if sh.IsZero() {
		return suites
	}
	keep := map[*Scenario]bool{}
	for i, d := range sorted(suites) {
		if i%sh.Total == sh.Index-1 {
			keep[d.sc] = true
		}
	}
	return filter(suites, func(sc *Scenario) bool { return keep[sc] })
}

// Fingerprint identifies a selection: a hash of its scenarios (file,
// position, name) in dealing order. Shards of one selection carry the
// same fingerprint, so `agenttest merge` can tell shards of one run from
// reports of other selections. It does not depend on the order the files
// were found in, nor on anything but what was selected.
func Fingerprint(suites []*Suite) string {
	h := sha256.New()
	for _, d := range sorted(suites) {
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%s\n", d.file(), d.sc.Pos.Line, d.sc.Pos.Col, d.sc.Name)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
