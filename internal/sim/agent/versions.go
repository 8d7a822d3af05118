package agent

import (
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/diag"
)

// Versions. One file describes an agent and, under `versions:`, the other
// versions of it that environments may serve: each is the definition with
// some parts replaced. `environments:` says which version each environment
// serves when the simulator starts; publishing and promoting (the
// simulator's admin endpoints) move versions between environments later.
//
//	version: "1.2"
//	versions:
//	  "1.1":
//	    knowledge: {allergens: {...}}     # replaces one topic, keeps the rest
//	    nodes: {Greeting: {...}}          # replaces one node, keeps the rest
//	environments: {pre-release: "1.1", live: "1.0"}
//
// A version is compiled as a whole definition from the merged YAML, so
// every problem it has is reported at its own file:line:col.

// DefaultVersion is the version label of a definition that names none.
const DefaultVersion = "1"

// Environments are the platform's environments in promotion order: a
// version is published to sandbox and promoted to pre-release, then live.
var Environments = []string{"sandbox", "pre-release", "live"}

// mergedByName are the top-level sections whose entries a version replaces
// one by one (by name); a version replaces every other key whole.
var mergedByName = map[string]bool{"intents": true, "entities": true, "knowledge": true, "functions": true, "nodes": true}

// baseOnly are the top-level keys that describe the set of versions
// rather than one agent, so a version cannot set them.
var baseOnly = map[string]bool{"id": true, "version": true, "versions": true, "environments": true}

// labelRE is what a version label may look like: "1.2", "2026.04-rc1".
var labelRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// versionSet is shared, read-only, by every version of one file.
type versionSet struct {
	order    []string // the definition's own label first, then file order
	defs     map[string]*Definition
	deployed map[string]string // environment → label at start
}

// versionSpec is one entry of `versions:` as written.
type versionSpec struct {
	key, body *yaml.Node
}

// Versions returns the version labels of the agent's file: the
// definition's own first, then those under `versions:` in file order.
func (d *Definition) Versions() []string {
	if d.set == nil {
		return []string{d.Version}
	}
	return append([]string(nil), d.set.order...)
}

// AtVersion returns the definition of the version with the given label.
func (d *Definition) AtVersion(label string) (*Definition, bool) {
	if d.set == nil {
		return d, label == d.Version
	}
	v, ok := d.set.defs[label]
	return v, ok
}

// Deployed returns the label of the version env serves when the simulator
// starts: the file's `environments:` entry, else the definition's own.
func (d *Definition) Deployed(env string) string {
	if d.set != nil {
		if l, ok := d.set.deployed[env]; ok {
			return l
		}
		return d.set.order[0]
	}
	return d.Version
}

// label checks a version label.
func (l *loader) label(v *yaml.Node, what string) (string, bool) {
	s, ok := l.str(v, what)
	if ok && !labelRE.MatchString(s) {
		l.errorf(v, "%s %q: use letters, digits, '.', '_', '+' and '-', at most 64, starting with a letter or digit", what, s)
		return s, false
	}
	return s, ok
}

// checkVersions validates `versions:` and `environments:` as written; the
// versions themselves are compiled once the base definition is sound.
func (l *loader) checkVersions() {
	labels := []string{l.def.Version}
	if v := l.versionsNode; v != nil {
		l.pairs(v, "version", func(k, body *yaml.Node) {
			label, ok := l.label(k, "version label")
			if ok && label == l.def.Version {
				l.errorf(k, "version %q is the definition's own version; a version under versions: needs another label", label)
				return
			}
			labels = append(labels, label)
			fields := make([]field, 0, len(l.topKeys))
			for _, name := range l.topKeys {
				fields = append(fields, field{name, func(k, v *yaml.Node) {
					switch {
					case baseOnly[name]:
						l.errorf(k, "a version cannot set %s: it belongs to the agent, not to one version", name)
					case mergedByName[name]:
						l.pairs(v, strings.TrimSuffix(name, "s"), func(k, v *yaml.Node) {})
					}
				}})
			}
			if l.mapping(body, "version "+label, fields) && len(body.Content) == 0 {
				l.errorf(body, "version %q changes nothing: give the parts it replaces (nodes, knowledge, ...)", label)
			}
			if ok {
				l.versionSpecs = append(l.versionSpecs, versionSpec{key: k, body: body})
			}
		})
	}
	if v := l.envNode; v != nil {
		l.deployed = map[string]string{}
		l.pairs(v, "environment", func(k, v *yaml.Node) {
			if !slices.Contains(Environments, k.Value) {
				l.hintf(k, diag.DidYouMean(k.Value, Environments), "unknown environment %q; environments are %s", k.Value, strings.Join(Environments, ", "))
				return
			}
			label, ok := l.str(v, "environment version")
			if ok && !slices.Contains(labels, label) {
				l.hintf(v, diag.DidYouMean(label, labels), "environment %s serves unknown version %q; versions are %s", k.Value, label, strings.Join(labels, ", "))
				return
			}
			l.deployed[k.Value] = label
		})
	}
}

// compileVersions compiles every version of a sound base definition and
// links them all to one versionSet. Problems are reported at the version's
// own lines, prefixed with its label.
func (l *loader) compileVersions(root *yaml.Node) {
	base := l.def
	set := &versionSet{order: []string{base.Version}, defs: map[string]*Definition{base.Version: base}, deployed: l.deployed}
	for _, spec := range l.versionSpecs {
		label := spec.key.Value
		vd := &decoder{file: l.file, lines: l.lines}
		def, _ := vd.definition(overlay(root, spec.body))
		for _, d := range vd.diags {
			d.Message = "version " + label + ": " + d.Message
			l.diags = l.diags.Append(d)
		}
		def.Version = label
		def.idPos = base.idPos
		set.order = append(set.order, label)
		set.defs[label] = def
	}
	for _, def := range set.defs {
		def.set = set
	}
}

// overlay returns the root mapping with a version's parts applied. Nodes
// are shared, not copied: the decoder never modifies them.
func overlay(root, version *yaml.Node) *yaml.Node {
	out := replace(root, version, func(key string) bool { return baseOnly[key] && key != "id" })
	// Sections merged by name take the base's entries, then the version's.
	for i := 0; i+1 < len(out.Content); i += 2 {
		key := out.Content[i].Value
		if !mergedByName[key] {
			continue
		}
		for j := 0; j+1 < len(version.Content); j += 2 {
			if version.Content[j].Value == key {
				out.Content[i+1] = mergeSection(root, key, version.Content[j+1])
			}
		}
	}
	return out
}

// mergeSection merges a version's entries of a named section (nodes,
// intents...) into the base's; anything that is not two mappings is
// replaced whole, and the decoder then reports what is wrong with it.
func mergeSection(root *yaml.Node, key string, over *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if base := root.Content[i+1]; root.Content[i].Value == key && base.Kind == yaml.MappingNode && over.Kind == yaml.MappingNode {
			return replace(base, over, func(string) bool { return false })
		}
	}
	return over
}

// replace copies mapping base without the skipped keys, replacing the
// value of each key over also has (keeping over's key node for its
// position) and appending over's other keys.
func replace(base, over *yaml.Node, skip func(string) bool) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: base.Tag, Line: base.Line, Column: base.Column}
	at := map[string]int{}
	for i := 0; i+1 < len(base.Content); i += 2 {
		if k := base.Content[i]; !skip(k.Value) {
			at[k.Value] = len(out.Content)
			out.Content = append(out.Content, k, base.Content[i+1])
		}
	}
	for i := 0; i+1 < len(over.Content); i += 2 {
		k, v := over.Content[i], over.Content[i+1]
		if j, ok := at[k.Value]; ok {
			out.Content[j], out.Content[j+1] = k, v
			continue
		}
		at[k.Value] = len(out.Content)
		out.Content = append(out.Content, k, v)
	}
	return out
}
