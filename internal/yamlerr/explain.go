package yamlerr

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
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
//   - a value that contains ": ", which YAML reads as a nested key;
//   - a [ or { never closed, which yaml.v3 reports at a line above it in
//     terms of the ',' or ']' it wanted, and a ] or } that closes
//     nothing, which it reports as a key it did not find.
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
	if name, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		// yaml.v3 says no line for an alias of no anchor: it is on the
		// first line whose leading part fails so.
		name = strings.TrimSuffix(name, "' referenced")
		ln := firstFailingLine(lines, 0)
		col := aliasCol(text(ln), name)
		if ln == 0 || col == 0 {
			return pos, ""
		}
		pos.Line, pos.Col = ln, col
		hint := fmt.Sprintf("no &%s is defined above this line: an alias (*%s) can only repeat an anchor (&%s) written before it", name, name, name)
		if near := diag.Suggest(name, anchorsIn(lines[:ln-1])); near != "" {
			hint += fmt.Sprintf("; did you mean *%s?", near)
		}
		return pos, hint
	}
	switch msg {
	case "did not find expected key", "did not find expected '-' indicator":
		// yaml.v3 names no line for a problem on the first line, where
		// Diagnostic places it: the line at fault may be pos.Line itself.
		ln := firstFailingLine(lines, pos.Line-1)
		if ln == 0 {
			return pos, ""
		}
		pos.Line, pos.Col = ln, indentCol(text(ln))
		if _, stray, _, _ := flowBrackets(lines); len(stray) > 0 {
			for _, b := range stray {
				if b.line == ln {
					pos.Col = b.col
					return pos, fmt.Sprintf("this %c closes no %c: remove it", b.ch, opener(b.ch))
				}
			}
		}
		switch {
		case msg != "did not find expected key":
			return pos, hintItemIndent
		case strings.HasPrefix(strings.TrimLeft(text(ln), " "), "-"):
			return pos, hintListIndent
		}
		return pos, hintKeyIndent
	case "did not find expected ',' or ']'", "did not find expected ',' or '}'":
		want := '['
		if strings.HasSuffix(msg, "'}'") {
			want = '{'
		}
		var at *bracket
		unclosed, _, inValue, colonIn := flowBrackets(lines)
		for i, b := range unclosed {
			// yaml.v3 reports the line of the context the flow is in,
			// at or above the bracket. A bracket the scan takes for a
			// flow's but that is the text of a plain value carried on
			// to its line ("a: see\n  [1") leaves the lines up to it
			// valid YAML.
			if b.ch == want && b.line >= pos.Line && parseError([]byte(strings.Join(lines[:b.line], ""))) != nil {
				at = &unclosed[i]
				break
			}
		}
		if at == nil {
			for _, b := range inValue {
				if b.line >= pos.Line {
					pos.Line, pos.Col = b.line, b.col
					return pos, fmt.Sprintf("inside [ ] or { }, a value that holds %c must be quoted: write it in single quotes", b.ch)
				}
			}
			// The parser stops at the first such value, at or below the
			// line it names: the first one the scan found.
			if len(colonIn) > 0 {
				b := colonIn[0]
				pos.Line, pos.Col = b.line, b.col
				value := []rune(text(b.line))[b.col-1:]
				if end := slices.IndexFunc(value, func(r rune) bool { return strings.ContainsRune(",]}", r) }); end >= 0 {
					value = value[:end]
				}
				quoted := "'" + strings.ReplaceAll(strings.TrimRight(string(value), " "), "'", "''") + "'"
				return pos, "inside [ ] or { }, a value that contains \": \" must be quoted: write it in single quotes (" + quoted + ")"
			}
			return pos, ""
		}
		pos.Line, pos.Col = at.line, at.col
		what := map[rune]string{'[': "list", '{': "mapping"}[want]
		return pos, fmt.Sprintf("this %c is never closed: end the %s with %c", want, what, closer(want))
	case "found character that cannot start any token":
		line := text(pos.Line)
		if col := reservedStart(line); col > 0 {
			pos.Col = col
			word, _, _ := strings.Cut(string([]rune(line)[col-1:]), " ")
			word = strings.TrimRight(word, ",]}")
			return pos, fmt.Sprintf("YAML reserves %c at the start of a value: quote it (%q)", []rune(word)[0], word)
		}
	case "found unknown escape character":
		// A regular expression in double quotes, most often: "^\d+$".
		if col := badEscape(text(max(pos.Line, 1))); col > 0 {
			pos.Line, pos.Col = max(pos.Line, 1), col
		}
		return pos, `in double quotes \ starts an escape (\n, \"): write the text in single quotes, where \ is itself ('^\d+$'), or each \ as \\`
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

// bracket is a bracket of a YAML flow collection, at its line and column.
type bracket struct {
	ch        rune
	line, col int
}

func closer(open rune) rune {
	if open == '[' {
		return ']'
	}
	return '}'
}

func opener(close rune) rune {
	if close == ']' {
		return '['
	}
	return '{'
}

// flowBrackets scans the lines of a YAML file for the brackets of flow
// collections ([a, b] and {k: v}), skipping quoted scalars, comments and
// block scalars' text, and returns those opened and never closed
// (outermost first) and those that close nothing right after a flow
// collection ended on the same line ("tags: [a, b]]"). A bracket inside a
// plain value ("say: see [1]") opens nothing: only one where a value
// starts, or inside a flow, does. It reads the file as a designer wrote
// it, not as a YAML parser does, and serves only to place errors the
// parser has already found. inValue are the brackets inside a plain value
// of a flow ("{matches: ^\d{4}$}"), which YAML does not allow there, each
// at the value's first column. colonIn are the plain values of a flow
// holding ": " ("{contains: Note: hi}"), which YAML reads as a second key
// where the flow wants a ',' or its end, each at the value's first column.
func flowBrackets(lines []string) (unclosed, stray, inValue, colonIn []bracket) {
	var stack []bracket
	// Of the flow item being read: how many ": " it has had, the column
	// of its value, the first character after its first ": ", and of its
	// first character (an item of a list is a key and value, "[a: b]":
	// what a designer means as text is the whole item).
	colons, itemValue, itemFirst := 0, 0, 0
	quote := rune(0)
	block := -1 // lines indented deeper than this are a block scalar's text
	for i, raw := range lines {
		line := strings.TrimRight(raw, "\r\n")
		indent := indentCol(line) - 1
		if block >= 0 {
			if strings.TrimSpace(line) == "" || indent > block {
				continue
			}
			block = -1
		}
		// prev is the last character that is not a space; last the very
		// last one.
		prev, last, escaped, closed := ' ', ' ', false, false
		col, valueCol, closedAt := 0, 0, -1
	scan:
		for _, r := range line {
			col++
			switch {
			case quote == '"' && r == '\\' && !escaped:
				escaped = true
				continue
			case quote != 0:
				if r == quote && !escaped {
					quote, closedAt = 0, col
				}
			case r == '\'' && closedAt == col-1:
				// '' inside single quotes is a quote, not the end.
				quote = r
			case (r == '"' || r == '\'') && strings.ContainsRune(valueStart, prev):
				quote = r
			case r == '#' && last == ' ':
				break scan
			case (r == '[' || r == '{') && (len(stack) > 0 || strings.ContainsRune(valueStart, prev)):
				if len(stack) > 0 && !strings.ContainsRune(itemStart, last) {
					inValue = append(inValue, bracket{r, i + 1, valueCol})
				}
				stack = append(stack, bracket{r, i + 1, col})
				colons, itemValue, itemFirst = 0, 0, 0
			case (r == ']' || r == '}') && len(stack) > 0:
				if stack[len(stack)-1].ch == opener(r) {
					stack = stack[:len(stack)-1]
					closed = len(stack) == 0
				}
				// The item the nested flow was in goes on: its ": " are
				// not counted again.
				colons, itemValue, itemFirst = 0, 0, 0
			case (r == ']' || r == '}') && closed:
				stray = append(stray, bracket{r, i + 1, col})
			case len(stack) == 0:
			case r == ',':
				colons, itemValue, itemFirst = 0, 0, 0
			case r == ' ' && last == ':':
				colons++
				// The second ": " comes after a value's first character.
				if colons == 2 {
					at := itemValue
					if stack[len(stack)-1].ch == '[' {
						at = itemFirst
					}
					colonIn = append(colonIn, bracket{':', i + 1, at})
				}
			case r != ' ' && colons == 0 && itemFirst == 0:
				itemFirst = col
			case r != ' ' && colons == 1 && itemValue == 0:
				itemValue = col
			}
			escaped = false
			if r != ' ' && strings.ContainsRune(itemStart, last) {
				valueCol = col
			}
			last = r
			if r != ' ' {
				prev = r
			}
		}
		if len(stack) == 0 && quote == 0 && blockScalar(line) {
			// The text is indented deeper than the key ("- say: |"), or
			// than the item's - when the item is the text ("- |").
			key := strings.TrimLeft(line, " ")
			for strings.HasPrefix(key, "- ") {
				key = strings.TrimLeft(key[2:], " ")
			}
			block = len(line) - len(key)
			if key[0] == '|' || key[0] == '>' {
				block = indent
			}
		}
	}
	return stack, stray, inValue, colonIn
}

// blockScalar reports whether a line's value starts a block scalar (| or
// >, with their indicators), whose text follows on deeper lines.
func blockScalar(line string) bool {
	v := strings.TrimSpace(line)
	if _, after, ok := strings.Cut(v, ": "); ok {
		v = strings.TrimSpace(after)
	} else {
		v = strings.TrimSpace(strings.TrimPrefix(v, "-"))
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v != "" && (v[0] == '|' || v[0] == '>') && strings.Trim(v[1:], "+-0123456789") == ""
}

// indentCol is the column of a line's first character after its
// indentation.
func indentCol(line string) int {
	return len(line) - len(strings.TrimLeft(line, " ")) + 1
}

// aliasCol returns the column of the alias *name in line (the * not
// followed by more of a name, as yaml.v3 ends one: a ':' too, for an
// alias used as a key, "*x: 1"), or 0.
func aliasCol(line, name string) int {
	for i := 0; ; {
		j := strings.Index(line[i:], "*"+name)
		if j < 0 {
			return 0
		}
		end := i + j + 1 + len(name)
		if end == len(line) || strings.ContainsRune(" \t,]}#:", rune(line[end])) {
			return utf8.RuneCountInString(line[:i+j]) + 1
		}
		i = end
	}
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

// The characters after which YAML starts a value, so that a quote or a
// bracket there opens one (valueStart), and those after which an item of
// a flow starts (itemStart).
const (
	valueStart = " :-,[{"
	itemStart  = " ,[{"
)

// badEscape returns the column of the first backslash of line, inside a
// double-quoted value that starts on it, that begins no escape YAML knows
// (YAML 1.2 §5.7), or 0.
func badEscape(line string) int {
	r := []rune(line)
	in := false
	for i := 0; i < len(r); i++ {
		switch {
		case !in && r[i] == '"' && (i == 0 || strings.ContainsRune(valueStart, r[i-1])):
			in = true
		case in && r[i] == '"':
			in = false
		case in && r[i] == '\\':
			if i+1 < len(r) && !strings.ContainsRune("0abt\tnvfre \"/\\N_LPxuU", r[i+1]) {
				return i + 1
			}
			i++
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

// anchorRE finds what may be an anchor's name: & then the characters an
// anchor may hold (not a space, nor a flow indicator). Text such as
// "R&D" yields a name too, which only adds a candidate to a hint.
var anchorRE = regexp.MustCompile(`&([^\s,\[\]{}]+)`)

// anchorsIn lists the names of the anchors written in lines, for the
// hint of an alias of none.
func anchorsIn(lines []string) []string {
	var names []string
	for _, l := range lines {
		for _, m := range anchorRE.FindAllStringSubmatch(l, -1) {
			names = append(names, m[1])
		}
	}
	return names
}
