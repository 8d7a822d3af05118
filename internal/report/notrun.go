package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/result"
)

// notRunLine names in one line the steps an attempt did not run
// (Attempt.NotRun), grouped as a designer reads a scenario: "not run:
// turns 2-3, confirm (conversation, webhooks)". A turn stands for its say
// with the checks and captures of its reply; the checks or captures of a
// turn whose say ran are named as such, counted when more than one
// ("turn 1 capture", "greeting check", "turn 1 checks (3)": a feature's
// Then steps after the one that broke are so many expectations left
// untested); consecutive confirm steps make one confirm with what they
// read. Empty when every step ran.
func notRunLine(ss []*result.Step) string {
	var parts []string
	from, to := 0, -1 // the span of whole turns not yet written
	flush := func() {
		switch {
		case to < from:
		case from == to:
			parts = append(parts, fmt.Sprintf("turn %d", from))
		default:
			parts = append(parts, fmt.Sprintf("turns %d-%d", from, to))
		}
		from, to = 0, -1
	}
	// ofTurn is the index after the checks and captures of turn n from i.
	ofTurn := func(i, n int) int {
		for i < len(ss) && ss[i] != nil && (ss[i].Kind == result.StepCheck || ss[i].Kind == result.StepCapture) && ss[i].Turn == n {
			i++
		}
		return i
	}
	for i := 0; i < len(ss); {
		st := ss[i]
		if st == nil {
			i++
			continue
		}
		if st.Kind == result.StepSay && st.Turn > 0 {
			if to < from || st.Turn != to+1 {
				flush()
				from = st.Turn
			}
			to = st.Turn
			i = ofTurn(i+1, st.Turn)
			continue
		}
		flush()
		switch st.Kind {
		case result.StepOpen:
			parts = append(parts, "greeting")
			i = ofTurn(i+1, 0)
		case result.StepCheck, result.StepCapture:
			j := ofTurn(i, st.Turn)
			var kinds []string
			count := map[string]int{}
			for _, s := range ss[i:j] {
				if count[s.Kind]++; count[s.Kind] == 1 {
					kinds = append(kinds, s.Kind)
				}
			}
			for k, kind := range kinds {
				if n := count[kind]; n > 1 {
					kinds[k] = fmt.Sprintf("%ss (%d)", kind, n)
				}
			}
			name := "greeting"
			if st.Turn > 0 {
				name = fmt.Sprintf("turn %d", st.Turn)
			}
			parts = append(parts, name+" "+strings.Join(kinds, " and "))
			i = j
		case result.StepConfirm:
			var reads []string
			for ; i < len(ss) && ss[i] != nil && ss[i].Kind == result.StepConfirm; i++ {
				for _, r := range ss[i].Confirms {
					if !slices.Contains(reads, r) {
						reads = append(reads, r)
					}
				}
			}
			if len(reads) == 0 {
				parts = append(parts, "confirm")
			} else {
				parts = append(parts, "confirm ("+strings.Join(reads, ", ")+")")
			}
		default:
			parts = append(parts, strings.ReplaceAll(st.Kind, "_", " "))
			i++
		}
	}
	flush()
	if len(parts) == 0 {
		return ""
	}
	return "not run: " + strings.Join(parts, ", ")
}
