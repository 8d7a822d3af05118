package compare

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// transcriptChanges compares two transcripts of the same script turn by
// turn: the reply text (with a word diff), the node path, the handoff
// destination, the state the turn wrote, whether it ended the
// conversation, and the number of turns. Turns are matched by index, the
// greeting being 0.
//
// What a turn "wrote" is the state members it added or changed, with their
// values, and those it removed. Values that name the session itself on a
// side (its conversation id, its environment) always differ between two
// environments and are not behaviour: they are left out.
func transcriptChanges(b, c *result.Attempt) []Change {
	if b == nil || c == nil {
		return nil
	}
	var out []Change
	bt, ct := replies(b), replies(c)
	bIdent, cIdent := identity(b, bt), identity(c, ct)
	var bPrev, cPrev map[string]any
	for i := 0; i < min(len(bt), len(ct)); i++ {
		bv, cv := bt[i], ct[i]
		if bv.turn.Index != cv.turn.Index {
			break
		}
		add := func(what, base, cand, diff string) {
			out = append(out, Change{Turn: cv.turn.Index, Pos: cv.turn.Pos, Say: cv.turn.Say, What: what, Baseline: base, Candidate: cand, Diff: diff})
		}
		br, cr := bv.reply, cv.reply
		if br == nil || cr == nil {
			continue
		}
		if br.Response != cr.Response {
			add(ChangeReply, br.Response, cr.Response, diffText(br.Response, cr.Response))
			out = append(out, scoreChanges(bv.turn, cv.turn)...)
		}
		if b, c := strings.Join(br.Meta().NodeTrace(), " → "), strings.Join(cr.Meta().NodeTrace(), " → "); b != c {
			add(ChangeTrace, b, c, "")
		}
		if b, c := br.Meta().HandoffDestination(), cr.Meta().HandoffDestination(); b != c {
			add(ChangeHandoff, orNone(b), orNone(c), "")
		}
		bs, cs := br.Meta().State(), cr.Meta().State()
		if b, c := written(bPrev, bs, bIdent), written(cPrev, cs, cIdent); b != c {
			add(ChangeState, orNone(b), orNone(c), "")
		}
		bPrev, cPrev = bs, cs
		if br.ConversationEnded != cr.ConversationEnded {
			add(ChangeEnded, fmt.Sprint(br.ConversationEnded), fmt.Sprint(cr.ConversationEnded), "")
		}
	}
	if len(bt) != len(ct) {
		last := ct
		if len(bt) > len(ct) {
			last = bt
		}
		t := last[min(len(bt), len(ct))].turn
		out = append(out, Change{Turn: t.Index, Pos: t.Pos, Say: t.Say, What: ChangeTurns,
			Baseline: turnsText(len(bt)), Candidate: turnsText(len(ct))})
	}
	return out
}

// view is a turn with its reply decoded (nil when the call failed).
type view struct {
	turn  *result.Turn
	reply *reply.TurnResult
}

func replies(a *result.Attempt) []view {
	var out []view
	for _, t := range a.Turns {
		if t != nil {
			out = append(out, view{turn: t, reply: t.Reply()})
		}
	}
	return out
}

// identity returns the values that name a side's session: its
// conversation id and its environment, as the greeting's state holds
// them. They differ between any two environments by construction.
func identity(a *result.Attempt, turns []view) map[string]bool {
	id := map[string]bool{}
	if a.ConversationID != "" {
		id[a.ConversationID] = true
	}
	for _, v := range turns {
		if v.reply != nil && v.reply.ConversationID != "" {
			id[v.reply.ConversationID] = true
		}
	}
	if len(turns) > 0 && turns[0].reply != nil {
		st := turns[0].reply.Meta().State()
		for _, k := range []string{"environment", "env", "clientEnv", "client_env"} {
			if s, ok := st[k].(string); ok && reply.ValidEnv(s) {
				id[s] = true
			}
		}
	}
	return id
}

// written renders what a turn wrote to the state: the members of now that
// prev lacks or holds with another value, and those it dropped, sorted,
// as `name=value` (values as compact JSON) and `-name`. Members whose
// value names the session (ident) are left out.
func written(prev, now map[string]any, ident map[string]bool) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		v := now[k]
		if s, ok := v.(string); ok && ident[s] {
			continue
		}
		if old, ok := prev[k]; ok && reflect.DeepEqual(old, v) {
			continue
		}
		parts = append(parts, k+"="+reply.Render(quoteStrings(v)))
	}
	for _, k := range slices.Sorted(maps.Keys(prev)) {
		if _, ok := now[k]; !ok {
			if s, isStr := prev[k].(string); isStr && ident[s] {
				continue
			}
			parts = append(parts, "-"+k)
		}
	}
	return strings.Join(parts, ", ")
}

// quoteStrings makes a string value render quoted, so "4" and 4 differ.
func quoteStrings(v any) any {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return v
}

// diffText is the word diff of two replies, headed baseline/candidate when
// they span lines.
func diffText(b, c string) string {
	d := assert.Diff(b, c)
	return strings.Replace(d, "--- expected\n+++ actual", "--- baseline\n+++ candidate", 1)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func turnsText(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

// scoreChanges are the similar checks of turn c that scored otherwise on
// turn b, the same turn of the baseline, each paired with the baseline's
// score of the matcher written at the same place for the same key.
func scoreChanges(b, c *result.Turn) []Change {
	var out []Change
	for _, cs := range c.Scores {
		for _, bs := range b.Scores {
			if bs.Pos != cs.Pos || bs.Key != cs.Key || bs.Not != cs.Not || bs.Score == cs.Score {
				continue
			}
			// One matcher (its Key and Not alike), one name.
			name := cs.Name() + " "
			out = append(out, Change{Turn: c.Index, Pos: cs.Pos, Say: c.Say, What: ChangeSimilar,
				Baseline: name + bs.Relation(), Candidate: name + cs.Relation()})
			break
		}
	}
	return out
}
