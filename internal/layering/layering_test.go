// Package layering holds one test: the dependency rules of the tree, read
// from `go list`, so that the load → run → report layering and the pure
// leaves cannot erode unnoticed. See README.md ("Layout").
package layering

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/agenttest/agenttest/"

// pkg is one package of the module as `go list` sees it.
type pkg struct {
	path string
	// deps are its transitive dependencies (build, not tests).
	deps []string
	// imports are its direct imports (build); testImports those of its
	// tests.
	imports, testImports []string
}

// list runs go list over the module.
func list(t *testing.T) map[string]pkg {
	t.Helper()
	track(t)
	cmd := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{join .Deps " "}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`,
		module+"...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 4)
		if len(parts) != 4 {
			t.Fatalf("go list line %q", sc.Text())
		}
		p := pkg{path: strings.TrimPrefix(parts[0], module), deps: strings.Fields(parts[1]),
			imports: strings.Fields(parts[2]), testImports: strings.Fields(parts[3])}
		pkgs[p.path] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

// track reads every Go file of the module and go.mod. go test caches a
// passing result until a file the test itself opened changes; the files go
// list reads in its own process are not among them, so without this a
// broken rule could hide behind a cached pass.
func track(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != "../.." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") || d.Name() == "go.mod" {
			_, err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// local returns the module's packages among paths, without the module
// prefix.
func local(paths []string) []string {
	var out []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, module); ok {
			out = append(out, rest)
		}
	}
	return out
}

// The rules. Each names what a package must not depend on and why.
var (
	// pure are the models, checks and renderers, and the key redactor
	// that masks what they hold: they import no HTTP client, directly or
	// through another package.
	pure = []string{"internal/assert", "internal/scenario", "internal/steps", "internal/report", "internal/reply", "internal/result", "internal/secret", "internal/stats", "internal/history", "internal/gate", "internal/compare", "internal/coverage", "internal/merge", "internal/yamlerr"}
	// godogUsers are the only packages that may import godog: the public
	// integration package for Go teams.
	godogUsers = []string{"godogsteps"}
	// simAllowed is all the simulator may import of the module: it is a
	// separate implementation of the platform, tested against the harness,
	// so it must share none of the harness's code of the platform;
	// internal/clock (the standard library's timeouts on a test's clock),
	// internal/diag and internal/yamlerr (how a file's problems are told,
	// the agent definitions' as the suites') hold none of it.
	simAllowed = []string{"internal/brand", "internal/clock", "internal/diag", "internal/yamlerr", "examples/agents"}
)

func TestDependencyRules(t *testing.T) {
	pkgs := list(t)
	paths := make([]string, 0, len(pkgs))
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range pure {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("rule names %s, which go list does not know", p)
		}
		if slices.Contains(pkgs[p].deps, "net/http") {
			t.Errorf("%s depends on net/http (through %s): models, checks, renderers and the redactor must not import an HTTP client", p, strings.Join(via(pkgs, p, "net/http"), " -> "))
		}
	}
	for _, p := range paths {
		if slices.Contains(godogUsers, p) {
			continue
		}
		for _, imp := range append(slices.Clone(pkgs[p].imports), pkgs[p].testImports...) {
			if imp == "github.com/cucumber/godog" || strings.HasPrefix(imp, "github.com/cucumber/godog/") {
				t.Errorf("%s imports godog: only %s may (agenttest runs features with its own interpreter)", p, strings.Join(godogUsers, ", "))
			}
		}
	}
	for _, p := range paths {
		if p != "internal/sim" && !strings.HasPrefix(p, "internal/sim/") {
			continue
		}
		for _, d := range local(pkgs[p].deps) {
			if d != "internal/sim" && !strings.HasPrefix(d, "internal/sim/") && !slices.Contains(simAllowed, d) {
				t.Errorf("%s depends on %s: the simulator imports nothing of the harness", p, d)
			}
		}
	}
	for _, forbidden := range []string{"internal/sim", "internal/report"} {
		if slices.Contains(local(pkgs["internal/runner"].deps), forbidden) {
			t.Errorf("internal/runner depends on %s (through %s): the runner neither embeds the simulator nor renders", forbidden, strings.Join(via(pkgs, "internal/runner", module+forbidden), " -> "))
		}
	}
	for _, leaf := range []string{"internal/reply", "internal/result"} {
		for _, d := range local(pkgs[leaf].deps) {
			// assert's diff shows invisible characters by escape's rule;
			// escape is a leaf of the standard library (checked below).
			if !slices.Contains([]string{"internal/reply", "internal/assert", "internal/diag", "internal/escape"}, d) {
				t.Errorf("%s depends on %s: the models are leaves (reply: the standard library; result: assert, diag, escape, reply)", leaf, d)
			}
		}
	}
	for _, leaf := range []string{"internal/reply", "internal/stats", "internal/escape", "internal/jsonkind", "internal/clock"} {
		if d := local(pkgs[leaf].deps); len(d) > 0 {
			t.Errorf("%s depends on %v: it imports the standard library only", leaf, d)
		}
	}
}

// via returns a chain of imports from the package p (a module path
// without prefix) to target, for the message.
func via(pkgs map[string]pkg, p, target string) []string {
	seen := map[string]bool{}
	var walk func(cur string) []string
	walk = func(cur string) []string {
		if seen[cur] {
			return nil
		}
		seen[cur] = true
		for _, imp := range pkgs[cur].imports {
			if imp == target {
				return []string{cur, strings.TrimPrefix(imp, module)}
			}
			if rest, ok := strings.CutPrefix(imp, module); ok {
				if chain := walk(rest); chain != nil {
					return append([]string{cur}, chain...)
				}
			}
		}
		return nil
	}
	chain := walk(p)
	if chain == nil {
		// Only through the standard library or another module.
		return []string{p, "...", target}
	}
	return chain
}
