package assert

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Limits on the text handed to the diff algorithm. With no timeout (needed
// for reproducible output) the algorithm is quadratic in the worst case, so
// a runaway reply must not stall a run. Single-line text is diffed character
// by character and gets the smaller cap.
const (
	maxInlineDiff = 4 << 10
	maxLineDiff   = 64 << 10
)

// What a diff shows of the text its two sides share: a stretch longer
// than elideOver runes (elideLines lines, line by line) keeps keepRunes
// (keepLines) beside each change and the rest is written "…". A reply of
// kilobytes that differs in one word is printed whole under actual: and
// in the transcript; its diff is where the reader looks for the change.
const (
	elideOver  = 400
	keepRunes  = 80
	elideLines = 8
	keepLines  = 3
)

// ANSI colours of DiffColor.
const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiReset = "\x1b[0m"
)

// Diff renders the difference between expected and actual in plain text,
// for logs, JUnit files and terminals without colour. It returns "" when
// they are equal.
//
// When both are one line, the result is the text with the changes inline,
// git word-diff style, after a semantic cleanup so changes read as words
// rather than scattered characters:
//
//	H[-ello, how can-]{+i! How may+} I help you[- today-]?
//
// When either has several lines, the result compares whole lines:
//
//	--- expected
//	+++ actual
//	  line one
//	- line two
//	+ line 2
//
// unless they share no line but share words (an expectation written over
// several lines against a reply on one): then words, as for one line,
// with a line break that changed written \n:
//
//	Your table is booked.[-\n-]{+ +}See you at 7pm.
func Diff(expected, actual string) string { return diff(expected, actual, false) }

// DiffColor is Diff for terminals that show colour: deletions in red and
// insertions in green. The [-…-]{+…+} markers and the "- "/"+ " prefixes are
// kept, so the output still reads correctly for colour-blind readers and when
// copied out of the terminal.
func DiffColor(expected, actual string) string { return diff(expected, actual, true) }

// DiffTextFor is Diff (DiffColor when color) of a failure's texts, base
// (its DiffBase) against actual, folding case as the check did: through
// DiffFor.
func DiffTextFor(f Failure, base, actual string, color bool) string {
	return render(DiffFor(f, base, actual), color)
}

func diff(expected, actual string, color bool) string {
	return render(DiffOf(expected, actual), color)
}

func render(td TextDiff, color bool) string {
	if len(td.Changes) == 0 && td.Note == "" {
		return ""
	}
	var out string
	if td.Lines {
		out = "--- expected\n+++ actual"
		if td.Note != "" {
			out += "\n(" + td.Note + ")"
		} else {
			out = renderLines(td.Changes, color)
		}
		if td.Truncated {
			out += "\n(diff truncated)"
		}
		return out
	}
	out = renderInline(td.Changes, color)
	if td.Note != "" {
		out = "(" + td.Note + ")"
	}
	if td.Truncated {
		out += " (diff truncated)"
	}
	return out
}

// ChangeOp says where a piece of a diff comes from.
type ChangeOp int8

// The kinds of Change.
const (
	// Same: the text is in both.
	Same ChangeOp = iota
	// Removed: the text is only in the expected value.
	Removed
	// Added: the text is only in the actual value.
	Added
)

// Change is one piece of a TextDiff.
type Change struct {
	Op   ChangeOp
	Text string
}

// TextDiff is the difference between two texts as data, for renderers that
// mark changes up themselves (the HTML report); Diff and DiffColor render
// it as text. It is computed the one way Diff describes: word by word for
// one-line texts, line by line otherwise.
type TextDiff struct {
	// Lines is true when the texts were compared line by line; each
	// Change then holds whole lines, each ending in "\n".
	Lines bool
	// Changes are the pieces in order; empty when the texts are equal or
	// when Note explains the difference instead.
	Changes []Change
	// Note explains a difference that no change shows: "the texts
	// differ only in the final newline", "the texts differ beyond the
	// part compared".
	Note string
	// Truncated is true when the texts were longer than the part compared.
	Truncated bool
}

// DiffOf computes the difference between expected and actual; the zero
// TextDiff when they are equal.
func DiffOf(expected, actual string) TextDiff {
	if expected == actual {
		return TextDiff{}
	}
	return diffOf(expected, actual, false)
}

// DiffFor is the diff of a failure's texts (Failure.DiffBase against
// actual) as every report shows it: DiffOf, or DiffOfFold when the check
// ignored case. Renderers that recompute a failure's diff go through it,
// so that they all follow the one rule.
func DiffFor(f Failure, base, actual string) TextDiff {
	if f.IgnoreCase {
		return DiffOfFold(base, actual)
	}
	return DiffOf(base, actual)
}

// DiffOfFold is DiffOf for a check that ignored case: letters that differ
// only in case are the same (foldString, as the check compared them), so a
// reply written in other capitals shows only its real changes. The pieces
// hold the original texts: removed ones the expected text's, the others
// the actual text's, as the reply really read.
func DiffOfFold(expected, actual string) TextDiff {
	if foldString(expected) == foldString(actual) {
		return TextDiff{}
	}
	return diffOf(expected, actual, true)
}

// diffOf is DiffOf and DiffOfFold of two texts that differ; fold says
// whether letters that differ only in case are the same.
func diffOf(expected, actual string, fold bool) TextDiff {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // deterministic output; the input caps bound the cost
	inline := !strings.Contains(expected, "\n") && !strings.Contains(actual, "\n")
	limit := maxLineDiff
	if inline {
		limit = maxInlineDiff
	}
	// Texts longer than the cap are compared from where they first
	// differ to where they last do: two long replies that differ in a
	// word near their end show that word, not the note that their first
	// kilobytes are the same. The ends they share are kept as they are.
	var head, tail string
	e, a := expected, actual
	if len(e) > limit || len(a) > limit {
		pe, pa, se, sa := commonEnds(e, a, fold, inline)
		head, tail = a[:pa], a[len(a)-sa:]
		e, a = e[pe:len(e)-se], a[pa:len(a)-sa]
	}
	e, et := truncate(e, limit)
	a, at := truncate(a, limit)
	if !inline {
		// Compare lines with their ends normalised, or a last line
		// without "\n" would differ from the same line followed by more.
		e, a = endLine(e), endLine(a)
	}
	// ce and ca are the texts compared: e and a, case folded when fold.
	ce, ca := e, a
	if fold {
		ce, ca = foldString(e), foldString(a)
	}
	td := TextDiff{Lines: !inline, Truncated: et || at}
	switch {
	case ce == ca && td.Truncated:
		// Changes of equal parts would mark nothing in kilobytes of text.
		td.Note = "the texts differ beyond the part compared"
	case inline:
		td.Changes = changes(wordDiff(dmp, ce, ca))
	case ce == ca:
		td.Note = "the texts differ only in the final newline"
	default:
		le, la, lines := dmp.DiffLinesToChars(ce, ca)
		td.Changes = changes(dmp.DiffCharsToLines(dmp.DiffMain(le, la, false), lines))
		if !shareLine(td.Changes) && len(expected) <= maxInlineDiff && len(actual) <= maxInlineDiff {
			// No line in common: a reply on one line against an
			// expectation written over several (a DocString), or the
			// reverse. Every line removed and every line added would
			// hide where the texts differ; words show it, a line break
			// that became a space included.
			// A final line break is no change, as in the line diff.
			we, wa := strings.TrimSuffix(expected, "\n"), strings.TrimSuffix(actual, "\n")
			ie, ia := we, wa
			if fold {
				ie, ia = foldString(we), foldString(wa)
			}
			// Unless the texts share no word either: then whole lines
			// read better than one removed block and one added.
			if words := changes(wordDiff(dmp, ie, ia)); shareWord(words) {
				td, e, a = TextDiff{Changes: words}, we, wa
			}
		}
	}
	if fold {
		unfold(td.Changes, e, a)
	}
	if td.Truncated {
		// What follows the part compared is not what the tail follows.
		tail = ""
	}
	if len(td.Changes) > 0 {
		td.Changes = elide(slices.Concat([]Change{{Same, head}}, td.Changes, []Change{{Same, tail}}), td.Lines)
	}
	return td
}

// commonEnds measures the prefix and the suffix expected and actual share
// (as the check compared them: case folded when fold), in bytes of each:
// pe and pa of the prefix, se and sa of the suffix. Each ends where a
// diff's piece may: at a line's end when !inline, else outside a word,
// so the word diff of what is left sees whole words.
func commonEnds(expected, actual string, fold, inline bool) (pe, pa, se, sa int) {
	same := func(x, y rune) bool { return x == y || fold && foldRune(x) == foldRune(y) }
	for pe < len(expected) && pa < len(actual) {
		x, nx := utf8.DecodeRuneInString(expected[pe:])
		y, ny := utf8.DecodeRuneInString(actual[pa:])
		if !same(x, y) || nx != ny && (x == utf8.RuneError || y == utf8.RuneError) {
			break
		}
		pe, pa = pe+nx, pa+ny
	}
	// Back to a boundary: the shared prefix holds the same runes on both
	// sides, so stepping back rune by rune keeps pe and pa together.
	for pe > 0 && !(boundary(expected[:pe], expected[pe:], inline) && boundary(actual[:pa], actual[pa:], inline)) {
		_, nx := utf8.DecodeLastRuneInString(expected[:pe])
		_, ny := utf8.DecodeLastRuneInString(actual[:pa])
		pe, pa = pe-nx, pa-ny
	}
	re, ra := expected[pe:], actual[pa:]
	for se < len(re) && sa < len(ra) {
		x, nx := utf8.DecodeLastRuneInString(re[:len(re)-se])
		y, ny := utf8.DecodeLastRuneInString(ra[:len(ra)-sa])
		if !same(x, y) || nx != ny && (x == utf8.RuneError || y == utf8.RuneError) {
			break
		}
		se, sa = se+nx, sa+ny
	}
	for se > 0 && !(boundary(re[:len(re)-se], re[len(re)-se:], inline) && boundary(ra[:len(ra)-sa], ra[len(ra)-sa:], inline)) {
		_, nx := utf8.DecodeRuneInString(re[len(re)-se:])
		_, ny := utf8.DecodeRuneInString(ra[len(ra)-sa:])
		se, sa = se-nx, sa-ny
	}
	return pe, pa, se, sa
}

// boundary says whether a diff may cut a text between before and after:
// after a line break for a line diff; for a word diff anywhere but inside
// a word (tokenLen).
func boundary(before, after string, inline bool) bool {
	if !inline {
		return strings.HasSuffix(before, "\n")
	}
	x, _ := utf8.DecodeLastRuneInString(before)
	y, _ := utf8.DecodeRuneInString(after)
	return !isWordRune(x) || !isWordRune(y)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// elide joins the neighbouring pieces of cs both texts share and shortens
// the long ones to what stands beside a change (elideOver, elideLines),
// the rest written "…": a first piece keeps its end, a last its start.
func elide(cs []Change, lines bool) []Change {
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		if c.Text == "" {
			continue
		}
		if n := len(out); n > 0 && c.Op == Same && out[n-1].Op == Same {
			out[n-1].Text += c.Text
			continue
		}
		out = append(out, c)
	}
	for i, c := range out {
		if c.Op != Same {
			continue
		}
		first, last := i == 0, i == len(out)-1
		if lines {
			out[i].Text = elideLinesOf(c.Text, first, last)
		} else {
			out[i].Text = elideRunes(c.Text, first, last)
		}
	}
	return out
}

// elideRunes shortens a shared piece of a word diff longer than elideOver
// runes to keepRunes on each side that touches a change, cut outside a
// word.
func elideRunes(s string, first, last bool) string {
	if utf8.RuneCountInString(s) <= elideOver {
		return s
	}
	var start, end string
	if !first {
		start, _ = cutRunes(s, keepRunes)
		for start != "" && !boundary(start, s[len(start):], true) {
			_, n := utf8.DecodeLastRuneInString(start)
			start = start[:len(start)-n]
		}
	}
	if !last {
		end = s[len(s)-len(lastRunes(s, keepRunes)):]
		for end != "" && !boundary(s[:len(s)-len(end)], end, true) {
			_, n := utf8.DecodeRuneInString(end)
			end = end[n:]
		}
	}
	return start + "…" + end
}

// lastRunes is the end of s of n runes.
func lastRunes(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// elideLinesOf shortens a shared piece of a line diff of more than
// elideLines lines to keepLines on each side that touches a change, the
// others counted on a line of their own.
func elideLinesOf(s string, first, last bool) string {
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	if len(ls) <= elideLines {
		return s
	}
	var keepHead, keepTail int
	if !first {
		keepHead = keepLines
	}
	if !last {
		keepTail = keepLines
	}
	return strings.Join(ls[:keepHead], "") +
		fmt.Sprintf("… %d unchanged lines\n", len(ls)-keepHead-keepTail) +
		strings.Join(ls[len(ls)-keepTail:], "")
}

// shareLine says whether a line diff kept any line of the two texts.
func shareLine(cs []Change) bool {
	return slices.ContainsFunc(cs, func(c Change) bool { return c.Op == Same })
}

// shareWord says whether a word diff kept any word of the two texts: a
// letter or a digit, not only spaces and punctuation.
func shareWord(cs []Change) bool {
	return slices.ContainsFunc(cs, func(c Change) bool {
		return c.Op == Same && strings.ContainsFunc(c.Text, isWordRune)
	})
}

// unfold gives the changes of a diff of the case-folded e and a the
// original texts back: removed pieces e's, the others a's, as the reply
// really read. foldString maps a rune to one rune and keeps a byte that
// is not UTF-8, so each piece's rune count is that of the text it came
// from.
func unfold(cs []Change, e, a string) {
	for i, c := range cs {
		n := utf8.RuneCountInString(c.Text)
		switch c.Op {
		case Removed:
			cs[i].Text, e = cutRunes(e, n)
		case Added:
			cs[i].Text, a = cutRunes(a, n)
		default:
			cs[i].Text, a = cutRunes(a, n)
			_, e = cutRunes(e, n)
		}
	}
}

// cutRunes splits s after its first n runes, a byte that is not UTF-8
// counting as one, as strings.Map and utf8.RuneCountInString count it.
func cutRunes(s string, n int) (head, tail string) {
	i := diag.RuneOffset(s, n)
	return s[:i], s[i:]
}

func changes(diffs []diffmatchpatch.Diff) []Change {
	out := make([]Change, 0, len(diffs))
	for _, d := range diffs {
		op := Same
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = Removed
		case diffmatchpatch.DiffInsert:
			op = Added
		}
		out = append(out, Change{Op: op, Text: d.Text})
	}
	return out
}

// wordDiff diffs two one-line texts word by word: each word (a run of
// letters and digits) and each other character becomes one symbol, the
// symbols are diffed, and the result is turned back into text. A character
// diff, even cleaned up, splits words ("Wh{+at tim+}e[-n-]"); a designer
// reads changes in words ("[-When-]{+What time+}").
func wordDiff(dmp *diffmatchpatch.DiffMatchPatch, a, b string) []diffmatchpatch.Diff {
	var tokens []string
	ids := make(map[string]rune)
	encode := func(s string) string {
		var out []rune
		for len(s) > 0 {
			n := tokenLen(s)
			tok := s[:n]
			s = s[n:]
			r, ok := ids[tok]
			if !ok {
				r = tokenRune(len(tokens))
				ids[tok] = r
				tokens = append(tokens, tok)
			}
			out = append(out, r)
		}
		return string(out)
	}
	ea, eb := encode(a), encode(b)
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMain(ea, eb, false))
	for i := range diffs {
		var t strings.Builder
		for _, r := range diffs[i].Text {
			t.WriteString(tokens[tokenIndex(r)])
		}
		diffs[i].Text = t.String()
	}
	return diffs
}

// tokenLen is the byte length of the first token of s: a word, or one other
// character.
func tokenLen(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !isWordRune(r) {
			if n == 0 {
				return size
			}
			break
		}
		n += size
	}
	return n
}

// Token symbols live in the private use areas, which texts do not use and
// which hold more symbols than the inline cap allows tokens.
const (
	puaStart = 0xE000
	puaSize  = 0x1900
	suppPUA  = 0xF0000
)

func tokenRune(i int) rune {
	if i < puaSize {
		return rune(puaStart + i)
	}
	return rune(suppPUA + i - puaSize)
}

func tokenIndex(r rune) int {
	if r >= suppPUA {
		return int(r) - suppPUA + puaSize
	}
	return int(r) - puaStart
}

func endLine(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// truncate cuts s to at most n bytes at a rune boundary.
func truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

func renderInline(diffs []Change, color bool) string {
	var b strings.Builder
	for _, d := range diffs {
		switch d.Op {
		case Same:
			b.WriteString(d.Text)
		case Removed:
			wrap(&b, "[-", d.Text, "-]", ansiRed, color)
		case Added:
			wrap(&b, "{+", d.Text, "+}", ansiGreen, color)
		}
	}
	return b.String()
}

func wrap(b *strings.Builder, open, text, close, ansi string, color bool) {
	if color {
		b.WriteString(ansi)
	}
	b.WriteString(open)
	b.WriteString(visibleInline(text))
	b.WriteString(close)
	if color {
		b.WriteString(ansiReset)
	}
}

func renderLines(diffs []Change, color bool) string {
	var b strings.Builder
	b.WriteString("--- expected\n+++ actual")
	for _, d := range diffs {
		prefix, ansi := "  ", ""
		switch d.Op {
		case Removed:
			prefix, ansi = "- ", ansiRed
		case Added:
			prefix, ansi = "+ ", ansiGreen
		}
		for _, line := range strings.SplitAfter(d.Text, "\n") {
			if line == "" {
				continue // SplitAfter's empty tail after a final newline
			}
			b.WriteByte('\n')
			if color && ansi != "" {
				b.WriteString(ansi)
			}
			b.WriteString(prefix)
			line = strings.TrimSuffix(line, "\n")
			if d.Op != Same {
				line = visible(line)
			}
			b.WriteString(line)
			if color && ansi != "" {
				b.WriteString(ansiReset)
			}
		}
	}
	return b.String()
}

// Visible is td as Diff and DiffColor show it, for renderers of their own
// (the HTML report): the invisible characters of each changed piece are
// written as Go escapes them (visible), and the pieces both texts share
// are left as they are. td itself is not changed.
func (td TextDiff) Visible() TextDiff {
	if len(td.Changes) == 0 {
		return td
	}
	changes := make([]Change, len(td.Changes))
	for i, c := range td.Changes {
		switch {
		case c.Op == Same:
		case td.Lines:
			c.Text = visible(c.Text)
		default:
			c.Text = visibleInline(c.Text)
		}
		changes[i] = c
	}
	td.Changes = changes
	return td
}

// visible writes the characters of a changed piece of a diff that cannot
// be told apart from others or from nothing as Go escapes them: the
// spaces other than " " (a no-break space, the narrow one of French
// "19 h", an ideographic space), the format characters, and the ones
// internal/escape counts as invisible (a zero-width space, a soft
// hyphen, a byte order mark, and the joiners and variation selectors a
// transcript keeps). Replies differ by them, and unescaped a diff would
// show "[- -]{+ +}" or "{++}", a change no one can see. Text both sides
// share is left as it is, so an emoji sequence that did not change is
// drawn as one.
func visible(s string) string { return escape.Runes(s, invisible) }

// visibleInline is visible for a changed piece of a diff word by word,
// where a line break is a change like a word, written \n: inline, a
// removed or added line end would otherwise break the line it is marked
// in, and one that became a space could not be seen.
func visibleInline(s string) string { return strings.ReplaceAll(visible(s), "\n", `\n`) }

func invisible(r rune) bool {
	return r >= utf8.RuneSelf && (unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || escape.Invisible(r))
}
