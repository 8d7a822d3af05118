package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

func TestZZNames(t *testing.T) {
	const key = "PLANTbuild-6e1f0c9a7d3b42e5"
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: key})
	dir := writeTree(t, map[string]string{"s.yaml": "suite: suite " + key + "\nagent: restaurant\nscenarios:\n  - name: case " + key + "\n    tags: [t" + key + "]\n    turns: [{say: hi, expect: {response: {contains: zzz}}}]\n"})
	env := map[string]string{"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_BUILD_KEY": key}
	for _, args := range [][]string{{"run", "-v", "--json", "r.json", "--junit", "r.xml", "--html", "r.html", "--github", "."}, {"list", "-v"}, {"lint"}} {
		c := newCLI(t, dir, env, args...)
		code := c.run(t)
		out := c.stdout.String() + c.stderr.String()
		t.Logf("%v exit %d leak=%v\n%s", args, code, strings.Contains(out, key), out)
	}
	for _, f := range []string{"r.json", "r.xml", "r.html", "h.jsonl"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		t.Logf("%s leak=%v", f, strings.Contains(string(b), key))
	}
}
