package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
)

// xmlText makes s safe to put anywhere in an XML 1.0 document: escape
// sequences are stripped first (so a colour code does not leave "[31m"
// behind), then every rune outside the XML Char production, including
// invalid UTF-8, becomes U+FFFD. encoding/xml escapes attributes and text
// but writes CDATA sections verbatim, and go-junit-report does not sanitise
// on the path we use (go-junit-report#138).
func xmlText(s string) string {
	s = escape.StripANSI(s)
	clean := utf8.ValidString(s)
	for _, r := range s {
		if !clean {
			break
		}
		clean = isXMLChar(r)
	}
	if clean {
		return s
	}
	// strings.Map hands invalid bytes over as utf8.RuneError and writes
	// U+FFFD in their place.
	return strings.Map(func(r rune) rune {
		if isXMLChar(r) {
			return r
		}
		return unicode.ReplacementChar
	}, s)
}

// xmlLine is xmlText of a text that must stay on one line (an attribute,
// a property, a message): its controls and invisible characters escaped as
// the console writes them (style.flat), so that a CI server shows a bidi
// override, a zero-width space or a carriage return for what it is, and a
// property stays one line of the head of <system-out>.
func xmlLine(s string) string { return xmlText(fileStyle.flat(s)) }

// isXMLChar reports whether r is in the Char production of XML 1.0. A
// utf8.RuneError reaching here stands for an invalid byte: it is replaced by
// the same rune, which is harmless.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// clean prepares user text (a reply, a name, an error message) for
// display: files get no escape sequences at all, so ANSI codes are
// stripped; a terminal shows them escaped, since an agent that sends them
// has a bug worth seeing.
func (s style) clean(text string) string {
	if s.file {
		return escape.StripANSI(text)
	}
	return text
}

// needsQuote reports whether s should be shown with %q rather than as is:
// when it is empty, has leading or trailing white space, or holds control
// or invisible characters other than newlines, the reader could not tell
// what the value is from its raw form. So too, with joiners (the texts of
// the failure differ in them: joinersDiffer), when it holds a joiner or a
// variation selector.
func needsQuote(s string, joiners bool) bool {
	if s == "" || !utf8.ValidString(s) {
		return true
	}
	if strings.TrimSpace(s) != s {
		return true
	}
	return escape.Needed(s, "\n") || joiners && strings.ContainsFunc(s, escape.Joiner)
}

// quoteValue is s as %q writes it, but for its joiners and variation
// selectors (escape.Joiner): escaped when joiners, else as they are, as
// the transcript shows them. %q escapes the joiners, which Go counts as
// format characters, and writes the variation selectors as they are, so
// a quoted "👩‍💻 " would show its emoji as an escape beside the same
// emoji drawn in the other value.
func quoteValue(s string, joiners bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for {
		i := strings.IndexFunc(s, escape.Joiner)
		if i < 0 {
			i = len(s)
		}
		q := strconv.Quote(s[:i])
		b.WriteString(q[1 : len(q)-1])
		if i == len(s) {
			break
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		if joiners {
			b.WriteString(escape.Runes(s[i:i+n], escape.Joiner))
		} else {
			b.WriteString(s[i : i+n])
		}
		s = s[i+n:]
	}
	b.WriteByte('"')
	return b.String()
}

// joinersDiffer reports whether the texts a failure compared differ in
// text that holds a joiner or a variation selector (escape.Joiner): the
// changes of their diff hold one. Those characters are invisible, so
// "Hel\u200dlo" and "Hello", or an emoji sequence and its emoji side by
// side, would look the same: the failure's values then write them as
// escapes, as the diff writes them in what it marks. Otherwise the
// values keep them, as the transcript does, and an emoji or a Persian
// word both texts share is drawn as it should be.
func joinersDiffer(f assert.Failure) bool {
	has := func(s string) bool { return strings.ContainsFunc(s, escape.Joiner) }
	if !has(f.Expected) && !has(f.Nearest) && !has(f.Actual) {
		return false
	}
	for _, c := range assert.DiffFor(f, f.DiffBase(), f.Actual).Changes {
		if c.Op != assert.Same && has(c.Text) {
			return true
		}
	}
	return false
}

// showValue renders a compared value: quoted when white space, control
// or invisible characters matter (needsQuote), as an indented block when
// it spans lines, else raw. indent prefixes the continuation lines of a
// block; joiners is joinersDiffer of the failure.
func (st style) showValue(s, indent string, joiners bool) string {
	s = st.clean(s)
	if needsQuote(s, joiners) {
		return quoteValue(s, joiners)
	}
	if strings.Contains(s, "\n") {
		return "|\n" + indentLines(s, indent)
	}
	return s
}

// A compared value longer than longValue runes is shown by its first
// longHead: a reply of kilobytes would otherwise be printed whole twice
// in a failure (under actual: and in the transcript), and its expected
// text a third time, burying the diff between them, which shows where
// they differ. The JSON report holds both whole, the transcript the reply.
const (
	longValue = 1000
	longHead  = 200
)

// cutLong is s cut to its first longHead runes and its length in runes,
// when it is longer than longValue runes; long is false, and head s,
// when it is not.
func cutLong(s string) (head string, n int, long bool) {
	if n = utf8.RuneCountInString(s); n <= longValue {
		return s, n, false
	}
	return firstRunes(s, longHead), n, true
}

// showLong is showValue of a value cut to its first longHead runes when
// it is longer than longValue, with how long it is.
func (st style) showLong(s, indent string, joiners bool) string {
	head, n, long := cutLong(s)
	if !long {
		return st.showValue(s, indent, joiners)
	}
	v := st.showValue(head, indent, joiners)
	if strings.Contains(s, "\n") && !strings.HasPrefix(v, "|") && !strings.HasPrefix(v, `"`) {
		// A block stays a block when its head is one line.
		v = "|\n" + indentLines(v, indent)
	}
	return v + fmt.Sprintf("… (%d characters, cut: the diff shows where they differ)", n)
}

// shortValue is a compared value on one line of at most ShortRunes runes
// (then ending in "…"), quoted when its raw form would mislead (needsQuote)
// or when it spans lines, for a one-line summary.
func (st style) shortValue(s string) string {
	s = st.clean(s)
	head := firstRunes(s, ShortRunes)
	cut := len(head) < len(s)
	if needsQuote(s, false) || strings.Contains(s, "\n") {
		head = quoteValue(head, false)
		if cut {
			head = strings.TrimSuffix(head, `"`) + `…"`
		}
	} else if cut {
		head += "…"
	}
	// Quoted, it holds no control character; unquoted it had none.
	return head
}

// firstRunes is s up to its first n runes.
func firstRunes(s string, n int) string { return s[:diag.RuneOffset(s, n)] }

// ShortRunes is the length of a value in a one-line summary: enough for
// the answer of an agent, a node, a state value. history quotes a
// matcher's text as long.
const ShortRunes = 60

// indentLines prefixes every line of s with indent.
func indentLines(s, indent string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = strings.TrimRight(indent, " ")
			continue
		}
		lines[i] = indent + l
	}
	return strings.Join(lines, "\n")
}

// oneLine renders free text (a user message, a reply) on as few lines as
// possible for a transcript: control characters other than newline are
// escaped so that a reply cannot move the cursor or colour the terminal.
func (st style) oneLine(s string) string {
	return oneLine(st.clean(s))
}

// oneLine is style.oneLine without ANSI stripping, for text that is not
// user data.
func oneLine(s string) string {
	if !utf8.ValidString(s) {
		return fmt.Sprintf("%q", s)
	}
	return escape.Controls(s, "\n\t")
}

// flat renders text that must stay on one line (a failure's one-liner, a
// case title, a JUnit message): every control character, newlines
// included, is escaped.
func (st style) flat(s string) string {
	return strings.ReplaceAll(st.oneLine(s), "\n", `\n`)
}

// formatDuration renders a case duration for people: milliseconds below a
// second, tenths of a second above.
func formatDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// seconds renders d as JUnit wants it: seconds with three decimals.
//
// It rounds from the whole microseconds the JSON report keeps (millis),
// in integers: the JUnit that merge writes from a run's JSON is then the
// run's own, where %.3f of d.Seconds() gave 0.005 for a 4.500499ms case
// and 0.004 for the 4.5ms read back (as a float, a hair below 0.0045).
func seconds(d time.Duration) string {
	ms := (max(d.Microseconds(), 0) + 500) / 1000
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// millis renders d in milliseconds for JSON, to the microsecond: simulator
// turns take well under a millisecond, and an integer would round them to 0.
func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// style paints text with SGR colour codes, or leaves it alone when colour is
// off. Colour is decided once by the caller (TTY, NO_COLOR, --no-color).
// It also knows whether the text goes to a file (JUnit), where escape
// sequences are stripped rather than shown.
type style struct {
	color bool
	file  bool
}

// compared is the style of what a failure compared (its expected,
// nearest and actual values and their diff), in a file too: an escape
// sequence escaped, as the console shows it, rather than stripped,
// because there it can be the very difference. Stripped, a reply that
// differed from the expected text only by a colour code read as the
// expected text above an empty diff.
func (st style) compared() style { return style{color: st.color} }

// SGR codes used by the console views.
const (
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrMagenta = "35"
	sgrCyan    = "36"
)

func (s style) paint(code, text string) string {
	if !s.color || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
