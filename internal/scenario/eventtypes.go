package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// An events check (events: {includes, excludes, sequence} in YAML, the
// events steps of a feature) compares the types it names exactly with the
// types the platform sent. A misspelt type never arrives: excluding it
// passes whatever arrives, so the scenario looks tested while nothing was
// checked, and expecting it fails at run time. The reference shows only
// part of the platform's catalogue ("Server event catalog beyond these:
// not shown"), so a type agenttest does not know may be real: both
// loaders warn, through eventTypeWarnings, about a type not written as
// the platform writes types, and about a near miss of a known type
// (reply.KnownEventTypes); any other type is checked as written.

// eventTypeShape is how the platform writes an event type.
var eventTypeShape = regexp.MustCompile(`^EVENT_TYPE_[A-Z0-9_]+$`)

// eventTypeWarnings warns about each type of an events check that is
// malformed or a near miss of a known one. at says where item i of a list
// (includes, excludes or sequence) is written, and false for an item that
// is not a type as written (a YAML item that is not a scalar, reported
// where it was read). Types that use ${...} are only known at run time
// and are left alone.
func eventTypeWarnings(ev *assert.Events, at func(list string, i int) (diag.Pos, bool)) []diag.Diagnostic {
	if ev == nil {
		return nil
	}
	var out []diag.Diagnostic
	for _, l := range []struct {
		name  string
		types []string
	}{{"includes", ev.Includes}, {"excludes", ev.Excludes}, {"sequence", ev.Sequence}} {
		for i, t := range l.types {
			msg, hint := eventTypeProblem(t, l.name == "excludes")
			if msg == "" {
				continue
			}
			if pos, ok := at(l.name, i); ok {
				out = append(out, diag.Diagnostic{Severity: diag.Warning, Pos: pos, Message: msg, Hint: hint})
			}
		}
	}
	return out
}

// eventTypeProblem is what is wrong with an event type an events check
// names, and the hint, or "" when nothing is; excluded says the check
// wants no event of the type.
func eventTypeProblem(typ string, excluded bool) (msg, hint string) {
	if strings.Contains(typ, "${") {
		return "", ""
	}
	outcome := "this check fails whatever arrives"
	if excluded {
		outcome = "this exclusion passes whatever arrives"
	}
	if !eventTypeShape.MatchString(typ) {
		msg = fmt.Sprintf("event type %q is not written as the platform writes types (EVENT_TYPE_ then capitals, digits and _): no event has it, so %s", typ, outcome)
		hint = "write the type as the platform sends it, such as " + reply.EventTypeSystemMessage
		if s := suggestEventType(typ); s != "" {
			hint = fmt.Sprintf("did you mean %q?", s)
		}
		return msg, hint
	}
	if reply.KnownEventType(typ) {
		return "", ""
	}
	s := nearEventType(typ)
	if s == "" {
		// Another platform's type, perhaps: checked as written.
		return "", ""
	}
	return fmt.Sprintf("event type %s is not one agenttest knows but is close to one: if it is misspelt, no event has it, so %s", typ, outcome),
		fmt.Sprintf("did you mean %q?", s)
}

// suggestEventType is the known type a malformed one means: it in capitals
// with its words joined by _, and with the EVENT_TYPE_ prefix (a missing
// or misspelt one) restored, when that is a known type or a near miss of
// one.
func suggestEventType(typ string) string {
	words := strings.FieldsFunc(strings.ToUpper(typ), func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if len(words) == 0 {
		return ""
	}
	joined := strings.Join(words, "_")
	core := words
	switch {
	case len(words) > 2 && words[0] == "EVENT" && words[1] == "TYPE":
		core = words[2:]
	case len(words) > 1 && (words[0] == "EVENT" || words[0] == "TYPE" || words[0] == "EVENTTYPE"):
		core = words[1:]
	}
	prefixed := reply.EventTypePrefix + strings.Join(core, "_")
	for _, c := range []string{prefixed, joined} {
		if reply.KnownEventType(c) {
			return c
		}
	}
	for _, c := range []string{prefixed, joined} {
		if s := nearEventType(c); s != "" {
			return s
		}
	}
	return ""
}

// nearEventType is the known type that typ (written EVENT_TYPE_...) is a
// near miss of: at most two edits away (a letter added, dropped, changed,
// or two swapped), or its words in another order; "" when none is. The
// brand slot of a known type is filled with the reference's VENDOR and
// with each word of typ, so that a misspelling is found under any brand.
// Ties go to the type that sorts first.
func nearEventType(typ string) string {
	const budget = 2
	brands := []string{brand.EventWord(brand.Default)}
	words := strings.Split(strings.TrimPrefix(typ, reply.EventTypePrefix), "_")
	for _, w := range words {
		if reply.IsBrandWord(w) && !slices.Contains(brands, w) {
			brands = append(brands, w)
		}
	}
	sorted := slices.Sorted(slices.Values(words))
	best, bestDist := "", budget+1
	for _, form := range reply.KnownEventTypes() {
		for _, b := range brands {
			c := reply.BrandEventType(form, b)
			d := diag.EditDistance(typ, c)
			if d > budget && slices.Equal(sorted, slices.Sorted(slices.Values(strings.Split(strings.TrimPrefix(c, reply.EventTypePrefix), "_")))) {
				d = budget
			}
			if d < bestDist || d == bestDist && c < best {
				best, bestDist = c, d
			}
			if !strings.Contains(form, reply.EventBrandSlot) {
				break
			}
		}
	}
	if bestDist > budget {
		return ""
	}
	return best
}
