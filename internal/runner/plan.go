package runner

import (
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
)

// job is one case to run with everything needed to run it. Jobs are built
// once by plan; each is owned by a single goroutine while it runs.
type job struct {
	index int
	file  *result.File
	c     *result.Case
	sc    *scenario.Scenario
	// suite is the file the scenario comes from (features are run from
	// its Source).
	suite *scenario.Suite
	// fc is the state of a feature case once godog has started it; it
	// is set and read by the goroutine that runs the pickle, then read
	// after godog's Run returned.
	fc *featureCase
}

// Plan returns the files and cases a run of suites with opts would execute,
// after the tag and name filters, every case Pending. Files left without
// cases are dropped. `agenttest list` prints it; Run executes it.
func Plan(suites []*scenario.Suite, opts Options) []*result.File {
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
	for _, s := range suites {
		if s == nil {
			continue
		}
		f := &result.File{Path: s.Path, Suite: s.Name}
		for _, sc := range s.Scenarios {
			if sc == nil || !selected(sc, opts) {
				continue
			}
			c := &result.Case{
				Name:    sc.Name,
				Pos:     sc.Pos,
				Tags:    sc.Tags,
				Status:  result.Pending,
				Agent:   firstNonEmpty(sc.Agent, s.Agent, opts.DefaultAgent),
				Env:     firstNonEmpty(sc.Env, s.Env, opts.DefaultEnv, DefaultEnv),
				Variant: sc.Start.Variant,
			}
			f.Cases = append(f.Cases, c)
			jobs = append(jobs, &job{index: len(jobs), file: f, c: c, sc: sc, suite: s})
		}
		if len(f.Cases) > 0 {
			files = append(files, f)
		}
	}
	return files, jobs
}

// selected applies the --tags and --run filters.
func selected(sc *scenario.Scenario, opts Options) bool {
	if opts.Tags != nil && !opts.Tags.Match(sc.Tags) {
		return false
	}
	if opts.Name != nil && !opts.Name.MatchString(sc.Name) {
		return false
	}
	return true
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
