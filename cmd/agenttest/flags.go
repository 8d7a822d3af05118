package main

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
)

// flags wraps a FlagSet with AGENTTEST_* environment defaults: a flag given
// on the command line wins over its variable, which wins over the config
// file and the built-in default.
type flags struct {
	fs  *flag.FlagSet
	st  *State
	cmd string
	// usage is the text before the flag list in --help.
	usage string
	// problems are environment defaults that did not parse, of the flags
	// the command line does not give (parse drops the others: the flag
	// wins over its variable); reported with the options' own problems.
	problems []string
	// envProblems maps a flag to the problem of its variable's value.
	envProblems map[string]string
	// fromEnv names the flags whose value came from the environment.
	fromEnv map[string]bool
	// envNames maps a flag to the variable that gave its value.
	envNames map[string]string
	// aliases maps a long flag name to its one-letter alias.
	aliases map[string]string
	// files maps a flag that names a file to what leaving it out does,
	// for the refusal of an empty value (fileVar).
	files map[string]string
}

func newFlags(st *State, cmd, usage string) *flags {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{fs: fs, st: st, cmd: cmd, usage: usage, fromEnv: map[string]bool{}, envNames: map[string]string{}, envProblems: map[string]string{}}
}

// env returns the environment default of a flag, if any.
func (f *flags) env(name, envName string) (string, bool) {
	if envName == "" {
		return "", false
	}
	v, ok := f.st.LookupEnv(envName)
	if !ok || v == "" {
		return "", false
	}
	f.fromEnv[name] = true
	f.envNames[name] = envName
	return v, true
}

// attribute names, after each problem of err about flags that the
// command line did not give, the variables that set them: "run:
// --parallel must be at least 1, got 0 (set by AGENTTEST_PARALLEL)", for
// a job whose command line has no --parallel to fix. Values are not
// repeated: some variables hold secrets (AGENTTEST_WEBHOOK_SECRET).
func (f *flags) attribute(err error) error {
	var e *exitError
	if !errors.As(err, &e) || e.code != exitUsage {
		return err
	}
	lines := strings.Split(e.msg, "\n")
	changed := false
	for i, line := range lines {
		rest, ok := strings.CutPrefix(line, f.cmd+": ")
		if !ok {
			continue
		}
		var envs []string
		for word := range strings.FieldsSeq(rest) {
			name, ok := strings.CutPrefix(word, "--")
			if !ok {
				continue
			}
			if j := strings.IndexAny(name, ":=,;)"); j >= 0 {
				name = name[:j]
			}
			env := f.setBy(name)
			if env != "" && !strings.Contains(line, env) && !slices.Contains(envs, env) {
				envs = append(envs, env)
			}
		}
		if len(envs) > 0 {
			lines[i] += " (set by " + strings.Join(envs, ", ") + ")"
			changed = true
		}
	}
	if !changed {
		return err
	}
	return &exitError{code: e.code, msg: strings.Join(lines, "\n"), hint: e.hint}
}

// setBy is the variable that gave the flag name its value, when the
// command line did not give it: "" otherwise, and for a command that
// registered no flags (a selection made without register).
func (f *flags) setBy(name string) string {
	if f == nil || f.onCommandLine(name) {
		return ""
	}
	return f.envNames[name]
}

// setByNote is setBy said after a problem: " (set by AGENTTEST_X)".
func (f *flags) setByNote(name string) string {
	if env := f.setBy(name); env != "" {
		return " (set by " + env + ")"
	}
	return ""
}

// onCommandLine says whether the command line gave the flag name.
func (f *flags) onCommandLine(name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) {
		if fl.Name == name {
			set = true
		}
	})
	return set
}

func withEnv(usage, envName string) string {
	if envName == "" {
		return usage
	}
	return usage + " (env " + envName + ")"
}

func (f *flags) stringVar(p *string, name, envName, def, usage string) {
	if v, ok := f.env(name, envName); ok {
		def = v
	}
	f.fs.StringVar(p, name, def, withEnv(usage, envName))
}

// fileVar is stringVar for a flag that names a file; without says what
// leaving the flag out does ("to write no report"). An empty value on the
// command line is refused (parse): in a CI job, --junit=$REPORT_PATH with
// the variable unset would write no report, silently, and override the
// config file's. An empty variable (AGENTTEST_JUNIT=) is unset, as env
// reads every variable.
func (f *flags) fileVar(p *string, name, envName, usage, without string) {
	f.stringVar(p, name, envName, "", usage)
	if f.files == nil {
		f.files = map[string]string{}
	}
	f.files[name] = without
}

// secretVar is stringVar for a secret: its value from the environment is
// not the flag's default, so --help, which prints defaults, says that a
// variable set it and never what it holds.
func (f *flags) secretVar(p *string, name, envName, usage string) {
	f.fs.Var(secretValue{p}, name, withEnv(usage, envName))
	if v, ok := f.env(name, envName); ok {
		*p = v
	}
}

// secretValue is the flag.Value of a secret (secretVar). Its String is
// empty, so neither the flag's default nor anything else that prints a
// flag's value shows it.
type secretValue struct{ p *string }

func (v secretValue) String() string { return "" }

func (v secretValue) Set(s string) error {
	*v.p = s
	return nil
}

func isSecret(fl *flag.Flag) bool {
	_, ok := fl.Value.(secretValue)
	return ok
}

func (f *flags) boolVar(p *bool, name, envName string, usage string) {
	def := false
	if v, ok := f.env(name, envName); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			f.envProblems[name] = fmt.Sprintf("%s=%q is not a boolean (true or false)", envName, v)
		}
		def = b
	}
	f.fs.BoolVar(p, name, def, withEnv(usage, envName))
}

func (f *flags) intVar(p *int, name, envName string, def int, usage string) {
	if v, ok := f.env(name, envName); ok {
		i, err := strconv.Atoi(v)
		if err != nil {
			f.envProblems[name] = fmt.Sprintf("%s=%q is not an integer", envName, v)
		} else {
			def = i
		}
	}
	f.fs.IntVar(p, name, def, withEnv(usage, envName))
}

func (f *flags) int64Var(p *int64, name, envName string, def int64, usage string) {
	if v, ok := f.env(name, envName); ok {
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			f.envProblems[name] = fmt.Sprintf("%s=%q is not an integer", envName, v)
		} else {
			def = i
		}
	}
	f.fs.Int64Var(p, name, def, withEnv(usage, envName))
}

func (f *flags) durationVar(p *time.Duration, name, envName string, def time.Duration, usage string) {
	if v, ok := f.env(name, envName); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			f.envProblems[name] = fmt.Sprintf("%s=%q is %s", envName, v, notDuration(v))
		} else {
			def = d
		}
	}
	f.fs.DurationVar(p, name, def, withEnv(usage, envName))
}

func (f *flags) float64Var(p *float64, name, envName string, def float64, usage string) {
	if v, ok := f.env(name, envName); ok {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			f.envProblems[name] = fmt.Sprintf("%s=%q is not a number", envName, v)
		} else {
			def = x
		}
	}
	f.fs.Float64Var(p, name, def, withEnv(usage, envName))
}

// tagsVar is stringVar for a tag expression given once or more: the
// command line's expressions all hold, as Cucumber's repeated --tags do
// (--tags @smoke --tags '~@wip' is '(@smoke) and (~@wip)'), where a
// later one replacing the first would quietly run what the first left
// out. The first replaces the environment's.
func (f *flags) tagsVar(p *string, name, envName, usage string) {
	if v, ok := f.env(name, envName); ok {
		*p = v
	}
	f.fs.Var(&tagsValue{p: p}, name, withEnv(usage, envName))
}

type tagsValue struct {
	p     *string
	given bool
}

func (v *tagsValue) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return *v.p
}

func (v *tagsValue) Set(s string) error {
	switch {
	case !v.given || *v.p == "":
		*v.p = s
	case s != "":
		*v.p = "(" + *v.p + ") and (" + s + ")"
	}
	v.given = true
	return nil
}

// listVar is a flag that may be given several times, each value a list
// separated by commas (its variable too): every value is kept, in order.
func (f *flags) listVar(p *[]string, name, envName, usage string) {
	if v, ok := f.env(name, envName); ok {
		*p = splitList(v)
	}
	f.fs.Var(&listValue{p: p}, name, withEnv(usage, envName))
}

type listValue struct {
	p *[]string
	// set is true once the command line gave a value: it replaces the
	// environment's.
	set bool
}

func (v *listValue) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}

func (v *listValue) Set(s string) error {
	if !v.set {
		*v.p, v.set = nil, true
	}
	*v.p = append(*v.p, splitList(s)...)
	return nil
}

func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// enumVar is a string flag restricted to allowed values; a wrong value is
// refused with the list. An empty default means "not set".
func (f *flags) enumVar(p *string, name string, allowed []string, usage string) {
	f.fs.Var(&enumValue{p: p, allowed: allowed}, name, usage+" (one of "+strings.Join(allowed, ", ")+")")
}

// alias registers short as another name of the bool flag long (-v for
// --verbose); help shows them on one line.
func (f *flags) alias(short, long string, p *bool) {
	f.fs.BoolVar(p, short, false, "")
	if f.aliases == nil {
		f.aliases = map[string]string{}
	}
	f.aliases[long] = short
}

// enumValue is a flag.Value accepting one of a fixed set of strings.
type enumValue struct {
	p       *string
	allowed []string
}

func (e *enumValue) String() string {
	if e == nil || e.p == nil {
		return ""
	}
	return *e.p
}

func (e *enumValue) Set(s string) error {
	if slices.Contains(e.allowed, s) {
		*e.p = s
		return nil
	}
	// A pipeline's name of an environment (--env prod) is taken for the
	// one it means, when that is allowed here.
	if m := cmp.Or(diag.Suggest(s, e.allowed), reply.EnvMeant(s)); slices.Contains(e.allowed, m) {
		return fmt.Errorf("must be one of %s (did you mean %q?)", strings.Join(e.allowed, ", "), m)
	}
	return fmt.Errorf("must be one of %s", strings.Join(e.allowed, ", "))
}

// errHelp is returned by parse after --help was printed.
var errHelp = errors.New("help shown")

// parse parses args and returns the positional arguments. It is the one
// command-line parser of agenttest: every subcommand reads its flags
// through it, so they all take `--flag value`, `--flag=value` and the
// one-dash forms alike, may put flags after positional arguments
// (`agenttest run suites/ --tags @smoke`), and stop at `--`. A bool flag
// takes no separate value (`--fail-fast`, `--fail-fast=false`); one
// followed by true or false is refused.
//
// However it ends, the config file given so far is noted (noteConfig).
//
// An unknown flag ends the parse with a did-you-mean, or, for a flag of
// other commands, names them; bad values are all
// collected and returned together (the problems of environment defaults
// are in f.problems, for the command's Validate). Every problem is a usage
// error (exit 2). -h/--help prints the
// help to Stdout and returns errHelp.
func (f *flags) parse(args []string) ([]string, error) {
	defer f.noteConfig()
	var positional, problems []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			positional = append(positional, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		written, _, _ := strings.Cut(arg, "=")
		if name == "" || name[0] == '-' {
			return nil, f.usageError(fmt.Sprintf("bad flag syntax: %s", arg))
		}
		if name == "h" || name == "help" {
			io.WriteString(f.st.Stdout, f.help())
			return nil, errHelp
		}
		fl := f.fs.Lookup(name)
		if fl == nil {
			msg := "unknown flag " + written
			// One letter is near every other one: -x suggested -v,
			// and spelt it --v, as no help writes it.
			if s := diag.Suggest(name, f.names()); s != "" && len(name) > 1 {
				dashes := "--"
				if len(s) == 1 {
					dashes = "-"
				}
				msg += fmt.Sprintf(" (did you mean %s%s?)", dashes, s)
			} else if owners := flagOwners(f.st, name); len(owners) > 0 {
				// A flag of another command (agenttest list --target x,
				// agenttest history --baseline live): not a typo, the
				// wrong command.
				msg += fmt.Sprintf(" (a flag of %s, not of %s)", diag.List(owners, "and"), f.cmd)
			}
			return nil, f.usageError(msg)
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() && !hasValue {
			// A script's "--github false" would make false a path, and
			// the flag true: the opposite of what it says.
			if i+1 < len(args) && (args[i+1] == "true" || args[i+1] == "false") {
				return nil, f.usageError(fmt.Sprintf("%s takes no separate value: write %s=%s (or ./%s for a path)", written, written, args[i+1], args[i+1]))
			}
			value, hasValue = "true", true
		}
		if !hasValue {
			if i+1 >= len(args) {
				problems = append(problems, fmt.Sprintf("%s needs a value", written))
				continue
			}
			// "--tags --name x" lost its value: taking --name for it
			// would make x a path.
			if next, ok := f.flagArg(args[i+1]); ok {
				problems = append(problems, fmt.Sprintf("%s needs a value, and %s is a flag (write %s=%s for that value)", written, next, written, args[i+1]))
				continue
			}
			i++
			value = args[i]
		}
		if without, ok := f.files[name]; ok && value == "" {
			problems = append(problems, fmt.Sprintf("%s is empty: name a file, or leave %s out %s", written, written, without))
		} else if err := f.fs.Set(name, value); err != nil {
			problems = append(problems, fmt.Sprintf("%s %q: %s", written, value, valueProblem(fl, value, err)))
		}
	}
	if len(problems) > 0 {
		return nil, f.usageError(problems...)
	}
	f.fs.VisitAll(func(fl *flag.Flag) {
		if p, ok := f.envProblems[fl.Name]; ok && !f.onCommandLine(fl.Name) {
			f.problems = append(f.problems, p)
		}
	})
	return positional, nil
}

// flagArg says whether arg is written as a flag of the command (or as
// -h/--help), and how, without its value.
func (f *flags) flagArg(arg string) (string, bool) {
	if len(arg) < 2 || arg[0] != '-' {
		return "", false
	}
	written, _, _ := strings.Cut(arg, "=")
	name := strings.TrimPrefix(written[1:], "-")
	return written, name == "h" || name == "help" || f.fs.Lookup(name) != nil
}

// usage is the usage error of this command: one line per problem, then
// the hint to its help.
func (f *flags) usageError(problems ...string) error {
	return usageProblems(f.cmd, problems...)
}

// names lists the flags of the command, for did-you-mean.
func (f *flags) names() []string {
	var out []string
	f.fs.VisitAll(func(fl *flag.Flag) { out = append(out, fl.Name) })
	return out
}

// valueProblem says what is wrong with a flag value. The flag package's
// own errors are "parse error" for every kind; say what was expected.
func valueProblem(fl *flag.Flag, value string, err error) string {
	g, ok := fl.Value.(flag.Getter)
	if !ok {
		return err.Error() // enumValue lists the allowed values
	}
	switch g.Get().(type) {
	case bool:
		return "not true or false"
	case int, int64:
		return "not a whole number"
	case float64:
		return "not a number"
	case time.Duration:
		return notDuration(value)
	}
	return err.Error()
}

// notDuration says that v is not a duration, with the one it most likely
// meant when it is days ("2d", which Go's durations do not have: 48h) or
// a number without a unit.
func notDuration(v string) string {
	const msg = "not a duration such as 30s or 2m"
	if n, err := strconv.ParseFloat(strings.TrimSuffix(v, "d"), 64); err == nil && n > 0 && !math.IsInf(n, 1) {
		if strings.HasSuffix(v, "d") {
			return fmt.Sprintf("%s (no unit of days: write %gh)", msg, n*24)
		}
		return fmt.Sprintf("%s (a number needs a unit: %ss, %sm or %sh)", msg, v, v, v)
	}
	return msg
}

// isSet says whether a flag was given on the command line or by its
// environment variable; config defaults apply only to flags that were not.
func (f *flags) isSet(name string) bool {
	return f.fromEnv[name] || f.onCommandLine(name)
}

// help renders the --help text: the command's usage, then its flags in
// the --long form users type.
func (f *flags) help() string {
	var b bytes.Buffer
	b.WriteString(f.usage)
	n := 0
	f.fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return b.String() // a command without flags (version)
	}
	b.WriteString("\nFlags:\n")
	short := map[string]bool{}
	for _, s := range f.aliases {
		short[s] = true
	}
	f.fs.VisitAll(func(fl *flag.Flag) {
		if short[fl.Name] {
			return
		}
		placeholder, usage := flag.UnquoteUsage(fl)
		b.WriteString("  ")
		if s, ok := f.aliases[fl.Name]; ok {
			b.WriteString("-" + s + ", ")
		}
		b.WriteString("--" + fl.Name)
		if placeholder != "" {
			b.WriteString(" " + placeholder)
		}
		b.WriteString("\n      " + usage)
		switch {
		case fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" && fl.DefValue != "0s":
			// A URL from the environment may carry credentials.
			fmt.Fprintf(&b, " (default %s)", platform.RedactURL(fl.DefValue))
		case isSecret(fl) && f.fromEnv[fl.Name]:
			b.WriteString(" (set, not shown)")
		}
		b.WriteString("\n")
	})
	return b.String()
}

// commandFlags builds the flag set of every command that has flags, in
// the order of the top help, parsing nothing and reading only the
// environment: each command's own builder, so that what it says of
// another command's flag is that command's real flag set.
func commandFlags(st *State) []*flags {
	return []*flags{
		runFlags(st, &runOptions{}),
		lintFlags(st, &lintOptions{}),
		listFlags(st, &listOptions{}),
		simFlags(st, &simOptions{}),
		webhooksFlags(st, &webhooksOptions{}),
		historyFlags(st, new(bool)),
		coverageFlags(st, new(bool), &outputs{}),
		mergeFlags(st, &mergeOptions{}),
		compareFlags(st, &compareOptions{}),
		gateFlags(st, &gateOptions{}),
		versionFlags(st, new(bool)),
	}
}

// flagOwners names the commands that have the flag name.
func flagOwners(st *State, name string) []string {
	var out []string
	for _, f := range commandFlags(st) {
		if f.fs.Lookup(name) != nil {
			out = append(out, f.cmd)
		}
	}
	return out
}

// What leaving out a flag that names a file does, said when it is given
// empty (fileVar).
const (
	withoutReport = "to write no report"
	withoutConfig = "to read ./" + config.DefaultPath + " when present"
	withoutAgents = "to serve the example agents"
)

// withoutRunReport is withoutReport for a report of run, which the
// config file's run section may name.
func withoutRunReport(name string) string {
	return "to write the report the config file's run." + name + " names, or none"
}

// noteConfig notes the config file of a command that takes one (--config,
// or AGENTTEST_CONFIG) in its State, for the masking of the error it ends
// with (maskMessage): a value refused beside it may quote a key held in a
// variable only that file names.
func (f *flags) noteConfig() {
	if fl := f.fs.Lookup("config"); fl != nil {
		f.st.config = fl.Value.String()
	}
}
