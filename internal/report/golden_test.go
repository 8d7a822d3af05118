package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/agenttest/agenttest/internal/golden"
	"github.com/agenttest/agenttest/internal/result"
)

// TestFormats is the format matrix: each fixture rendered by each
// renderer, compared with its golden file.
func TestFormats(t *testing.T) {
	fixtures := map[string]func() *result.Result{
		"full":        fixture,
		"messaging":   messagingFixture,
		"stats":       statsFixture,
		"deployments": deploymentsFixture,
		"invisible":   invisibleFixture,
		"probes":      probesFixture,
		"empty": func() *result.Result {
			return &result.Result{Started: t0, Target: result.Target{Name: "sim", Embedded: true}}
		},
	}
	formats := map[string]func(*bytes.Buffer, *result.Result) error{
		"human.txt": func(b *bytes.Buffer, r *result.Result) error {
			replay(NewHuman(b, HumanOptions{}), r)
			return nil
		},
		"human-verbose.txt": func(b *bytes.Buffer, r *result.Result) error {
			replay(NewHuman(b, HumanOptions{Verbose: true}), r)
			return nil
		},
		"human-tty-color.txt": func(b *bytes.Buffer, r *result.Result) error {
			replay(NewHuman(b, HumanOptions{TTY: true, Color: true, Now: stepClock()}), r)
			return nil
		},
		"json":      func(b *bytes.Buffer, r *result.Result) error { return WriteJSON(b, r, JSONOptions{}) },
		"junit.xml": func(b *bytes.Buffer, r *result.Result) error { return WriteJUnit(b, r) },
		// GitHub Actions: workflow commands on stdout, Markdown for
		// $GITHUB_STEP_SUMMARY.
		"github.txt":        func(b *bytes.Buffer, r *result.Result) error { return WriteGitHubAnnotations(b, r) },
		"github-summary.md": func(b *bytes.Buffer, r *result.Result) error { return WriteGitHubSummary(b, r) },
	}
	for fname, fx := range fixtures {
		for format, render := range formats {
			t.Run(fname+"/"+format, func(t *testing.T) {
				var b bytes.Buffer
				if err := render(&b, fx()); err != nil {
					t.Fatal(err)
				}
				golden.Check(t, filepath.Join("testdata", fname+"."+format), b.Bytes())
			})
		}
	}
}
