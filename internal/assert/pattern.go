package assert

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// RE2Hint is the hint of every invalid regular expression a suite or a
// feature file is refused for.
const RE2Hint = "the syntax is RE2: https://github.com/google/re2/wiki/Syntax"

// CheckPattern reports whether a regular expression as written in a
// scenario will compile when it runs, so that lint can refuse it before
// anything is sent. Its ${...} references stand for literal text at run
// time (expandPattern quotes what they expand to), so a placeholder proves
// the syntax without knowing the value, and a pattern that is broken
// around a reference is caught as early as one without.
//
// The error is the one sentence YAML suites and feature files both print:
// invalid regular expression "(x": missing closing ): `(x` without
// regexp's "error parsing regexp:" prefix, which says nothing to the
// person who wrote the pattern. Where the pattern has references the part
// at fault is left out: it would show the placeholder, not what was
// written.
func CheckPattern(pattern string) error {
	p, _ := expandPattern(pattern, func(string) (string, error) { return "x", nil })
	_, err := regexp.Compile(p)
	if err == nil {
		return nil
	}
	problem := err.Error()
	if se, ok := errors.AsType[*syntax.Error](err); ok {
		problem = string(se.Code)
		if p == pattern {
			problem = fmt.Sprintf("%s: `%s`", se.Code, se.Expr)
		}
	}
	return fmt.Errorf("invalid regular expression %q: %s", pattern, strings.TrimPrefix(problem, "error parsing regexp: "))
}
