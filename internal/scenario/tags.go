package scenario

import (
	"fmt"
	"slices"
	"strings"
)

// TagExpr is a parsed tag filter such as `@smoke && ~@slow`. The zero value
// (and the parse of an empty string) matches every scenario.
//
// The language follows godog and behat, and also accepts the words and
// operators of cucumber tag expressions:
//
//	@a && @b, @a and @b     both
//	@a || @b, @a or @b      either
//	@a,@b                   either; binds tighter than &&, as in godog:
//	                        "@a,@b && @c" is "(@a or @b) and @c"
//	~@a, !@a, not @a        not
//	( ... )                 grouping
//
// Tags are compared without their leading @, case-sensitively.
type TagExpr struct {
	src  string
	root tagNode
}

// String returns the expression as written.
func (e TagExpr) String() string { return e.src }

// Match reports whether a scenario with these tags is selected.
func (e TagExpr) Match(tags []string) bool {
	if e.root == nil {
		return true
	}
	set := make(map[string]bool, len(tags))
	for _, t := range tags {
		set[strings.TrimPrefix(t, "@")] = true
	}
	return e.root.match(set)
}

// Tags lists the tags the expression names, without @, in order and
// without duplicates: a run that selects nothing says which of them no
// scenario has.
func (e TagExpr) Tags() []string {
	var out []string
	var walk func(n tagNode)
	walk = func(n tagNode) {
		switch x := n.(type) {
		case tagLit:
			if !slices.Contains(out, string(x)) {
				out = append(out, string(x))
			}
		case tagNot:
			walk(x.x)
		case tagAnd:
			walk(x.l)
			walk(x.r)
		case tagOr:
			walk(x.l)
			walk(x.r)
		}
	}
	walk(e.root)
	return out
}

type tagNode interface {
	match(tags map[string]bool) bool
}

type (
	tagLit string
	tagNot struct{ x tagNode }
	tagAnd struct{ l, r tagNode }
	tagOr  struct{ l, r tagNode }
)

func (t tagLit) match(s map[string]bool) bool { return s[string(t)] }
func (t tagNot) match(s map[string]bool) bool { return !t.x.match(s) }
func (t tagAnd) match(s map[string]bool) bool { return t.l.match(s) && t.r.match(s) }
func (t tagOr) match(s map[string]bool) bool  { return t.l.match(s) || t.r.match(s) }

type tagTokKind int

const (
	tokTag tagTokKind = iota
	tokAnd
	tokOr
	tokComma
	tokNot
	tokLParen
	tokRParen
	tokEOF
)

type tagTok struct {
	kind tagTokKind
	text string
	col  int // 1-based
}

func (t tagTok) describe() string {
	if t.kind == tokEOF {
		return "the end"
	}
	return fmt.Sprintf("%q at column %d", t.text, t.col)
}

func lexTags(s string) ([]tagTok, error) {
	var toks []tagTok
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		col := i + 1
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			i++
		case r == '(':
			toks = append(toks, tagTok{tokLParen, "(", col})
			i++
		case r == ')':
			toks = append(toks, tagTok{tokRParen, ")", col})
			i++
		case r == ',':
			toks = append(toks, tagTok{tokComma, ",", col})
			i++
		case r == '~' || r == '!':
			toks = append(toks, tagTok{tokNot, string(r), col})
			i++
		case r == '&' || r == '|':
			if i+1 >= len(rs) || rs[i+1] != r {
				return nil, fmt.Errorf("single %q at column %d: write %c%c", r, col, r, r)
			}
			kind := tokAnd
			if r == '|' {
				kind = tokOr
			}
			toks = append(toks, tagTok{kind, string([]rune{r, r}), col})
			i += 2
		default:
			j := i
			for j < len(rs) && !strings.ContainsRune(" \t\n\r(),~!&|", rs[j]) {
				j++
			}
			word := string(rs[i:j])
			kind := tokTag
			if !strings.HasPrefix(word, "@") {
				switch strings.ToLower(word) {
				case "and":
					kind = tokAnd
				case "or":
					kind = tokOr
				case "not":
					kind = tokNot
				}
			}
			if kind == tokTag && strings.TrimPrefix(word, "@") == "" {
				return nil, fmt.Errorf("empty tag at column %d", col)
			}
			toks = append(toks, tagTok{kind, word, col})
			i = j
		}
	}
	return append(toks, tagTok{kind: tokEOF, col: len(rs) + 1}), nil
}

// ParseTagExpr parses a tag filter (see TagExpr). Errors name the column
// of the problem.
func ParseTagExpr(s string) (TagExpr, error) {
	toks, err := lexTags(s)
	if err != nil {
		return TagExpr{}, fmt.Errorf("tag expression %q: %w", s, err)
	}
	p := &tagParser{toks: toks}
	if p.peek().kind == tokEOF {
		return TagExpr{src: s}, nil
	}
	root, err := p.or()
	if err == nil && p.peek().kind != tokEOF {
		t := p.peek()
		if t.kind == tokTag || t.kind == tokLParen || t.kind == tokNot {
			err = fmt.Errorf("missing operator before %s: join tags with &&, || or ,", t.describe())
		} else {
			err = fmt.Errorf("unexpected %s", t.describe())
		}
	}
	if err != nil {
		return TagExpr{}, fmt.Errorf("tag expression %q: %w", s, err)
	}
	return TagExpr{src: s, root: root}, nil
}

type tagParser struct {
	toks  []tagTok
	i     int
	depth int
}

// maxTagDepth bounds nesting so a hostile filter cannot exhaust the stack.
const maxTagDepth = 100

func (p *tagParser) peek() tagTok { return p.toks[p.i] }
func (p *tagParser) next() tagTok {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *tagParser) or() (tagNode, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tokOr {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = tagOr{l, r}
	}
	return l, nil
}

func (p *tagParser) and() (tagNode, error) {
	l, err := p.comma()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tokAnd {
		p.next()
		r, err := p.comma()
		if err != nil {
			return nil, err
		}
		l = tagAnd{l, r}
	}
	return l, nil
}

func (p *tagParser) comma() (tagNode, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.peek().kind == tokComma {
		p.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = tagOr{l, r}
	}
	return l, nil
}

func (p *tagParser) unary() (tagNode, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxTagDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxTagDepth)
	}
	t := p.next()
	switch t.kind {
	case tokTag:
		return tagLit(strings.TrimPrefix(t.text, "@")), nil
	case tokNot:
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return tagNot{x}, nil
	case tokLParen:
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			return nil, fmt.Errorf("expected \")\" to close \"(\" at column %d, found %s", t.col, c.describe())
		}
		return x, nil
	}
	return nil, fmt.Errorf("expected a tag, \"(\" or \"not\", found %s", t.describe())
}
