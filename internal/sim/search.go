package sim

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// transcriptMatch reports whether a conversation's turns contain query,
// case-insensitively, in the user side, the agent side or both.
func transcriptMatch(c *Conversation, query, turnType string) bool {
	q := strings.ToLower(query)
	for _, t := range c.snapshot().turns {
		if turnType != "agent" && strings.Contains(strings.ToLower(t.UserInput), q) {
			return true
		}
		if turnType != "user" && strings.Contains(strings.ToLower(t.AgentResponse), q) {
			return true
		}
	}
	return false
}

// stopWords carry no meaning for ranking.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(`a an and are as at be but by can could do for from have he her his how i
		if in is it its me my no not of on or our please she so that the their them there they this to up us
		was we what when where which who will with would you your yes ok okay hi hello thanks thank`) {
		m[w] = true
	}
	return m
}()

// tokens splits text into lower-case terms, dropping stop words and a
// plural or gerund ending so "bills" meets "bill" and "booking" meets "book".
func tokens(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if stopWords[f] || len(f) < 2 {
			continue
		}
		out = append(out, stem(f))
	}
	return out
}

func stem(w string) string {
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// termFreqs returns the cached term frequencies of a conversation's
// transcript, recomputing them when turns were added.
func (c *Conversation) termFreqs() map[string]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.terms != nil && c.termsTurns == len(c.turns) {
		return c.terms
	}
	tf := map[string]float64{}
	for _, t := range c.turns {
		for _, w := range tokens(t.UserInput) {
			tf[w]++
		}
		for _, w := range tokens(t.AgentResponse) {
			tf[w]++
		}
	}
	c.terms, c.termsTurns = tf, len(c.turns)
	return tf
}

// rankSemantic orders conversations by TF-IDF cosine similarity of their
// transcript to the query, best first, dropping those with nothing in
// common. IDF is computed over the candidates, so the ranking reflects
// how distinctive a query term is among the conversations searched.
func rankSemantic(list []*Conversation, query string) []*Conversation {
	qterms := map[string]float64{}
	for _, w := range tokens(query) {
		qterms[w]++
	}
	if len(qterms) == 0 {
		return nil
	}
	docs := make([]map[string]float64, len(list))
	df := map[string]float64{}
	for i, c := range list {
		docs[i] = c.termFreqs()
		for w := range docs[i] {
			df[w]++
		}
	}
	n := float64(len(list))
	idf := func(w string) float64 { return math.Log((n+1)/(df[w]+1)) + 1 }

	var qnorm float64
	qvec := map[string]float64{}
	for w, f := range qterms {
		qvec[w] = f * idf(w)
		qnorm += qvec[w] * qvec[w]
	}
	qnorm = math.Sqrt(qnorm)

	type scored struct {
		c     *Conversation
		score float64
	}
	var hits []scored
	for i, d := range docs {
		var dot, dnorm float64
		for w, f := range d {
			x := f * idf(w)
			dnorm += x * x
			dot += x * qvec[w]
		}
		if dot <= 0 {
			continue
		}
		hits = append(hits, scored{list[i], dot / (math.Sqrt(dnorm) * qnorm)})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].c.ID < hits[j].c.ID
	})
	out := make([]*Conversation, len(hits))
	for i, h := range hits {
		out[i] = h.c
	}
	return out
}
