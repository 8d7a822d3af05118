package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/yamlerr"
)

// Kind is the kind of a suite file, decided by its extension.
type Kind int

const (
	// NotSuite is any file agenttest does not load.
	NotSuite Kind = iota
	// YAMLSuite is a .yaml or .yml file (a suite if named on the command
	// line or shaped like one: see looksLikeSuite).
	YAMLSuite
	// Feature is a Gherkin .feature file.
	Feature
)

// KindOf classifies a file by its extension.
func KindOf(name string) Kind {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml":
		return YAMLSuite
	case ".feature":
		return Feature
	}
	return NotSuite
}

// skipDirs are directories find never descends into (unless named
// explicitly): they hold fixtures and dependencies, not suites.
var skipDirs = map[string]bool{"testdata": true, "vendor": true, "node_modules": true}

// candidate is a file that may be a suite: a .feature file, or a YAML file
// that is one if it was named on the command line (named) or holds a
// `scenarios:` key. Which YAML files found in a directory are suites is
// decided when they are parsed, once (Load).
type candidate struct {
	path  string
	named bool
}

// find expands paths into candidates, reading no file: a directory is
// walked recursively for .feature and YAML files, skipping hidden
// directories, testdata, vendor and node_modules; a file named explicitly
// is kept whatever its content, so that loading it explains why it is not
// a suite. Paths are slash-separated and relative to fsys ("./x" and "x/"
// are accepted; "../x" and "/abs/x" too, for an fs.FS that accepts them);
// no paths means ".". The candidates are sorted and without duplicates.
// Every path that cannot be read has its error.
func find(fsys fs.FS, paths []string) ([]candidate, []error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	seen := map[string]int{}
	var files []candidate
	var errs []error
	add := func(p string, named bool) {
		if i, ok := seen[p]; ok {
			files[i].named = files[i].named || named
			return
		}
		seen[p] = len(files)
		files = append(files, candidate{path: p, named: named})
	}
	for _, arg := range paths {
		p := cleanPath(arg)
		info, err := fs.Stat(fsys, p)
		if err != nil {
			errs = append(errs, missingPath(fsys, arg, p, err))
			continue
		}
		if !info.IsDir() {
			if KindOf(p) == NotSuite {
				errs = append(errs, fmt.Errorf("find suites in %s: not a suite file (want .yaml, .yml or .feature)", arg))
				continue
			}
			add(p, true)
			continue
		}
		err = fs.WalkDir(fsys, p, func(name string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			base := de.Name()
			if de.IsDir() {
				if name != p && (strings.HasPrefix(base, ".") || skipDirs[base]) {
					return fs.SkipDir
				}
				return nil
			}
			if !strings.HasPrefix(base, ".") && KindOf(name) != NotSuite {
				add(name, false)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("find suites in %s: %w", arg, err))
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, errs
}

// missingPath is the error of a command-line path that cannot be read:
// the cause without the "stat PATH" of the file system's error, and for
// a path that does not exist, the nearest suite file or directory beside
// it, written as the argument was (a slip such as suites/bookng.yaml).
func missingPath(fsys fs.FS, arg, p string, err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		err = pe.Err
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("find suites in %s: %w", arg, err)
	}
	entries, rerr := fs.ReadDir(fsys, path.Dir(p))
	if rerr != nil {
		return fmt.Errorf("find suites in %s: %w", arg, err)
	}
	var names []string
	for _, e := range entries {
		// The path itself may be listed (a symbolic link to nothing):
		// it is not a slip for itself.
		if e.Name() == path.Base(p) {
			continue
		}
		if e.IsDir() || KindOf(e.Name()) != NotSuite {
			names = append(names, e.Name())
		}
	}
	// A name of one or two letters is one edit from most names.
	s := ""
	if base := path.Base(p); utf8.RuneCountInString(base) > 2 {
		s = diag.Suggest(base, names)
	}
	if s == "" {
		return fmt.Errorf("find suites in %s: %w", arg, err)
	}
	dir := arg[:strings.LastIndexAny(arg, `/\`)+1]
	return fmt.Errorf("find suites in %s: %w (did you mean %s?)", arg, err, dir+s)
}

// cleanPath turns a command-line path into an fs.FS path.
func cleanPath(p string) string {
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return "."
	}
	return p
}

// Load finds the suite files under paths and loads each one with the loader
// of its kind (see LoadAll). It returns the suites that loaded without
// errors, in file order, and every diagnostic of every file.
func Load(fsys fs.FS, paths []string) ([]*Suite, diag.Diagnostics) {
	l := LoadAll(fsys, paths)
	return l.Suites, l.Diags
}

// Loaded is what LoadAll found under its paths.
type Loaded struct {
	// Suites are the suites that loaded without errors, in file order.
	Suites []*Suite
	// Skipped are the YAML files found in directories that are not
	// suites (CI jobs, agent definitions, agenttest.yaml), in file
	// order: `lint -v` and `list -v` list them.
	Skipped []Skipped
	// Diags are the problems of every file, and of the paths.
	Diags diag.Diagnostics
}

// Skipped is a YAML file a directory walk passed over, and why.
type Skipped struct {
	Path string
	// Why says what the file holds instead of a suite, e.g. "not a
	// suite (top-level keys: name, on, jobs)".
	Why string
}

// LoadAll finds the suite files under paths and loads each one with the
// loader of its kind, reading and parsing each file once. A YAML file
// found in a directory is a suite (and is validated like a file named on
// the command line) when its top level is one (see looksLikeSuite): it has a
// `scenarios:` key or a near miss of it, or only suite keys; a file that
// does not parse, or is empty, is loaded too, so that its problem is
// reported (but for an agenttest.yaml, which the config's loader reports
// with its keys masked). Any other YAML file is passed over and listed in Skipped.
func LoadAll(fsys fs.FS, paths []string) Loaded {
	var l Loaded
	files, errs := find(fsys, paths)
	for _, err := range errs {
		l.Diags = l.Diags.Append(diag.Diagnostic{Severity: diag.Error, Message: err.Error()})
	}
	for _, f := range files {
		src, err := fs.ReadFile(fsys, f.path)
		if err != nil {
			l.Diags = l.Diags.Errorf(diag.Pos{File: f.path}, "read suite: %v", err)
			continue
		}
		var s *Suite
		var ds diag.Diagnostics
		switch KindOf(f.path) {
		case YAMLSuite:
			var why string
			if s, ds, why = loadYAML(f.path, src, f.named); why != "" {
				l.Skipped = append(l.Skipped, Skipped{Path: f.path, Why: why})
				continue
			}
		case Feature:
			s, ds = loadFeature(f.path, src)
		}
		l.Diags = append(l.Diags, ds...)
		if s != nil {
			l.Suites = append(l.Suites, s)
		}
	}
	return l
}

// Top-level keys that make a YAML file found in a directory a suite:
// every key of a suite (the decoder's own list, so that a key the format
// gains counts here too), and the scenario keys a suite written without
// `scenarios:` starts with.
var (
	suiteShaped    = suiteKeys.keys
	scenarioShaped = []string{"name", "turns", "greeting", "probe", "examples", "confirm"}
)

// agentDefinition returns the nodes: key of a mapping that is an agent
// definition of the simulator (its required start: and nodes:, and no
// scenarios:), nil for any other.
func agentDefinition(root *yaml.Node) *yaml.Node {
	if root.Kind != yaml.MappingNode {
		return nil
	}
	var nodes *yaml.Node
	start := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch k := root.Content[i]; k.Value {
		case "scenarios":
			return nil
		case "start":
			start = true
		case "nodes":
			nodes = k
		}
	}
	if !start {
		return nil
	}
	return nodes
}

// configFile returns the targets: key of a mapping that is agenttest's
// config file (targets:, or default_target:, and no scenarios:), nil for
// any other.
func configFile(root *yaml.Node) *yaml.Node {
	if root.Kind != yaml.MappingNode {
		return nil
	}
	var at *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch k := root.Content[i]; k.Value {
		case "scenarios":
			return nil
		case "targets", "default_target":
			if at == nil || k.Value == "targets" {
				at = k
			}
		}
	}
	return at
}

// looksLikeSuite decides from the first document of a YAML file (or the
// error of decoding it) whether the file is a suite:
//
//   - a file that does not parse, or holds nothing, is one: it is loaded
//     so that its problem is reported, never passed over in silence;
//   - a mapping is one when it has `scenarios:` or a near miss of it
//     (`scenario:`, `Scenarios:`), or when every key is a suite key (or a
//     near miss of one, or an x- extension) and one is: a suite whose
//     scenarios are missing. A mapping with other keys (an agent
//     definition's id and nodes, a CI job's jobs, agenttest.yaml's
//     targets) is something else;
//   - a list is one when its first item is a scenario (name: with turns:
//     or greeting:): scenarios written without `scenarios:`.
func looksLikeSuite(doc *yaml.Node, err error) (bool, string) {
	if err != nil {
		return true, ""
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return true, ""
	}
	root := doc.Content[0]
	switch root.Kind {
	case yaml.MappingNode:
		var keys []string
		for i := 0; i+1 < len(root.Content); i += 2 {
			keys = append(keys, root.Content[i].Value)
		}
		suiteish, other := false, false
		for _, k := range keys {
			switch {
			case k == "scenarios" || diag.Suggest(k, []string{"scenarios"}) != "":
				return true, ""
			case slices.Contains(suiteShaped, k):
				suiteish = true
			case strings.HasPrefix(k, "x-") || diag.Suggest(k, suiteShaped) != "":
			default:
				other = true
			}
		}
		if suiteish && !other {
			return true, ""
		}
		return false, "not a suite (top-level keys: " + shortList(keys) + ")"
	case yaml.SequenceNode:
		if len(root.Content) > 0 && root.Content[0].Kind == yaml.MappingNode {
			item := root.Content[0]
			named, scenario := false, false
			for i := 0; i+1 < len(item.Content); i += 2 {
				switch k := item.Content[i].Value; {
				case k == "name":
					named = true
				case slices.Contains(scenarioShaped, k):
					scenario = true
				}
			}
			if named && scenario {
				return true, ""
			}
		}
		return false, "not a suite (a list)"
	}
	return false, "not a suite (a " + kindName(root) + ")"
}

// isConfigName says whether path is named like agenttest's config file
// (agenttest.yaml or agenttest.yml, in any directory).
func isConfigName(name string) bool {
	switch path.Base(name) {
	case "agenttest.yaml", "agenttest.yml":
		return true
	}
	return false
}

// shortList joins the first few names of a list for a message.
func shortList(names []string) string {
	const most = 6
	if len(names) > most {
		return strings.Join(names[:most], ", ") + ", ..."
	}
	return strings.Join(names, ", ")
}

// LoadFile decodes one YAML suite. path is used for positions and for the
// default suite name. All problems of the file are returned, sorted by
// position, each with the source line it points at. The suite is nil when
// any of them is an error.
func LoadFile(path string, src []byte) (suite *Suite, diags diag.Diagnostics) {
	suite, diags, _ = loadYAML(path, src, true)
	return suite, diags
}

// loadYAML decodes a YAML file from one parse. A file found in a
// directory (named false) that is not a suite is passed over: skipped
// says what it is instead. A file named on the command line is decoded
// whatever it holds, so that the user learns why it is not a suite.
func loadYAML(path string, src []byte, named bool) (suite *Suite, diags diag.Diagnostics, skipped string) {
	src = Text(src)
	d := &decoder{file: path, src: src}
	defer func() {
		if r := recover(); r != nil {
			// Never seen; the fuzz target guards it. Report instead of
			// crashing a run over one file.
			d.diags = d.diags.Errorf(diag.Pos{File: path}, "internal error while loading: %v", r)
			suite, diags, skipped = nil, finish(d.diags, src), ""
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if !named {
		if err != nil && isConfigName(path) {
			// The config file's own loader reports it, with its
			// literal keys masked; echoed here as a suite's, the line
			// of a key written wrong would print the key.
			return nil, nil, "the config file (it does not parse: agenttest lint and run report why)"
		}
		if ok, why := looksLikeSuite(&doc, err); !ok {
			return nil, nil, why
		}
	}
	root := d.parse(dec, &doc, err, src)
	if root == nil {
		return nil, finish(d.diags, src), ""
	}
	if at := agentDefinition(root); at != nil {
		// Named on the command line: read as a suite, each of its keys
		// would be an error of its own.
		d.diags = d.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: diag.Pos{File: path, Line: at.Line, Col: at.Column},
			Message: "an agent definition of the simulator (id:, start:, nodes:), not a suite",
			Hint:    fmt.Sprintf("run suites against it with agenttest run --sim-agents %s (docs/agent-definition.md); a suite lists its scenarios under scenarios:", path)})
		return nil, finish(d.diags, src), ""
	}
	if at := configFile(root); at != nil {
		// Named on the command line (lint ci.yaml): read as a suite,
		// each of its keys would be an error, and its lines echoed
		// unmasked beside them.
		d.diags = d.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: diag.Pos{File: path, Line: at.Line, Col: at.Column},
			Message: "agenttest's config file (targets:), not a suite",
			Hint:    fmt.Sprintf("pass it with --config %s, to lint and run alike", path)})
		return nil, finish(d.diags, src), ""
	}
	s := d.suite(root, path)
	s.EnvRefs = d.envRefs.sorted()
	if !d.diags.HasErrors() {
		d.diags = warnUnchecked(d.diags, s, "no turn has expect:, and it has no greeting checks, capture or confirm")
	}
	diags = finish(d.diags, src)
	if diags.HasErrors() {
		return nil, diags, ""
	}
	return s, diags, ""
}

// parse checks the single YAML document of a suite file, given the first
// one as decoded (doc, err) and the decoder for what follows, and returns
// its root node, or nil after reporting why there is none.
func (d *decoder) parse(dec *yaml.Decoder, doc *yaml.Node, err error, src []byte) *yaml.Node {
	if errors.Is(err, io.EOF) {
		d.errorHint(&yaml.Node{Line: 1, Column: 1}, "a suite needs at least scenarios: with a list of scenarios", "file is empty")
		return nil
	}
	if err != nil {
		d.syntaxError(err, src)
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		d.syntaxError(err, src)
	default:
		d.errorHint(&next, "put each suite in a file of its own", "a suite file holds one YAML document; found another one here")
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		d.errorHint(&yaml.Node{Line: 1, Column: 1}, "a suite needs at least scenarios: with a list of scenarios", "file is empty")
		return nil
	}
	if d.nesting(doc.Content[0]) {
		return nil
	}
	return doc.Content[0]
}

func (d *decoder) syntaxError(err error, src []byte) {
	d.diags = d.diags.Append(yamlerr.Diagnostic(d.file, src, err))
}

// lineIndex finds the lines of a file by number: it holds where each line
// starts, so echoing the source line of each of N diagnostics costs N
// lookups, not N scans of the file. The lines it returns share one copy
// of the file's text.
type lineIndex struct {
	src    string
	starts []int
}

func newLineIndex(src []byte) lineIndex {
	starts := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return lineIndex{src: string(src), starts: starts}
}

// lineCount is the number of lines of src, a last one without a line
// ending included.
func lineCount(src []byte) int {
	n := bytes.Count(src, []byte{'\n'})
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// line returns the 1-based line n without its line ending.
func (ix lineIndex) line(n int) (string, bool) {
	if n < 1 || n > len(ix.starts) {
		return "", false
	}
	start, end := ix.starts[n-1], len(ix.src)
	if n < len(ix.starts) {
		end = ix.starts[n] - 1
	}
	return strings.TrimSuffix(ix.src[start:end], "\r"), true
}

// finish merges the diagnostics that examples expansion repeats, sorts them
// by position and attaches the source line of each.
func finish(ds diag.Diagnostics, src []byte) diag.Diagnostics {
	type key struct {
		sev diag.Severity
		pos diag.Pos
		msg string
	}
	seen := map[key]bool{}
	out := ds[:0:0]
	var lines lineIndex
	if len(ds) > 0 {
		lines = newLineIndex(src)
	}
	for _, d := range ds {
		k := key{d.Severity, d.Pos, d.Message}
		if seen[k] {
			continue
		}
		seen[k] = true
		if text, ok := lines.line(d.Pos.Line); ok {
			d.Source = text
		}
		out = append(out, d)
	}
	out.Sort()
	return out
}
