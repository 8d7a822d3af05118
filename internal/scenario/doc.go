// Package scenario owns the test model of agenttest and loads it from files.
//
// A suite file is YAML whose top-level mapping has a `scenarios:` key (see
// docs/writing-scenarios.md for the format). Loading walks the yaml.Node tree
// itself, level by level, against allow-lists of keys, so that every value
// keeps the file:line:col where it was written and every problem of a file is
// reported at once as a diag.Diagnostic:
//
//	suites, diags := scenario.Load(os.DirFS("."), []string{"suites"})
//	for _, d := range diags {
//		fmt.Fprintln(stderr, d)
//	}
//	if diags.HasErrors() {
//		return exit(2)
//	}
//
// The loader resolves everything a scenario inherits from its suite (agent,
// env, start, vars, tags) and expands `examples:` rows into separate
// scenarios. It does not expand ${...} references: captures only exist at run
// time, so the runner calls Interpolate. The loader only checks that every
// reference names a var, an example column or a capture of an earlier turn.
//
// Both formats compile to one program: a Scenario's Steps (internal/steps),
// each with its position. The YAML decoder turns greeting:, turns: (say,
// expect, capture), probe: and confirm: into steps in that order; the
// Gherkin compiler (feature.go, see docs/writing-features.md) turns each
// pickle into one step per Gherkin step, with tag parameters (@agent:x,
// @retries:2, ...) applied and positions taken from the AST. Every file is
// read and parsed once. Select applies a run's Selection (tags, name) to
// the loaded suites: the one place scenarios are filtered.
package scenario
