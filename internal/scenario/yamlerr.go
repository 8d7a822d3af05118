package scenario

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/diag"
)

// Hints of the YAML syntax errors designers make most; see explainSyntax.
const (
	hintKeyIndent  = "check the indentation of this line: a key lines up with the other keys of its mapping"
	hintListIndent = "check the indentation of this line: a list item's - lines up with the - of the other items"
	hintItemIndent = "check the indentation of this line: a key of a list item lines up with the item's first key, the one after its -"
)

// explainSyntax improves the position and the hint of a YAML syntax error
// of src, whose message is msg (the "yaml: line N:" prefix taken off) at
// pos, for the mistakes yaml.v3 reports in terms of its parser rather than
// of what was written:
//
//   - a line indented to no level of the lines above it: yaml.v3 reports
//     the line where the enclosing block started ("did not find expected
//     key" at turns:, not at the line that is off), so the line at fault
//     is found as the shortest leading part of the file that fails with
//     the same error;
//   - a plain value that starts with @ or a backtick, which YAML reserves;
//   - a value that contains ": ", which YAML reads as a nested key.
//
// Anything else is left as it was.
func explainSyntax(src []byte, msg string, pos diag.Pos) (diag.Pos, string) {
	lines := strings.SplitAfter(string(src), "\n")
	text := func(ln int) string {
		if ln < 1 || ln > len(lines) {
			return ""
		}
		return strings.TrimRight(lines[ln-1], "\r\n")
	}
	switch msg {
	case "did not find expected key", "did not find expected '-' indicator":
		ln := firstFailingLine(lines, pos.Line)
		if ln == 0 {
			return pos, ""
		}
		pos.Line, pos.Col = ln, indentCol(text(ln))
		switch {
		case msg != "did not find expected key":
			return pos, hintItemIndent
		case strings.HasPrefix(strings.TrimLeft(text(ln), " "), "-"):
			return pos, hintListIndent
		}
		return pos, hintKeyIndent
	case "found character that cannot start any token":
		line := text(pos.Line)
		if col := reservedStart(line); col > 0 {
			pos.Col = col
			word, _, _ := strings.Cut(string([]rune(line)[col-1:]), " ")
			word = strings.TrimRight(word, ",]}")
			return pos, fmt.Sprintf("YAML reserves %c at the start of a value: quote it (%q)", []rune(word)[0], word)
		}
	case "mapping values are not allowed in this context":
		line := text(pos.Line)
		if col := valueColon(line); col > 0 {
			pos.Col = col
			value := strings.TrimSpace(string([]rune(line)[col-1:]))
			return pos, fmt.Sprintf("a value that contains \": \" must be quoted: %q", value)
		}
		pos.Col = indentCol(line)
		return pos, hintKeyIndent
	}
	return pos, ""
}

// firstFailingLine returns the number of the line at fault for a parser
// error whose context starts at line from: the smallest n such that the
// first n lines fail with the error the whole file fails with. A parser
// reads forward and stops at the first token it cannot place, so every
// longer leading part fails the same way and a binary search finds n.
// 0 means it cannot be found (the error needs lines the parser reads
// ahead, or is in a later document).
func firstFailingLine(lines []string, from int) int {
	want := parseError([]byte(strings.Join(lines, "")))
	if want == nil || from < 0 || from >= len(lines) {
		return 0
	}
	fails := func(n int) bool {
		err := parseError([]byte(strings.Join(lines[:n], "")))
		return err != nil && err.Error() == want.Error()
	}
	n := from + sort.Search(len(lines)-from, func(i int) bool { return fails(from + 1 + i) }) + 1
	if n > len(lines) || !fails(n) {
		return 0
	}
	return n
}

// parseError is the first syntax error of every document of src.
func parseError(src []byte) error {
	dec := yaml.NewDecoder(strings.NewReader(string(src)))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// indentCol is the column of a line's first character after its
// indentation.
func indentCol(line string) int {
	return len(line) - len(strings.TrimLeft(line, " ")) + 1
}

// reservedStart finds a plain value starting with one of YAML's reserved
// indicators, @ and `: after "key: ", "- ", "[" or ", ". It returns its
// column, or 0.
func reservedStart(line string) int {
	quote := rune(0)
	prev := ' '
	col := 0
	for _, r := range line {
		col++
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case (r == '@' || r == '`') && strings.ContainsRune(" [{,:-", prev):
			return col
		case r == '#' && prev == ' ':
			return 0
		}
		if r != ' ' {
			prev = r
		}
	}
	return 0
}

// valueColon finds a plain value holding ": " after the line's own key
// ("say: note: hi"), and returns the column where the value starts, or 0.
func valueColon(line string) int {
	rest := strings.TrimLeft(line, " ")
	rest = strings.TrimPrefix(rest, "- ")
	key, value, ok := strings.Cut(rest, ": ")
	if !ok || strings.ContainsAny(key, `"'{[`) {
		return 0
	}
	trimmed := strings.TrimLeft(value, " ")
	if trimmed == "" || strings.ContainsRune(`"'{[|>`, rune(trimmed[0])) || !strings.Contains(trimmed, ": ") {
		return 0
	}
	return utf8.RuneCountInString(line) - utf8.RuneCountInString(trimmed) + 1
}
