package secret

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/escape"
)

// MinLen is the shortest key accepted. A shorter one is too likely to occur
// in ordinary text (an agent's reply, a node name), where redacting it
// would garble what the reports show, and a guessable key is no secret.
const MinLen = 12

// Mask replaces every form of a key.
const Mask = "[REDACTED]"

// CheckKey says what is wrong with a key, or returns nil. what names it in
// the message ("build_key", "AGENTTEST_BUILD_KEY"); the key itself never
// appears there.
func CheckKey(what, key string) error {
	n := utf8.RuneCountInString(key)
	switch {
	case !utf8.ValidString(key):
		return fmt.Errorf("%s is not valid UTF-8", what)
	case n < MinLen:
		chars := "characters"
		if n == 1 {
			chars = "character"
		}
		return fmt.Errorf("%s is %d %s long; keys shorter than %d characters are refused, since they cannot be told apart from ordinary text in replies and reports (use the full key the platform issued)", what, n, chars, MinLen)
	}
	// A key is printed nowhere, but the text around it is printed
	// escaped (internal/escape): a key holding a character escaping
	// rewrites (a joiner too, in a failure's values) would take a form
	// the redactor does not know.
	if escape.Needed(key, "") || strings.ContainsFunc(key, escape.Joiner) {
		return fmt.Errorf("%s holds a control character or an invisible formatting one, which an HTTP header cannot carry or a terminal would hide (check for a stray newline or a character pasted along with the key)", what)
	}
	if strings.TrimSpace(key) != key {
		return fmt.Errorf("%s starts or ends with white space (check for a stray space or newline)", what)
	}
	return nil
}

// Redactor finds and masks keys. Build it with New, or with With or
// Derive from another; it is safe for concurrent use. It can learn a key
// it was not built with (Learn): a secret the platform issues at run
// time, such as a webhook endpoint's signing secret, is masked by
// everything that holds the redactor from the moment it is learnt, so no
// second redactor of the late secrets is needed.
type Redactor struct {
	// cur is the table the scans use. A scan loads it once, so it sees
	// one key set throughout; Learn and a With redactor's catching up
	// store a new table, never change one.
	cur atomic.Pointer[table]
	// mu serialises the stores of cur.
	mu sync.Mutex
	// base is the redactor r was made from by With or Derive, nil for
	// New's: r masks every key base masks, those base learns later too.
	base *Redactor
	// own are the keys r adds to base's: New's or With's, and those
	// learnt. Read and written under mu.
	own []string
	// whole is set for a redactor of Derive's: its table is built whole
	// over its base's keys, so its scans skip as New's do.
	whole bool
}

// table is the compiled forms of a key set. It is never changed once
// built: scans read it without locks.
type table struct {
	// keys are the keys the table masks, its base's too.
	keys []string
	// from is the table of the base redactor this one extends (With),
	// nil for New's: when the base's table is another, the base learnt a
	// key and this one is rebuilt on its new table.
	from *table
	pats []pattern
	// byFirst lists, per byte, the patterns that can start with it.
	byFirst [256][]int32
	// pairs is a bitset of the two-byte sequences any pattern can start
	// with: the scan's filter, so most positions cost one lookup.
	pairs [1 << 16 / 64]uint64
	// inner is a bitset of the two-byte sequences a match can hold
	// anywhere, and minLen the fewest bytes a match spans: a text whose
	// pairs at every minLen-1 positions are all outside inner holds no
	// match, which lets the scan skip ahead (find). Built by newTable,
	// and shared by the tables extend makes (read only from then on).
	inner  *[1 << 16 / 64]uint64
	minLen int
	// reach is the most bytes a match can span, which is also the most
	// a match reads past where it starts (match follows every unit's
	// longest form at most): a text that changed only from position c
	// on can hold a new match only from c-reach+1 on (scanFrom).
	reach int
	// whole is set on a table newTable built: one over all its keys,
	// whose scans skip.
	whole bool
	// escBreaks is set when a pattern has a form with a JSON-escaped
	// line break (wrappedUnit): inner leaves those forms out, since their
	// pairs (an n before every base64 character) are everywhere in text,
	// and find tries every start of a text that holds one.
	escBreaks bool
}

// Maskable returns the keys CheckKey accepts, in order, each once: the
// secrets to mask before they are checked, or beside one that is refused,
// whose problem is said elsewhere. A redactor takes none of the others.
func Maskable(keys ...string) []string {
	var out []string
	for _, k := range keys {
		if CheckKey("", k) == nil && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// New builds a redactor for keys. Empty keys are skipped; any other key
// must pass CheckKey. With no keys the redactor changes nothing.
func New(keys ...string) (*Redactor, error) {
	t, err := newTable(keys)
	if err != nil {
		return nil, err
	}
	r := &Redactor{own: slices.Clone(keys)}
	r.cur.Store(t)
	return r, nil
}

// newTable builds the table of keys, with the pairs the scan skips by.
func newTable(keys []string) (*table, error) {
	t := &table{inner: new([1 << 16 / 64]uint64), whole: true}
	// Room for the distinct units of a few keys: growing the map as it
	// filled was a twentieth of the build.
	if err := t.addKeys(keys, make(map[unitID]*unitEdges, 64*max(1, len(keys)))); err != nil {
		return nil, err
	}
	return t, nil
}

// With returns a redactor of r's keys and keys: those r learns later
// too. r's patterns are shared, so only the new keys' forms are built: a
// client that adds a short-lived token to its keys for each session pays
// for the token alone, and a key r already has costs nothing. A
// redactor that adds keys scans every start: the pairs find skips by are
// built by New only, since for a session's token they cost more to build
// than they save its scans. r is not changed; a nil r has no keys.
func (r *Redactor) With(keys ...string) (*Redactor, error) {
	base := r.current()
	t, err := base.extend(keys)
	if err != nil {
		return nil, err
	}
	out := &Redactor{own: slices.Clone(keys)}
	if r != nil {
		out.base, t.from = r, base
	}
	out.cur.Store(t)
	return out, nil
}

// Derive returns a redactor of r's keys and keys, those r learns later
// too, as With does, but built whole: its scans skip as New's do, at the
// cost of building every pattern again when it is made and whenever r
// learns a key. It suits a redactor that scans for as long as a command
// runs (a platform client's, over every reply), where With suits one
// that lives for a session. r is not changed; a nil r has no keys.
func (r *Redactor) Derive(keys ...string) (*Redactor, error) {
	if r == nil {
		return New(keys...)
	}
	out := &Redactor{own: slices.Clone(keys), base: r, whole: true}
	t, err := out.build(out.own)
	if err != nil {
		return nil, err
	}
	out.cur.Store(t)
	return out, nil
}

// extend returns a table of t's keys and keys; t is not changed, and a
// nil t has no keys.
func (t *table) extend(keys []string) (*table, error) {
	out := &table{}
	if t != nil {
		out.keys = slices.Clip(t.keys)
		out.pats = slices.Clip(t.pats)
		out.pairs = t.pairs
		out.inner = t.inner
		out.minLen = t.minLen
		out.reach = t.reach
		for c, l := range t.byFirst {
			// Clipped: add appends to a copy, never into t's lists.
			out.byFirst[c] = slices.Clip(l)
		}
	}
	if err := out.addKeys(keys, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// Learn adds key to the keys r masks, and to those of every redactor
// made from r by With. A scan under way when it is learnt finishes with
// the keys it started with. what names the key in the error of one
// CheckKey refuses ("the webhook endpoint's signing secret"); the key
// itself never appears there. A nil r cannot learn: there is no
// redactor to hold the key.
func (r *Redactor) Learn(what, key string) error {
	if r == nil {
		return fmt.Errorf("%s: no redactor to learn it", what)
	}
	if err := CheckKey(what, key); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.cur.Load().keys, key) {
		return nil
	}
	own := append(slices.Clip(r.own), key)
	t, err := r.build(own)
	if err != nil {
		return err // checked: not reached
	}
	r.own = own
	r.cur.Store(t)
	return nil
}

// build is the table of own over r's base; r.mu is held. A redactor of
// New's or Derive's is rebuilt whole, so it keeps the pairs its scans
// skip by.
func (r *Redactor) build(own []string) (*table, error) {
	if r.base == nil {
		return newTable(own)
	}
	base := r.base.current()
	var t *table
	var err error
	switch {
	case r.whole && base.whole && !slices.ContainsFunc(own, func(k string) bool { return k != "" && !slices.Contains(base.keys, k) }):
		// own adds no key to a base built whole (a client's keys are
		// its command's already): the table would be base's again, key
		// for key and pattern for pattern. Its copy shares what tables
		// never change once built, and from is the copy's own.
		cp := *base
		t = &cp
	case r.whole:
		t, err = newTable(slices.Concat(base.keys, own))
	default:
		t, err = base.extend(own)
	}
	if err != nil {
		return nil, err
	}
	t.from = base
	return t, nil
}

// current is the table r scans with: its own, rebuilt first when its
// base learnt a key since it was built. nil for a nil r.
func (r *Redactor) current() *table {
	if r == nil {
		return nil
	}
	t := r.cur.Load()
	if r.base == nil || t.from == r.base.current() {
		return t
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t = r.cur.Load()
	if base := r.base.current(); t.from != base {
		// own passed CheckKey when r was made, and base's keys when
		// they were learnt: build does not fail.
		if nt, err := r.build(r.own); err == nil {
			t = nt
			r.cur.Store(t)
		}
	}
	return t
}

// addKeys adds the patterns of keys; every problem is returned at once.
// With a nil memo, the scan no longer skips (add).
func (r *table) addKeys(keys []string, memo map[unitID]*unitEdges) error {
	var errs []error
	seen := map[string]bool{}
	for i, k := range keys {
		if k == "" || seen[k] || slices.Contains(r.keys, k) {
			continue
		}
		seen[k] = true
		if err := CheckKey(fmt.Sprintf("key %d", i+1), k); err != nil {
			errs = append(errs, err)
			continue
		}
		r.keys = append(r.keys, k)
		for _, p := range keyPatterns(k) {
			r.add(p, memo)
		}
	}
	return errors.Join(errs...)
}

// add indexes a pattern for the scan.
func (r *table) add(p pattern, memo map[unitID]*unitEdges) {
	idx := int32(len(r.pats))
	r.pats = append(r.pats, p)
	if memo != nil {
		r.addInner(p, memo) // and the reach, from the units' edges
	} else {
		n := 0
		for _, u := range p.units {
			longest, esc := spans(u)
			n += longest
			r.escBreaks = r.escBreaks || esc
		}
		r.reach = max(r.reach, n)
		// Without p's pairs in inner, the scan must try every start.
		r.minLen = 0
	}
	for _, a := range p.units[0] {
		for _, c := range variants(a.s[0], a.fold) {
			if l := r.byFirst[c]; len(l) == 0 || l[len(l)-1] != idx {
				r.byFirst[c] = append(l, idx)
			}
		}
		if len(a.s) >= 2 {
			r.addPair(a.s[0], a.s[1], a.fold, a.fold)
			continue
		}
		for _, b := range p.units[1] {
			r.addPair(a.s[0], b.s[0], a.fold, b.fold)
		}
	}
}

func (r *table) addPair(a, b byte, foldA, foldB bool) {
	addPair(&r.pairs, a, b, foldA, foldB)
}

// addPair adds to set the pairs a then b matches (hasAt).
func addPair(set *[1 << 16 / 64]uint64, a, b byte, foldA, foldB bool) {
	if !foldA && !foldB {
		i := uint16(a)<<8 | uint16(b)
		set[i>>6] |= 1 << (i & 63)
		return
	}
	for _, x := range variants(a, foldA) {
		for _, y := range variants(b, foldB) {
			i := uint16(x)<<8 | uint16(y)
			set[i>>6] |= 1 << (i & 63)
		}
	}
}

// byteSet is a set of bytes, as a row of a pair bitset is.
type byteSet [256 / 64]uint64

func (b *byteSet) add(c byte, fold bool) {
	for _, x := range variants(c, fold) {
		b[x>>6] |= 1 << (x & 63)
	}
}

// unitEdges is what inner needs of a unit besides its forms' own pairs:
// the bytes its forms start and end with (either case where they fold),
// and its shortest form.
type unitEdges struct {
	firsts, lasts byteSet
	least         int
	// longest and escBreak are what spans says of the unit: add takes
	// the reach and escBreaks from them as addInner walks the units.
	longest  int
	escBreak bool
}

// unitID tells units apart: patterns share the units of a character
// (asciiUnit), so one unit's pairs are added once.
type unitID struct {
	first *alt
	n     int
}

// addInner adds to inner every pair of adjacent bytes a match of p can
// hold, within a form or across two units' forms, lowers minLen to p's
// shortest match, and raises reach to its longest (and sets escBreaks
// when a form holds an escaped line break). memo holds the units whose
// forms' own pairs are in, and their edges.
func (r *table) addInner(p pattern, memo map[unitID]*unitEdges) {
	shortest, longest, gap := 0, 0, false
	next := r.unitEdges(p.units[0], memo)
	for k := range p.units {
		e := next
		shortest += e.least
		longest += e.longest
		r.escBreaks = r.escBreaks || e.escBreak
		gap = gap || e.least == 0
		if k+1 == len(p.units) {
			break
		}
		// Each byte a form of unit k ends with, then each byte a form of
		// the next unit starts with: the row of x in inner takes them all.
		next = r.unitEdges(p.units[k+1], memo)
		for wi, w := range e.lasts {
			for ; w != 0; w &= w - 1 {
				x := wi<<6 | bits.TrailingZeros64(w)
				row := r.inner[x*len(byteSet{}) : (x+1)*len(byteSet{})]
				for i, f := range next.firsts {
					row[i] |= f
				}
			}
		}
	}
	if gap {
		// A unit that can span nothing (no form the package writes does)
		// would join the bytes of the units around it, a pair inner does
		// not hold: such a pattern is found only by trying every start.
		shortest = 0
	}
	if len(r.pats) == 1 || shortest < r.minLen { // p is r.pats' last
		r.minLen = shortest
	}
	r.reach = max(r.reach, longest)
}

// unitEdges adds the pairs inside u's forms to inner, once, and returns
// its edges. A unit every key shares (sharedInfo) has them worked out
// once for every table: a table's build ORs in its pairs.
func (r *table) unitEdges(u unit, memo map[unitID]*unitEdges) *unitEdges {
	if len(u) == 0 {
		return &unitEdges{}
	}
	id := unitID{&u[0], len(u)}
	if e, ok := memo[id]; ok {
		return e
	}
	var e *unitEdges
	if info := sharedInfo(u); info != nil {
		for _, i := range info.pairs {
			r.inner[i>>6] |= 1 << (i & 63)
		}
		e = &info.edges
	} else {
		e = formPairs(u, r.inner)
	}
	memo[id] = e
	return e
}

// formPairs adds to set every pair of adjacent bytes inside u's forms,
// and returns u's edges.
func formPairs(u unit, set *[1 << 16 / 64]uint64) *unitEdges {
	e := &unitEdges{least: len(u[0].s)}
	e.longest, e.escBreak = formSpans(u)
	for _, a := range u {
		e.least = min(e.least, len(a.s))
		if a.s == "" {
			continue // spans nothing: least is 0, and addInner skips no start
		}
		if escapedBreak(a.s) {
			continue // not in inner: find tries every start of a text with one
		}
		for j := 0; j+1 < len(a.s); j++ {
			addPair(set, a.s[j], a.s[j+1], a.fold, a.fold)
		}
		e.firsts.add(a.s[0], a.fold)
		e.lasts.add(a.s[len(a.s)-1], a.fold)
	}
	return e
}

// spans returns the length of u's longest form, and whether a form holds
// a JSON-escaped line break (escapedBreak).
func spans(u unit) (longest int, escBreak bool) {
	if info := sharedInfo(u); info != nil {
		return info.edges.longest, info.edges.escBreak
	}
	return formSpans(u)
}

// formSpans is spans, worked out from u's forms.
func formSpans(u unit) (longest int, escBreak bool) {
	for _, a := range u {
		longest = max(longest, len(a.s))
		escBreak = escBreak || escapedBreak(a.s)
	}
	return longest, escBreak
}

// unitInfo is what a table's build needs of a unit, kept: its edges and
// the pairs formPairs adds, each once, as indexes into a pair bitset.
type unitInfo struct {
	edges unitEdges
	pairs []uint16
}

// newUnitInfo works out u's unitInfo.
func newUnitInfo(u unit) *unitInfo {
	var set [1 << 16 / 64]uint64
	info := &unitInfo{edges: *formPairs(u, &set)}
	for wi, w := range set {
		for ; w != 0; w &= w - 1 {
			info.pairs = append(info.pairs, uint16(wi<<6|bits.TrailingZeros64(w)))
		}
	}
	return info
}

// variants is c and, when folding, its other ASCII case.
func variants(c byte, fold bool) []byte {
	if fold {
		switch {
		case c >= 'a' && c <= 'z':
			return []byte{c, c - 'a' + 'A'}
		case c >= 'A' && c <= 'Z':
			return []byte{c, c - 'A' + 'a'}
		}
	}
	return []byte{c}
}

// Empty reports whether the redactor has no keys (a nil one has none).
func (r *Redactor) Empty() bool { return r.current().empty() }

func (r *table) empty() bool { return r == nil || len(r.pats) == 0 }

// Reach is the most bytes a form of any key spans: a text cut further
// than that from a part of it holds no form that reaches into the part
// but is cut (diag.MaskedExcerpt).
func (r *Redactor) Reach() int { return r.current().reach }

// String returns s with every form of every key replaced by Mask.
func (r *Redactor) String(s string) string { return r.current().string(s) }

func (r *table) string(s string) string {
	if r.empty() {
		return s
	}
	if start, _, ok := find(r, s, 0); ok {
		s = string(r.redact([]byte(s), start))
	}
	s, _ = r.acrossEscapes(s)
	return s
}

// acrossEscapes is text redacted without its terminal escape sequences
// (escape.StripANSI), and true, when they part a key that the text
// without them holds: the report files drop them (a colour a server's
// log style puts on a part of a key it echoes), and the key is whole
// there. Else it is text, and false: escapes that part no key stay, for
// the console to show them escaped. A text with none costs one byte
// scan. text holds no form of a key found as it is (string).
func (r *table) acrossEscapes(text string) (string, bool) {
	if !strings.Contains(text, "\x1b") {
		return text, false
	}
	bare := escape.StripANSI(text)
	start, _, ok := find(r, bare, 0)
	if !ok {
		return text, false
	}
	return string(r.redact([]byte(bare), start)), true
}

// Bytes returns b with every form of every key replaced by Mask. It
// returns b itself, not a copy, when there is nothing to replace (the
// common case costs one scan and no allocation); otherwise a new slice.
func (r *Redactor) Bytes(b []byte) []byte { return r.current().bytes(b) }

func (r *table) bytes(b []byte) []byte {
	if r.empty() {
		return b
	}
	if start, _, ok := find(r, b, 0); ok {
		b = r.redact(b, start)
	}
	if bytes.IndexByte(b, 0x1b) >= 0 {
		if bare, ok := r.acrossEscapes(string(b)); ok {
			return []byte(bare)
		}
	}
	return b
}

// Contains reports whether s holds any form of a key.
func (r *Redactor) Contains(s string) bool {
	t := r.current()
	if t.empty() {
		return false
	}
	if _, _, ok := find(t, s, 0); ok {
		return true
	}
	_, ok := t.acrossEscapes(s)
	return ok
}

// JSON redacts a JSON document and keeps it valid: masks go inside
// strings, and in the rare case where a key's form crosses the document's
// structure (a key holding a quote), or terminal escapes (\u001b) part one
// in a string (acrossEscapes), the document is decoded, every string
// (member names too) redacted, and encoded again. b is returned as it is
// when there is nothing to replace; invalid JSON is redacted as text.
func (r *Redactor) JSON(b []byte) []byte {
	t := r.current()
	out := t.bytes(b)
	// A string's terminal escapes are \u001b in the document, which
	// only its decoded text shows as escapes (acrossEscapes).
	escapes := bytes.Contains(b, []byte(`\u001b`)) || bytes.Contains(b, []byte(`\u001B`))
	same := len(out) == len(b) && (len(b) == 0 || &out[0] == &b[0])
	if same && !escapes {
		return b
	}
	if !escapes && json.Valid(out) || !json.Valid(b) {
		return out
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return out
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Read for its escapes alone, a document whose strings hold no key
	// is returned as it came, not encoded again.
	v, changed := t.value(v)
	if same && !changed || enc.Encode(v) != nil {
		return out
	}
	return t.bytes(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// Value returns a decoded JSON value (maps, slices, strings, numbers) with
// every string redacted, member names included. Maps and slices are copied
// only where something changed.
func (r *Redactor) Value(v any) any {
	t := r.current()
	if t.empty() {
		return v
	}
	out, _ := t.value(v)
	return out
}

func (r *table) value(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		s := r.string(v)
		return s, s != v
	case map[string]any:
		var out map[string]any
		for k, x := range v {
			nk := r.string(k)
			nx, changed := r.value(x)
			if !changed && nk == k {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(v))
				maps.Copy(out, v)
			}
			delete(out, k)
			out[nk] = nx
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, x := range v {
			nx, changed := r.value(x)
			if !changed {
				continue
			}
			if out == nil {
				out = append([]any(nil), v...)
			}
			out[i] = nx
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// Error returns err with its text redacted; errors.Is and errors.As still
// see the original. nil stays nil.
func (r *Redactor) Error(err error) error {
	t := r.current()
	if err == nil || t.empty() {
		return err
	}
	msg := err.Error()
	clean := t.string(msg)
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Writer returns a writer that redacts each write before passing it on. It
// is a safety net for console output, whose views write whole lines: a key
// split across two writes is not seen. Values should already be clean.
// The writer masks the keys r learns after it was made too.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if r == nil {
		return w
	}
	return &writer{r: r, w: w}
}

type writer struct {
	r *Redactor
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redact replaces every match, repeating until no form is left: a mask
// next to leftover text could spell a form again (a key that contains the
// mask's own letters). Each pass that changes anything shortens the text,
// since every form is longer than the mask.
//
// No match may start in b before from (0 when nothing is known). The
// scans start there, and the result is the same as from 0: a scan from 0
// would find nothing before from, and from there on does the same. A
// pass leaves the text before its first replacement as it was, so the
// next pass starts reach-1 bytes before that (scanFrom).
func (r *table) redact(b []byte, from int) []byte {
	for {
		out, first, changed := r.pass(b, from)
		if !changed {
			return out
		}
		b, from = out, r.scanFrom(first)
	}
}

// scanFrom is where a scan must start in a text whose first c bytes are
// those of a text in which no match starts before c (a text found
// clean): a match that starts reach or more bytes before c reads only
// those c bytes, so it would be a match in that text too.
func (r *table) scanFrom(c int) int { return max(0, c-r.reach+1) }

// pass replaces the matches of one left-to-right scan from from (no
// match starts before it); first is where its first replacement starts.
// A replacement may start before from, by the partial base64 character
// or the backslash of an escape before a match, as a scan from 0 would
// have it: its start is held back only by the previous replacement.
//
// Every byte of every match is masked. The scan goes on right after a
// match's start, not at its end: a form may begin inside a match, or
// inside what the mask takes around it (the base64 character after a
// core, padding, the rest of an escape), and run on past it; scanning
// from the end would leave the rest of that key. Such a match extends
// the mask before it rather than adding one, so a replacement still
// takes a whole match, longer than the mask.
func (r *table) pass(b []byte, from int) (out []byte, first int, changed bool) {
	last := 0
	for i := from; ; {
		s, e, ok := find(r, b, i)
		if !ok {
			break
		}
		// find may return a start one before i (a base64 core's partial
		// character): the scan still moves on.
		i = max(s, i) + 1
		s, e = escapeBounds(b, s, e)
		if e <= last {
			continue // inside the mask
		}
		if out == nil {
			out = make([]byte, 0, len(b))
			first = s
		}
		if s >= last {
			out = append(out, b[last:s]...)
			out = append(out, Mask...)
		}
		last = e
	}
	if out == nil {
		return b, 0, false
	}
	return append(out, b[last:]...), first, true
}

// escapeBounds widens a match so that it neither starts nor ends inside a
// backslash escape: replacing the u0073 of \\u0073, or the tok-... of
// \tok-... (a key whose t is the escape's letter), would leave a lone
// backslash before the mask and turn valid JSON into invalid JSON.
func escapeBounds(b []byte, s, e int) (int, int) {
	if s > 0 && backslashesBefore(b, s)%2 == 1 {
		s--
	}
	if e > 0 && e < len(b) && b[e-1] == '\\' && backslashesBefore(b, e)%2 == 1 {
		// b[e-1] starts an escape whose rest follows the match.
		if b[e] == 'u' {
			e = min(e+5, len(b))
		} else {
			e++
		}
	}
	return s, e
}

// backslashesBefore counts the backslashes just before position i.
func backslashesBefore(b []byte, i int) int {
	n := 0
	for i > 0 && b[i-1] == '\\' {
		n++
		i--
	}
	return n
}

// find returns the first match in text that starts at or after from: its
// start and end, the longest of the patterns that match there. The start
// is one before from when a base64 core at from takes the partial
// character before it (base64Bounds); the caller bounds it.
//
// A match spans at least minLen bytes, so every match starting in
// [q-step+1, q], step = minLen-1, holds the pair at q: the scan tests the
// pair at every step-th position against inner, and only where one is
// there tries the starts it covers (findIn): where the pair is not, no
// match starts in the step before it.
func find[T string | []byte](r *table, text T, from int) (int, int, bool) {
	n := len(text)
	if n-from < 2 {
		return 0, 0, false
	}
	step := r.minLen - 1
	if step < 2 || r.escBreaks && holdsEscapedBreak(text[from:]) {
		return findIn(r, text, from, n)
	}
	inner := r.inner
	for q := from + step - 1; q+1 < n; q += step {
		pair := uint16(text[q])<<8 | uint16(text[q+1])
		if inner[pair>>6]&(1<<(pair&63)) == 0 {
			continue
		}
		if s, e, ok := findIn(r, text, q-step+1, q+1); ok {
			return s, e, true
		}
	}
	// A match starting after the last q tested would end past the text.
	return 0, 0, false
}

// escapedBreak reports whether a form holds a JSON-escaped line break.
func escapedBreak(s string) bool { return strings.Contains(s, `\n`) }

// holdsEscapedBreak reports whether text holds a JSON-escaped line break
// (a backslash, then n), where a form with one can match.
func holdsEscapedBreak[T string | []byte](text T) bool {
	switch t := any(text).(type) {
	case string:
		return strings.Contains(t, `\n`)
	case []byte:
		return bytes.Contains(t, []byte(`\n`))
	}
	return true
}

// findIn is find over the matches that start in [from, to): every start
// whose first two bytes a pattern can start with is tried.
func findIn[T string | []byte](r *table, text T, from, to int) (int, int, bool) {
	n := min(len(text), to+1)
	if n-from < 2 {
		return 0, 0, false
	}
	pairs := &r.pairs
	prev := uint16(text[from])
	for j := from + 1; j < n; j++ {
		cur := uint16(text[j])
		pair := prev<<8 | cur
		prev = cur
		if pairs[pair>>6]&(1<<(pair&63)) == 0 {
			continue
		}
		i := j - 1
		s, e := i, -1
		for _, pi := range r.byFirst[text[i]] {
			p := &r.pats[pi]
			end := match(p, text, i)
			if end < 0 {
				continue
			}
			start := i
			if p.b64 {
				start, end = base64Bounds(text, i, end, p.lead)
			}
			if end > e {
				s, e = start, end
			}
		}
		if e > i {
			return s, e, true
		}
	}
	return 0, 0, false
}

// match returns the end of the longest match of p at i, or -1. It follows
// every way the units can match at once (a unit's forms may be prefixes of
// one another: a raw backslash and an escaped one), so it never
// backtracks.
func match[T string | []byte](p *pattern, text T, i int) int {
	var bufA, bufB [8]int
	cur, next := append(bufA[:0], i), bufB[:0]
	for _, u := range p.units {
		next = next[:0]
		for _, pos := range cur {
			for _, a := range u {
				if !hasAt(text, pos, a) {
					continue
				}
				end := pos + len(a.s)
				if !slices.Contains(next, end) {
					next = append(next, end)
				}
			}
		}
		if len(next) == 0 {
			return -1
		}
		cur, next = next, cur
	}
	end := -1
	for _, x := range cur {
		end = max(end, x)
	}
	return end
}

// hasAt reports whether text holds the form a at pos.
func hasAt[T string | []byte](text T, pos int, a alt) bool {
	if len(text)-pos < len(a.s) {
		return false
	}
	if !a.fold {
		return string(text[pos:pos+len(a.s)]) == a.s
	}
	for j := 0; j < len(a.s); j++ {
		c, d := text[pos+j], a.s[j]
		if c == d {
			continue
		}
		if c|0x20 != d|0x20 || c|0x20 < 'a' || c|0x20 > 'z' {
			return false
		}
	}
	return true
}

// base64Bounds widens a base64 core to the partial characters around it,
// which carry a few bits of the key, and to the padding after it.
func base64Bounds[T string | []byte](text T, s, e int, lead bool) (int, int) {
	if lead && s > 0 && isBase64(text[s-1]) {
		s--
	}
	if e < len(text) && isBase64(text[e]) {
		e++
	}
	for pads := 0; pads < 2; pads++ {
		switch {
		case e < len(text) && text[e] == '=':
			e++
		case len(text)-e >= 3 && text[e] == '%' && text[e+1] == '3' && text[e+2]|0x20 == 'd':
			e += 3
		default:
			pads = 2
		}
	}
	return s, e
}

func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}
