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
// Files are loaded by kind (one function per kind, see loaderFor): YAML
// suites, and Gherkin features (see docs/writing-features.md), whose pickles
// become Scenarios with compiled Steps (internal/steps), tag parameters
// (@agent:x, @retries:2, ...) applied and positions taken from the AST.
package scenario
