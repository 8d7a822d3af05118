package agent

import (
	"regexp"
	"strconv"
	"strings"
)

// matcher recognises text by regular expressions and keywords. Keywords are
// matched on the lower-cased message at word boundaries without a regex,
// because they are the common case and the simulator must stay cheap per
// turn.
type matcher struct {
	patterns []*pattern
	keywords []string // lower-case
}

func (m *matcher) empty() bool { return len(m.patterns) == 0 && len(m.keywords) == 0 }

// hits counts the patterns and keywords found in the message; msg is the
// original text, lower its lower-cased form.
func (m *matcher) hits(msg, lower string, ascii bool) int {
	n := 0
	for _, p := range m.patterns {
		if p.mayMatch(lower, ascii) && p.re.MatchString(msg) {
			n++
		}
	}
	for _, kw := range m.keywords {
		if containsWord(lower, kw) {
			n++
		}
	}
	return n
}

// containsWord reports whether kw occurs in s with no letter or digit on
// either side, so "hi" does not match "this".
func containsWord(s, kw string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], kw)
		if i < 0 {
			return false
		}
		start := off + i
		end := start + len(kw)
		if (start == 0 || !isWordByte(s[start-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		off = start + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// intent is a named set of patterns.
type intent struct {
	name string
	matcher
}

// entityType is a built-in entity type: a default pattern and a normaliser
// that turns the matched text into the value stored in state.
type entityType struct {
	name      string
	pattern   *regexp.Regexp
	normalize func(string) (string, bool)
}

var (
	numberWords = map[string]string{
		"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
		"seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11",
		"twelve": "12", "thirteen": "13", "fourteen": "14", "fifteen": "15",
		"sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
	}
	timeRE = regexp.MustCompile(`(?i)\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?m\b\.?|\b(\d{1,2})[:.](\d{2})\b|\b(noon|midday|midnight)\b`)
)

// builtinEntityType returns a fresh built-in type; its patterns are compiled
// once per definition at load time.
func builtinEntityType(name string) (*entityType, bool) {
	switch name {
	case "string":
		return &entityType{name: name, normalize: func(s string) (string, bool) {
			s = strings.TrimSpace(s)
			return s, s != ""
		}}, true
	case "number":
		return &entityType{
			name:      name,
			pattern:   regexp.MustCompile(`(?i)\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)\b`),
			normalize: normalizeNumber,
		}, true
	case "time":
		return &entityType{name: name, pattern: timeRE, normalize: normalizeTime}, true
	case "phone":
		return &entityType{
			name:      name,
			pattern:   regexp.MustCompile(`(\+?\d[\d\s().-]{5,}\d)`),
			normalize: normalizePhone,
		}, true
	case "email":
		return &entityType{
			name:    name,
			pattern: regexp.MustCompile(`(?i)\b([a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,})\b`),
			normalize: func(s string) (string, bool) {
				return strings.ToLower(strings.TrimSpace(s)), strings.Contains(s, "@")
			},
		}, true
	}
	return nil, false
}

var entityTypeNames = []string{"string", "number", "time", "phone", "email"}

func normalizeNumber(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if w, ok := numberWords[s]; ok {
		return w, true
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return "", false
	}
	return strconv.Itoa(v), true
}

// normalizeTime turns "7pm", "7:30 p.m.", "19:00" or "noon" into 24-hour
// "HH:MM".
func normalizeTime(s string) (string, bool) {
	m := timeRE.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	var h, min int
	switch {
	case m[1] != "":
		h, _ = strconv.Atoi(m[1])
		if m[2] != "" {
			min, _ = strconv.Atoi(m[2])
		}
		if h < 1 || h > 12 {
			return "", false
		}
		pm := m[3] == "p" || m[3] == "P"
		switch {
		case pm && h != 12:
			h += 12
		case !pm && h == 12:
			h = 0
		}
	case m[4] != "":
		h, _ = strconv.Atoi(m[4])
		min, _ = strconv.Atoi(m[5])
	default:
		if strings.EqualFold(m[6], "midnight") {
			h = 0
		} else {
			h = 12
		}
	}
	if h > 23 || min > 59 {
		return "", false
	}
	return twoDigits(h) + ":" + twoDigits(min), true
}

func twoDigits(n int) string {
	return string([]byte{byte('0' + n/10), byte('0' + n%10)})
}

func normalizePhone(s string) (string, bool) {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
			b.WriteRune(r)
		}
	}
	out := b.String()
	digits := strings.TrimPrefix(out, "+")
	return out, len(digits) >= 7
}

// entity is an extractor: the first match of any pattern (its first group,
// or the whole match) normalised by the type.
type entity struct {
	name     string
	stateKey string
	typ      *entityType
	patterns []*pattern
	caseFold string // "", "upper", "lower"
	// wholeMatch is set for the time type's own pattern, whose groups carry
	// hour, minutes and meridiem separately.
	wholeMatch bool
}

// extract returns the entity's value in msg, if any.
func (e *entity) extract(msg, lower string, ascii bool) (string, bool) {
	for _, p := range e.patterns {
		if !p.mayMatch(lower, ascii) {
			continue
		}
		m := p.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		raw := m[0]
		if !e.wholeMatch {
			for _, g := range m[1:] {
				if g != "" {
					raw = g
					break
				}
			}
		}
		v, ok := e.typ.normalize(raw)
		if !ok {
			continue
		}
		switch e.caseFold {
		case "upper":
			v = strings.ToUpper(v)
		case "lower":
			v = strings.ToLower(v)
		}
		return v, true
	}
	return "", false
}

// topic is one knowledge-base entry.
type topic struct {
	name    string
	matcher matcher
	sources []string
	answer  string
}
