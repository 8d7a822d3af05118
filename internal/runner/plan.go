package runner

import (
	"cmp"
	"strings"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/steps"
)

// job is one case to run with everything needed to run it. Jobs are built
// once by plan; each is owned by a single goroutine while it runs.
type job struct {
	index int
	file  *result.File
	c     *result.Case
	sc    *scenario.Scenario
	// ev is the deployment evidence of the case's agent and environment
	// (evidence.go); nil when the run reads none or the case talks to no
	// deployment.
	ev *depEvidence
	// run is the run of a repeated scenario the job is, from 1; 0 for a
	// case's own job. Its attempts carry it (result.Attempt.Run) from
	// the start, so that they are told apart while the runs go on.
	run int
}

// Plan returns the files and cases a run of suites with opts would execute,
// after opts.Select, every case Pending. Files left without cases are
// dropped. `agenttest list` prints it; Run executes it.
func Plan(suites []*scenario.Suite, opts Options) []*result.File {
	if o, err := opts.withDefaults(); err == nil {
		opts = o
	}
	files, _ := plan(suites, opts)
	return files
}

// plan builds the result skeleton and the matching jobs, in file and case
// order.
func plan(suites []*scenario.Suite, opts Options) ([]*result.File, []*job) {
	var (
		files []*result.File
		jobs  []*job
	)
	selected := scenario.Select(suites, opts.Select)
	n := scenario.Count(selected)
	// The jobs are made in one block, not one by one: they live for the
	// run, and a finished job lets go of its scenario (finishJob).
	block := make([]job, n)
	for _, s := range selected {
		f := &result.File{Path: s.Path, Suite: s.Name}
		for _, sc := range s.Scenarios {
			c := &result.Case{
				// A copy: the loaded suite is released as the cases finish
				// (finishJob), and a string cut from it would keep its
				// memory pages.
				Name:    strings.Clone(sc.Name),
				Pos:     sc.Pos,
				Tags:    sc.Tags,
				Status:  result.Pending,
				Agent:   cmp.Or(sc.Agent, s.Agent, opts.DefaultAgent),
				Env:     cmp.Or(sc.Env, s.Env, opts.DefaultEnv, DefaultEnv),
				Variant: sc.Start.Variant,
				// Said in the report, not only warned of when the
				// suite loads: the gate reads the report, not the log.
				Unchecked: !scenario.ChecksSomething(sc.Steps),
			}
			if sc.Messaging() {
				c.Via = steps.ViaMessaging
				// What the scenario asks for; the session corrects it
				// to the channel's default when it sets nothing.
				c.Streaming = sc.Streaming()
			}
			if q := sc.Quarantine; q != nil {
				// Whether it still holds is decided once, when the run
				// is planned, so every report of the run agrees.
				c.Quarantine = &result.Quarantine{Reason: q.Reason, Owner: q.Owner, Until: q.UntilText(),
					Lapsed: opts.Now != nil && q.Lapsed(opts.Now())}
			}
			f.Cases = append(f.Cases, c)
			j := &block[len(jobs)]
			*j = job{index: len(jobs), file: f, c: c, sc: sc}
			jobs = append(jobs, j)
		}
		files = append(files, f)
	}
	return files, jobs
}
