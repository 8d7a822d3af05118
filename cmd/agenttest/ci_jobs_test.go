package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// ciJob is one job of a CI example, its matrix or parallel copies
// expanded: the agenttest commands it runs, the files they write, and
// what it hands on to the jobs that need it.
type ciJob struct {
	name  string
	needs []string
	cmds  [][]string
	// retries4 is a GitLab job retried when it exits 4.
	retries4 bool
	// written are the reports its agenttest commands write, by path.
	written []string
	// handsOn are the files of written a later job receives (GitLab
	// artifacts:paths, GitHub upload-artifact), as the receiver sees
	// them; uploads names them by artifact for GitHub.
	handsOn []string
	uploads map[string][]string
	// downloads are GitHub download-artifact steps.
	downloads []ciDownload
}

// ciDownload is a download-artifact step: one artifact by name, or those
// whose names match pattern, each in a directory of its own under path
// unless merged.
type ciDownload struct {
	name, pattern, path string
	merged              bool
}

// runDefaults are the report paths agenttest.yaml's run: section names
// (examples/agenttest.yaml, which the CI examples are written for): a
// run writes them unless its flags name others.
func runDefaults(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples/agenttest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct{ Run map[string]any }
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range []string{"junit", "json", "html", "cucumber"} {
		if v, ok := cfg.Run[k].(string); ok {
			out["--"+k] = v
		}
	}
	return out
}

// reportsWritten are the report files an agenttest command writes.
func reportsWritten(args []string, defaults map[string]string) []string {
	flags := map[string]string{}
	for i, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok && i+1 < len(args) {
			value = args[i+1]
		}
		switch name {
		case "--junit", "--json", "--html", "--cucumber":
			flags[name] = value
		}
	}
	if args[0] == "run" {
		for k, v := range defaults {
			if _, ok := flags[k]; !ok {
				flags[k] = v
			}
		}
	}
	var out []string
	for _, v := range flags {
		out = append(out, path.Clean(v))
	}
	sort.Strings(out)
	return out
}

// reportsRead are the JSON reports gate and merge read: their arguments
// that are not flags or flag values (gate's --suite names the checkout's
// suites, which every job has).
func reportsRead(args []string) []string {
	valued := map[string]bool{"--junit": true, "--json": true, "--html": true, "--cucumber": true, "--coverage-from": true,
		"--config": true, "--max-age": true, "--seed": true, "--target": true, "--agent": true, "--suite": true}
	var out []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case valued[a]:
			i++
		case !strings.HasPrefix(a, "-"):
			out = append(out, path.Clean(a))
		}
	}
	return out
}

// ciJobs reads the jobs of a CI example, GitHub Actions (jobs:) or
// GitLab CI (every top-level key that holds a script:).
func ciJobs(t *testing.T, doc map[string]any, defaults map[string]string) map[string]*ciJob {
	t.Helper()
	jobs := map[string]*ciJob{}
	// needs, script and paths are a string or a list of strings.
	strs := yamlStrings
	if gh, ok := doc["jobs"].(map[string]any); ok {
		for name, v := range gh {
			j, _ := v.(map[string]any)
			job := &ciJob{name: name, needs: strs(j["needs"]), uploads: map[string][]string{}}
			// The matrix of one variable (the shards) gives a copy per
			// value.
			copies := []*strings.Replacer{strings.NewReplacer()}
			if st, ok := j["strategy"].(map[string]any); ok {
				if m, ok := st["matrix"].(map[string]any); ok && len(m) == 1 {
					copies = nil
					for k, vals := range m {
						for _, val := range vals.([]any) {
							copies = append(copies, strings.NewReplacer("${{ matrix."+k+" }}", fmt.Sprint(val)))
						}
					}
				}
			}
			steps, _ := j["steps"].([]any)
			for _, r := range copies {
				for _, s := range steps {
					step, _ := s.(map[string]any)
					with, _ := step["with"].(map[string]any)
					get := func(k string) string { v, _ := with[k].(string); return r.Replace(v) }
					uses, _ := step["uses"].(string)
					switch {
					case strings.HasPrefix(uses, "actions/upload-artifact@"):
						for p := range strings.FieldsSeq(get("path")) {
							job.uploads[get("name")] = append(job.uploads[get("name")], path.Clean(p))
						}
					case strings.HasPrefix(uses, "actions/download-artifact@"):
						merged, _ := with["merge-multiple"].(bool)
						job.downloads = append(job.downloads, ciDownload{name: get("name"), pattern: get("pattern"), path: path.Clean(get("path")), merged: merged})
					}
					if run, ok := step["run"].(string); ok {
						job.cmds = append(job.cmds, ciCommands(r.Replace(run))...)
					}
				}
			}
			jobs[name] = job
		}
		return jobs
	}
	for name, v := range doc {
		j, ok := v.(map[string]any)
		if !ok || strings.HasPrefix(name, ".") || j["script"] == nil {
			continue
		}
		job := &ciJob{name: name, needs: strs(j["needs"])}
		copies := []*strings.Replacer{strings.NewReplacer()}
		if n, ok := j["parallel"].(int); ok {
			copies = nil
			for i := 1; i <= n; i++ {
				copies = append(copies, strings.NewReplacer("$CI_NODE_INDEX", fmt.Sprint(i), "$CI_NODE_TOTAL", fmt.Sprint(n)))
			}
		}
		for _, r := range copies {
			for _, line := range strs(j["script"]) {
				job.cmds = append(job.cmds, ciCommands(r.Replace(line))...)
			}
		}
		if retry, ok := j["retry"].(map[string]any); ok {
			codes, _ := retry["exit_codes"].([]any)
			for _, c := range codes {
				job.retries4 = job.retries4 || c == 4
			}
		}
		if a, ok := j["artifacts"].(map[string]any); ok {
			job.handsOn = strs(a["paths"])
		}
		jobs[name] = job
	}
	return jobs
}

// inPaths says whether file is one of paths: a file, a directory
// (reports/) or a glob.
func inPaths(file string, paths []string) bool {
	for _, p := range paths {
		p = path.Clean(p)
		if ok, _ := path.Match(p, file); ok || file == p || strings.HasPrefix(file, p+"/") {
			return true
		}
	}
	return false
}

// TestCIExamplesHandReportsOn: the jobs of each CI example hand their
// reports on as the next job reads them. Every report a gate or merge
// reads is one a command of its job, or of a job it needs, wrote and
// handed on (GitLab artifacts:paths; GitHub upload-artifact and
// download-artifact under the same name and path). A shard job hands on
// its shard's JSON report alone: a whole reports/ directory carried the
// shard's JUnit report (run: junit: of agenttest.yaml) into the merge
// job, where a merge refused (a missing shard) left it as the pipeline's
// test report. A GitLab job retried on exit 4 talks to the platform:
// retrying a merge merges the same reports into the same 4.
func TestCIExamplesHandReportsOn(t *testing.T) {
	t.Parallel()
	defaults := runDefaults(t)
	reads := 0
	for _, ex := range ciExamples(t) {
		base, doc := ex.file, ex.doc
		jobs := ciJobs(t, doc, defaults)
		for _, j := range jobs {
			for _, c := range j.cmds {
				j.written = append(j.written, reportsWritten(c, defaults)...)
			}
			slices.Sort(j.written)
			j.written = slices.Compact(j.written)
		}
		// What each job has on disk: what it wrote, and what the jobs it
		// needs handed on to it.
		var ancestors func(j *ciJob, seen map[string]bool)
		ancestors = func(j *ciJob, seen map[string]bool) {
			for _, n := range j.needs {
				if jobs[n] == nil {
					t.Errorf("%s: job %s needs %s, which is not a job", base, j.name, n)
					continue
				}
				if !seen[n] {
					seen[n] = true
					ancestors(jobs[n], seen)
				}
			}
		}
		for _, j := range jobs {
			have := slices.Clone(j.written)
			up := map[string]bool{}
			ancestors(j, up)
			for n := range up {
				from := jobs[n]
				for _, w := range from.written {
					if inPaths(w, from.handsOn) && slices.Contains(j.needs, n) {
						have = append(have, w)
					}
				}
				for _, d := range j.downloads {
					for name, paths := range from.uploads {
						if ok, _ := path.Match(d.pattern, name); name != d.name && !ok {
							continue
						}
						for _, w := range from.written {
							if !inPaths(w, paths) {
								continue
							}
							// upload-artifact keeps paths relative to the
							// common directory of what it uploads.
							root := paths[0]
							if len(paths) > 1 || slices.Contains(from.written, root) {
								root = path.Dir(root)
							}
							dir := d.path
							if d.name == "" && !d.merged {
								dir = path.Join(dir, name)
							}
							have = append(have, path.Join(dir, strings.TrimPrefix(w, root+"/")))
						}
					}
				}
			}
			for _, c := range j.cmds {
				if c[0] != "gate" && c[0] != "merge" {
					continue
				}
				for _, r := range reportsRead(c) {
					reads++
					if !slices.ContainsFunc(have, func(h string) bool { ok, _ := path.Match(r, h); return ok }) {
						t.Errorf("%s: job %s: agenttest %s reads %s, which the job does not have (it has %v)", base, j.name, c[0], r, have)
					}
				}
			}
			shard := slices.ContainsFunc(j.cmds, func(c []string) bool { return c[0] == "run" && slices.Contains(c, "--shard") })
			if shard {
				var json []string
				for _, c := range j.cmds {
					if v := slices.Index(c, "--json"); v >= 0 {
						json = append(json, path.Clean(c[v+1]))
					}
				}
				var handed []string
				for _, w := range j.written {
					if inPaths(w, j.handsOn) {
						handed = append(handed, w)
					}
					for _, paths := range j.uploads {
						if inPaths(w, paths) {
							handed = append(handed, w)
						}
					}
				}
				for _, h := range handed {
					if !slices.Contains(json, h) {
						t.Errorf("%s: shard job %s hands on %s, not only its shard's JSON report", base, j.name, h)
					}
				}
			}
			if j.retries4 && !slices.ContainsFunc(j.cmds, func(c []string) bool { return c[0] == "run" || c[0] == "compare" || c[0] == "gate" }) {
				t.Errorf("%s: job %s is retried on exit 4, and calls no platform: a retry reads the same reports into the same verdict", base, j.name)
			}
		}
	}
	if reads < 6 {
		t.Errorf("%d reports read by gate and merge in the CI examples, want the promotions' and the shards'", reads)
	}
}

// TestCIExamplesUseKnownKeys: the CI examples use only keys their CI
// system knows (GitHub Actions and GitLab CI refuse a workflow with an
// unknown one, after the user copied it): a workflow's, a job's, a
// step's; GitLab's artifacts: and retry:.
func TestCIExamplesUseKnownKeys(t *testing.T) {
	t.Parallel()
	set := func(keys string) map[string]bool {
		m := map[string]bool{}
		for k := range strings.FieldsSeq(keys) {
			m[k] = true
		}
		return m
	}
	var (
		ghWorkflow = set("name run-name on permissions env defaults concurrency jobs")
		ghJob      = set("name permissions needs if runs-on environment concurrency outputs env defaults steps timeout-minutes strategy continue-on-error container services")
		ghStep     = set("id if name uses run shell with env working-directory continue-on-error timeout-minutes")
		glTop      = set("stages default variables include workflow image services before_script after_script cache")
		glJob      = set("stage image services script before_script after_script variables rules needs dependencies artifacts retry parallel environment when extends resource_group timeout allow_failure tags cache interruptible coverage")
		glArtifact = set("paths exclude expire_in expose_as name public access reports untracked when")
		glRetry    = set("max when exit_codes")
	)
	check := func(file, where string, v any, known map[string]bool) {
		m, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s: %s is not a mapping", file, where)
			return
		}
		for k := range m {
			if !known[k] {
				t.Errorf("%s: %s: unknown key %q", file, where, k)
			}
		}
	}
	for _, ex := range ciExamples(t) {
		base, doc := ex.file, ex.doc
		if jobs, ok := doc["jobs"].(map[string]any); ok {
			check(base, "the workflow", doc, ghWorkflow)
			if doc["on"] == nil {
				t.Errorf("%s: no on: trigger", base)
			}
			for name, j := range jobs {
				check(base, "job "+name, j, ghJob)
				job, _ := j.(map[string]any)
				steps, _ := job["steps"].([]any)
				if job["runs-on"] == nil || len(steps) == 0 {
					t.Errorf("%s: job %s lacks runs-on: or steps:", base, name)
				}
				for i, s := range steps {
					check(base, fmt.Sprintf("job %s, step %d", name, i+1), s, ghStep)
					if st, _ := s.(map[string]any); (st["uses"] == nil) == (st["run"] == nil) {
						t.Errorf("%s: job %s, step %d: want one of uses: and run:", base, name, i+1)
					}
				}
			}
			continue
		}
		for name, j := range doc {
			if glTop[name] {
				continue
			}
			check(base, "job "+name, j, glJob)
			job, _ := j.(map[string]any)
			if a, ok := job["artifacts"]; ok {
				check(base, "job "+name+", artifacts", a, glArtifact)
			}
			if r, ok := job["retry"]; ok {
				check(base, "job "+name+", retry", r, glRetry)
			}
			if st, ok := job["stage"].(string); ok {
				stages := []string{"build", "test", "deploy"}
				if s, ok := doc["stages"].([]any); ok {
					stages = nil
					for _, x := range s {
						stages = append(stages, fmt.Sprint(x))
					}
				}
				if !slices.Contains(stages, st) {
					t.Errorf("%s: job %s: stage %s is not one of %v", base, name, st, stages)
				}
			}
		}
	}
}

// TestCIExamplesKeepReportsOnTimeout: GitLab uploads no artifact of a
// job that hits its timeout, so each GitLab job that runs the suites
// (run, compare) stops its script before the job's timeout
// (RUNNER_SCRIPT_TIMEOUT below timeout:), leaving agenttest the SIGTERM
// that writes the reports of what ran and the job the time to upload
// them; and a merge of shard jobs runs whatever they did (when: always),
// since a shard job that failed would otherwise skip it. Before, a
// GitLab job that timed out kept no report, and a sharded pipeline none
// at all.
func TestCIExamplesKeepReportsOnTimeout(t *testing.T) {
	t.Parallel()
	for _, ex := range ciExamples(t) {
		if _, ok := ex.doc["jobs"]; ok {
			continue // GitHub Actions runs if: always() steps after a timeout
		}
		parallel := map[string]bool{}
		for name, j := range ex.doc {
			if job, ok := j.(map[string]any); ok && job["parallel"] != nil {
				parallel[name] = true
			}
		}
		for name, j := range ex.doc {
			job, ok := j.(map[string]any)
			if !ok || job["script"] == nil {
				continue
			}
			script := strings.Join(yamlStrings(job["script"]), "\n")
			if strings.Contains(script, "agenttest run ") || strings.Contains(script, "agenttest compare ") {
				vars, _ := job["variables"].(map[string]any)
				total, err1 := time.ParseDuration(fmt.Sprint(job["timeout"]))
				limit, err2 := time.ParseDuration(fmt.Sprint(vars["RUNNER_SCRIPT_TIMEOUT"]))
				switch {
				case err1 != nil || err2 != nil:
					t.Errorf("%s: job %s runs the suites without timeout: and RUNNER_SCRIPT_TIMEOUT below it (%v, %v)", ex.file, name, err1, err2)
				case limit >= total:
					t.Errorf("%s: job %s: RUNNER_SCRIPT_TIMEOUT %s leaves no time to upload within timeout %s", ex.file, name, limit, total)
				}
			}
			if strings.Contains(script, "agenttest merge ") {
				for _, need := range yamlStrings(job["needs"]) {
					if parallel[need] && job["when"] != "always" {
						t.Errorf("%s: job %s merges the shards of %s but is skipped when one failed (want when: always)", ex.file, name, need)
					}
				}
			}
		}
	}
}

// TestCIExamplesPassSignalsOn: when a job is cancelled or times out,
// GitHub's runner signals the step's shell alone (SIGINT, then SIGTERM
// 7.5 s later; actions/runner ProcessInvoker kill(pid, ...)), never its
// children, and bash waits for its foreground command before it acts on
// the first. Each GitHub step that runs the suites or merges them
// therefore execs agenttest, which makes it the process signalled, or
// runs it in the background and passes the first signal on with a trap:
// either way agenttest stops, writes the reports of what ran and exits
// 130. Before, agenttest was never signalled: the job ended with no
// report, and the agenttest it left behind kept calling the platform.
func TestCIExamplesPassSignalsOn(t *testing.T) {
	t.Parallel()
	long := regexp.MustCompile(`(?m)(?:^|[;&|]\s*)\s*(exec\s+)?agenttest\s+(run|compare|merge)\s`)
	for _, ex := range ciExamples(t) {
		jobs, ok := ex.doc["jobs"].(map[string]any)
		if !ok {
			continue
		}
		for name, j := range jobs {
			job, _ := j.(map[string]any)
			steps, _ := job["steps"].([]any)
			for i, s := range steps {
				step, _ := s.(map[string]any)
				run, _ := step["run"].(string)
				for _, m := range long.FindAllStringSubmatch(run, -1) {
					forwarded := strings.Contains(run, "trap ") && strings.Contains(run, `wait "$pid"`)
					if m[1] == "" && !forwarded {
						t.Errorf("%s: job %s, step %d: agenttest %s is not signalled when the job is cancelled (exec it, or pass the signal on with a trap):\n%s",
							ex.file, name, i+1, m[2], run)
					}
				}
			}
		}
	}
}
