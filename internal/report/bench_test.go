package report

import (
	"fmt"
	"io"
	"testing"

	"github.com/agenttest/agenttest/internal/result"
)

// bigResult is the fixture's files repeated to about a thousand cases.
func bigResult() *result.Result {
	r := fixture()
	base := r.Files
	r.Files = nil
	for i := range 80 {
		for _, f := range base {
			g := *f
			g.Path = fmt.Sprintf("%s.%d", f.Path, i)
			r.Files = append(r.Files, &g)
		}
	}
	return r
}

func BenchmarkWriteJUnit(b *testing.B) {
	r := bigResult()
	for b.Loop() {
		if err := WriteJUnit(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteJSON(b *testing.B) {
	r := bigResult()
	for b.Loop() {
		if err := WriteJSON(io.Discard, r, JSONOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteHTML(b *testing.B) {
	r := bigResult()
	for b.Loop() {
		if err := WriteHTML(io.Discard, r, HTMLOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHumanCaseFinished(b *testing.B) {
	r := fixture()
	f := r.Files[0]
	c := f.Cases[1] // a failing case: the expensive block
	h := NewHuman(io.Discard, HumanOptions{TTY: true, Color: true, Now: stepClock()})
	h.RunStarted(1, r.Target)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.CaseFinished(f, c)
		}
	})
}
