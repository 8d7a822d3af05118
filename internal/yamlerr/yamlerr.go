// Package yamlerr explains the syntax errors of yaml.v3 in the terms of
// what was written: at file:line:col, with a hint where the mistake is a
// common one. yaml.v3 gives a line but no column, and often the line of
// the enclosing block rather than the one at fault.
package yamlerr

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/diag"
)

// yamlLine matches the syntax errors of yaml.v3, which carry a line but no
// column: "yaml: line 3: mapping values are not allowed in this context".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Diagnostic is the error of yaml.v3 decoding src, the text of the file
// named file (UTF-8 without a byte order mark: scenario.Text), as
// agenttest reports it: "invalid YAML: " and the parser's message, at
// the line and column written wrong rather than where the parser noticed,
// with the fix for the mistakes designers make most (explainSyntax). The
// suites, agenttest.yaml and the simulator's agent definitions report
// their syntax errors through it.
func Diagnostic(file string, src []byte, err error) diag.Diagnostic {
	msg := err.Error()
	pos := diag.Pos{File: file}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		pos.Line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
		// yaml.v3 gives no line for bytes its reader refuses (control
		// characters, broken UTF-8); point at the first one instead of at
		// no line at all (found by FuzzMatcher).
		pos.Line, pos.Col = firstUnprintable(src)
	}
	hint := ""
	// yaml.v3 sometimes reports the line of the enclosing context instead
	// of the tab's own line; look at the reported line and its neighbours.
	lines := strings.Split(string(src), "\n")
	for _, ln := range []int{pos.Line, pos.Line + 1, pos.Line - 1} {
		if ln >= 1 && ln <= len(lines) {
			text := strings.TrimSuffix(lines[ln-1], "\r")
			indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
			if i := strings.IndexByte(indent, '\t'); i >= 0 {
				pos.Line, pos.Col = ln, i+1
				hint = "indent with spaces: YAML does not allow tabs in indentation"
				break
			}
		}
	}
	if hint == "" {
		pos, hint = explainSyntax(src, msg, pos)
	}
	return diag.Diagnostic{
		Severity: diag.Error,
		Pos:      pos,
		Message:  "invalid YAML: " + msg,
		Hint:     hint,
	}
}

// firstUnprintable returns the line and column of the first character YAML
// does not allow in a stream (YAML 1.2 §5.1: tab, line breaks and printable
// Unicode only, which holds U+FEFF: yaml.v3 reads a byte order mark
// anywhere), or 1, 1 when there is none.
func firstUnprintable(src []byte) (line, col int) {
	line, col = 1, 1
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		printable := r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0x7e) || r == 0x85 ||
			(r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || r >= 0x10000
		if (r == utf8.RuneError && size <= 1) || !printable {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return 1, 1
}
