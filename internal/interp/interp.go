// Package interp is the ${...} syntax of suites and feature files: ${name}
// for vars, examples columns and captures, ${env:NAME} for the environment,
// and $${ for a literal ${. The scenario loader checks references with it,
// the step compiler checks step arguments with it, and the runner expands
// with it, so the syntax has one definition.
//
//	s, err := interp.Interpolate("table for ${party}", lookup, getenv)
package interp

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// envPrefix marks a reference to the process environment: ${env:NAME}.
const envPrefix = "env:"

// Ref is one ${...} reference found in a string.
type Ref struct {
	Name string
	// Env is set for ${env:NAME}; Name is then NAME.
	Env bool
	// Off is the byte offset of its ${ in the string Scan read, for a
	// loader to report it at its own line and column.
	Off int
}

// SyntaxError is a malformed reference: an unterminated ${ or a name a
// reference may not have. Off is the byte offset of its ${.
type SyntaxError struct {
	Off int
	msg string
}

func (e *SyntaxError) Error() string { return e.msg }

// Offset is the byte offset of the reference err finds malformed (a
// *SyntaxError of Scan or Interpolate), or 0 when err names none.
func Offset(err error) int {
	if se, ok := errors.AsType[*SyntaxError](err); ok {
		return se.Off
	}
	return 0
}

// ValidName reports whether s can name a var, an example column or a
// capture: a letter or underscore, then letters, digits, '_' or '-'.
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'):
		case i > 0 && (('0' <= r && r <= '9') || r == '-'):
		default:
			return false
		}
	}
	return true
}

// validEnvName accepts the names a shell would export.
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'):
		case i > 0 && '0' <= r && r <= '9':
		default:
			return false
		}
	}
	return true
}

// expand walks s once, copying literal text and handing each reference to
// resolve. It is the single definition of the ${...} syntax: `${name}`,
// `${env:NAME}`, and `$${` for a literal `${`. A `$` not followed by `{` is
// literal.
func expand(s string, resolve func(r Ref) (string, error)) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", &SyntaxError{Off: i, msg: fmt.Sprintf("unterminated ${ at offset %d in %q: close it with } or write $${ for a literal ${", i, s)}
			}
			body := s[i+2 : i+2+end]
			r, err := parseRef(body)
			if err != nil {
				return "", &SyntaxError{Off: i, msg: err.Error()}
			}
			r.Off = i
			v, err := resolve(r)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += 2 + end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

func parseRef(body string) (Ref, error) {
	if name, ok := strings.CutPrefix(body, envPrefix); ok {
		if !validEnvName(name) {
			return Ref{}, fmt.Errorf("invalid environment variable name in ${%s}", body)
		}
		return Ref{Name: name, Env: true}, nil
	}
	if !ValidName(body) {
		return Ref{}, fmt.Errorf("invalid variable name in ${%s}: use letters, digits, '_' and '-', starting with a letter or '_'", body)
	}
	return Ref{Name: body}, nil
}

// Scan lists the references of s in order, or the syntax error.
func Scan(s string) ([]Ref, error) {
	var refs []Ref
	_, err := expand(s, func(r Ref) (string, error) {
		refs = append(refs, r)
		return "", nil
	})
	return refs, err
}

// Interpolate expands the references in s: ${name} through lookup (vars and
// captures), ${env:NAME} through getenv, and $${ to a literal ${. The error
// names the reference it could not resolve. A nil getenv treats every
// environment variable as unset. The bytes references add are bounded by
// MaxExpansion.
func Interpolate(s string, lookup func(name string) (string, bool), getenv func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	budget := MaxExpansion
	return expand(s, func(r Ref) (string, error) {
		v, ok := "", false
		switch {
		case r.Env && getenv != nil:
			v, ok = getenv(r.Name)
		case !r.Env && lookup != nil:
			v, ok = lookup(r.Name)
		}
		switch {
		case !ok && r.Env:
			return "", fmt.Errorf("environment variable %s is not set (referenced as ${env:%s})", r.Name, r.Name)
		case !ok:
			return "", fmt.Errorf("unknown variable ${%s}", r.Name)
		}
		if budget -= len(v); budget < 0 {
			ref := r.Name
			if r.Env {
				ref = envPrefix + ref
			}
			return "", fmt.Errorf("the text expands to more than %d bytes (at ${%s})", MaxExpansion, ref)
		}
		return v, nil
	})
}

// MaxExpansion bounds the bytes that references add to one text when
// Interpolate expands it: a var of 1 MiB (MaxVarBytes) written a thousand
// times in one say: made a string of a gigabyte, and the run ran out of
// memory. It leaves room for a whole reply of the default size limit,
// captured, to be sent back a few times.
const MaxExpansion = 4 << 20

// MaxVarBytes bounds the bytes that ${...} references add to the values
// of one scenario's vars when ResolveVars expands them.
const MaxVarBytes = 1 << 20

// ErrVarCycle and ErrVarsTooLarge are the errors of vars that cannot
// expand whatever the environment holds: a var that refers to itself,
// and vars that add more than MaxVarBytes. ResolveVars wraps them in a
// *VarError; lint reports them at the var (errors.Is).
var (
	ErrVarCycle     = errors.New("refers to itself through ${...}")
	ErrVarsTooLarge = fmt.Errorf("the vars expand to more than %d bytes", MaxVarBytes)
)

// VarError is ResolveVars' error: Var could not be expanded because of
// Err (which names the vars it went through).
type VarError struct {
	Var string
	Err error
}

func (e *VarError) Error() string { return "var " + e.Var + ": " + e.Err.Error() }
func (e *VarError) Unwrap() error { return e.Err }

// ResolveVars expands the references inside var values: a var may use
// ${env:NAME} and other vars. Each var is expanded once, in dependency
// order; a cycle or an unknown reference is an error naming the var. A nil
// getenv treats every environment variable as unset.
//
// The bytes that references add to the values, all vars together, are
// bounded by MaxVarBytes: vars that refer to each other several times
// double or quadruple at each step, so a suite of a few hundred bytes
// could stand for gigabytes (eleven vars of four references each, over
// 100 bytes, took 1.3 GB) and take the run down.
func ResolveVars(vars map[string]string, getenv func(string) (string, bool)) (map[string]string, error) {
	budget := MaxVarBytes
	out := make(map[string]string, len(vars))
	visiting := make(map[string]bool)
	var resolve func(name string) (string, error)
	resolve = func(name string) (string, error) {
		if v, ok := out[name]; ok {
			return v, nil
		}
		if visiting[name] {
			return "", fmt.Errorf("var %s %w", name, ErrVarCycle)
		}
		visiting[name] = true
		v, err := expand(vars[name], func(r Ref) (string, error) {
			var v string
			var err error
			switch _, ok := vars[r.Name]; {
			case r.Env:
				v, err = Interpolate("${"+envPrefix+r.Name+"}", nil, getenv)
			case !ok:
				return "", fmt.Errorf("unknown variable ${%s}", r.Name)
			default:
				v, err = resolve(r.Name)
			}
			if err != nil {
				return "", err
			}
			if budget -= len(v); budget < 0 {
				return "", fmt.Errorf("%w (at ${%s}): a var refers to others that refer to others many times over", ErrVarsTooLarge, r.Name)
			}
			return v, nil
		})
		if err != nil {
			return "", &VarError{Var: name, Err: err}
		}
		out[name] = v
		return v, nil
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names) // the first error reported must not depend on map order
	for _, name := range names {
		if _, err := resolve(name); err != nil {
			return nil, err
		}
	}
	return out, nil
}
