package scenario

import (
	"bytes"
	"testing"
	"unicode/utf16"
)

// TestLoadEncodings: a suite file saved with a byte order mark, as UTF-8
// (Notepad) or as UTF-16 (PowerShell's > and Out-File, Windows editors),
// loads as the same file saved as plain UTF-8 would: the same scenarios,
// the same problems at the same file:line:col, the offending line echoed
// as text. Before, a feature file with either mark was "invalid Gherkin"
// at line 1 (quoting an invisible BOM, or raw UTF-16 bytes), and a
// UTF-16 YAML suite echoed its lines as \x00 escapes.
func TestLoadEncodings(t *testing.T) {
	t.Parallel()
	const feature = "# é\r\nFeature: booking\n  Scenario: books\n    When the user says \"hi\"\n    Then the agent's reply contains \"Welcome\"\n"
	const badFeature = "Feature: booking\n  Scenario: books\n    When I dance\n"
	const yaml = "scenarios:\n  - name: books – 🍽\n    turns:\n      - say: hi\n        expect: {response: {contains: Welcome}}\n"
	const badYAML = "scenarios:\n  - name: books\n    turns:\n      - say: hi\n        expct: x\n"
	type testCase struct {
		name, path, text string
		// valid says the file loads; else its diagnostics must be those
		// of the UTF-8 file.
		valid bool
	}
	encodings := []struct {
		name   string
		encode func(string) []byte
	}{
		{"UTF-8 with a BOM", func(s string) []byte { return append([]byte{0xef, 0xbb, 0xbf}, s...) }},
		{"UTF-16LE", func(s string) []byte { return utf16Bytes(s, false) }},
		{"UTF-16BE", func(s string) []byte { return utf16Bytes(s, true) }},
	}
	load := func(path string, src []byte) (*Suite, string) {
		if KindOf(path) == Feature {
			s, ds := loadFeature(path, src)
			return s, renderDiags(ds)
		}
		s, ds := LoadFile(path, src)
		return s, renderDiags(ds)
	}
	run := func(t *testing.T, tc testCase) {
		want, wantDiags := load(tc.path, []byte(tc.text))
		if tc.valid != (want != nil) {
			t.Fatalf("the UTF-8 file: loaded %t, want %t:\n%s", want != nil, tc.valid, wantDiags)
		}
		for _, enc := range encodings {
			got, diags := load(tc.path, enc.encode(tc.text))
			if diags != wantDiags {
				t.Errorf("%s: diagnostics\n%s\nwant those of the UTF-8 file:\n%s", enc.name, diags, wantDiags)
			}
			if (got != nil) != (want != nil) {
				t.Fatalf("%s: loaded %t, want %t", enc.name, got != nil, want != nil)
			}
			if got != nil && dump(got) != dump(want) {
				t.Errorf("%s: loaded\n%s\nwant\n%s", enc.name, dump(got), dump(want))
			}
		}
	}
	for _, tc := range []testCase{
		{name: "feature", path: "f.feature", text: feature, valid: true},
		{name: "feature with a problem", path: "f.feature", text: badFeature},
		{name: "YAML suite", path: "s.yaml", text: yaml, valid: true},
		{name: "YAML suite with a problem", path: "s.yaml", text: badYAML},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// utf16Bytes encodes s as UTF-16 with its byte order mark.
func utf16Bytes(s string, bigEndian bool) []byte {
	var b bytes.Buffer
	for _, u := range utf16.Encode([]rune("\ufeff" + s)) {
		if bigEndian {
			b.Write([]byte{byte(u >> 8), byte(u)})
		} else {
			b.Write([]byte{byte(u), byte(u >> 8)})
		}
	}
	return b.Bytes()
}

// Text leaves other files alone and keeps a last odd byte visible.
func TestText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		src, out string
	}{
		{"plain UTF-8", "a: é\n", "a: é\n"},
		{"no mark: not UTF-16", "a\x00b", "a\x00b"},
		{"UTF-8 BOM", "\xef\xbb\xbfa", "a"},
		{"UTF-16LE", "\xff\xfea\x00\n\x00", "a\n"},
		{"UTF-16BE surrogate pair", "\xfe\xff\xd8\x3c\xdf\x7d", "🍽"},
		{"odd last byte", "\xff\xfea\x00b", "a\ufffd"},
		{"lone surrogate", "\xff\xfe\x3c\xd8a\x00", "\ufffda"},
	} {
		if got := string(Text([]byte(tc.src))); got != tc.out {
			t.Errorf("%s: Text(%q) = %q, want %q", tc.name, tc.src, got, tc.out)
		}
	}
}
