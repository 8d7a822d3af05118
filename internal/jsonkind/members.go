package jsonkind

import (
	"encoding/json"
	"errors"
	"strings"
)

// AnyIndex in a path given to SameMember stands for every element of an
// array.
const AnyIndex = -1

// SameMember finds, in data, a JSON document that decodes, the first of
// the objects at paths that names one member twice as json.Unmarshal
// matches members to a struct's fields: the same name, or names equal
// ignoring case ("id" and "Id", "status" and "ſtatus"). Such an object
// says two things, and its readers disagree on which it means:
// json.Unmarshal keeps the last of names equal ignoring case, jq and
// Python the last of equal names and each of names that differ in case.
// A path holds member names (matched ignoring case, as json.Unmarshal
// matches them) and array indices (AnyIndex: any element); an empty path
// is the document itself. Objects elsewhere, such as the free-form JSON a
// report quotes, where "Name" and "name" may well be two members, are
// not checked. It returns a ValueError at the second name (its path ends
// with that name as written), or nil.
func SameMember(data []byte, paths ...[]any) error {
	type frame struct {
		object bool
		// check is true for an object at one of paths; key is true
		// where an object expects a member name next.
		check, key bool
		// names are the member names seen.
		names []string
		// at is the member name or the element index of the value
		// being read, for the path.
		at any
	}
	deepest := 0
	for _, p := range paths {
		deepest = max(deepest, len(p))
	}
	var stack []*frame
	// here is the path of the value that starts now.
	here := func() []any {
		out := make([]any, 0, len(stack))
		for _, f := range stack {
			out = append(out, f.at)
		}
		return out
	}
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			f := &frame{object: data[i] == '{', key: data[i] == '{', at: 0}
			if f.object && len(stack) <= deepest {
				at := here()
				for _, p := range paths {
					f.check = f.check || pathMatches(p, at)
				}
			}
			stack = append(stack, f)
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				if top.object {
					top.key = true
				} else if n, ok := top.at.(int); ok {
					top.at = n + 1
				}
			}
		case '"':
			start := i
			i = stringEnd(data, i)
			if len(stack) == 0 {
				continue
			}
			top := stack[len(stack)-1]
			if !top.object || !top.key {
				continue
			}
			top.key = false
			name := string(data[start+1 : min(i, len(data))])
			if strings.IndexByte(name, '\\') >= 0 {
				if err := json.Unmarshal(data[start:min(i+1, len(data))], &name); err != nil {
					return nil // not a document that decodes: its decoder says why
				}
			}
			top.at = name
			if !top.check {
				continue
			}
			for _, n := range top.names {
				if sameMember(n, name) {
					return &ValueError{Path: here(), Offset: int64(start),
						Err: errors.New("the object names this member a second time (names compared ignoring case, as agenttest reads them): readers of the document disagree on which value it holds")}
				}
			}
			top.names = append(top.names, name)
		}
	}
	return nil
}

// pathMatches reports whether at, the path of a value, is pattern:
// names as sameMember matches them, indices equal or AnyIndex.
func pathMatches(pattern, at []any) bool {
	if len(pattern) != len(at) {
		return false
	}
	for i, p := range pattern {
		if _, isIndex := at[i].(int); !(isIndex && p == AnyIndex) && !sameMember(at[i], p) {
			return false
		}
	}
	return true
}

// stringEnd is the index of the quote that closes the JSON string whose
// opening quote is at data[i], or len(data) when none does.
func stringEnd(data []byte, i int) int {
	for i++; i < len(data) && data[i] != '"'; i++ {
		if data[i] == '\\' {
			i++ // the escaped character, or the u of \uXXXX
		}
	}
	return i
}

// Depth is how deeply valid JSON nests its arrays and objects: 0 for a
// scalar, 1 for [1], 2 for {"a":[1]}.
func Depth(data []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = stringEnd(data, i)
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
	}
	return deepest
}
