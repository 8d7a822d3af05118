package secret

import "strings"

// Stream is a text that grows at its end, such as a reply streamed in
// chunks, kept redacted as it grows: after each Append it is what String
// makes of the text before and the chunk together. A key that chunks
// spell between them, none holding it whole, is masked when its last
// part comes.
//
// Append scans only where a form can newly appear: a match the chunk
// adds must end in the chunk, and no match is longer than the redactor's
// reach, so it starts at most reach-1 bytes before the chunk. Before
// those bytes the text is one String found clean, and a match starting
// there would read only those bytes (scanFrom). A text of n chunks thus
// costs time linear in its length plus n times the reach, where
// redacting it whole at each chunk costs n times its length. What a
// match found is widened to (base64Bounds, escapeBounds) and any masks
// earlier in the text are as a scan of the whole text has them: the
// replacement runs over the whole text, only its scan starts late.
//
// A Stream is used by one goroutine. Redactor().Stream() of a nil
// redactor only joins the chunks.
type Stream struct {
	r *Redactor
	// t is the table of r's keys text was last redacted with: when r
	// has learnt a key since, the text before the chunk is not known
	// clean of it, and Append scans it whole.
	t *table
	// text holds no match of t: Append keeps it so, since the window
	// rule needs the text before a chunk clean. Its String shares the
	// builder's bytes, so growing it copies no earlier chunk.
	text strings.Builder
	// escapes is set once a chunk held an ESC: a key that terminal
	// escapes part is found only in the whole text without them
	// (acrossEscapes), scanned whole at each chunk from then on. A
	// stream without escapes, the case of every agent that writes text,
	// keeps the window's cost.
	escapes bool
}

// Stream returns an empty Stream that redacts with r.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Append adds chunk at the end of the text and redacts the text, as
// String would redact the text before and the chunk together. It reports
// whether it masked anything; the text is then shorter than the text
// before and the chunk.
func (s *Stream) Append(chunk string) bool {
	before := s.text.Len()
	s.text.WriteString(chunk)
	t := s.r.current()
	if t.empty() {
		s.t = t
		return false
	}
	from := 0
	if t == s.t {
		from = t.scanFrom(before)
	}
	s.t = t
	s.escapes = s.escapes || strings.Contains(chunk, "\x1b")
	text := s.text.String()
	masked := false
	if start, _, ok := find(t, text, from); ok {
		text, masked = string(t.redact([]byte(text), start)), true
	}
	if s.escapes {
		var bare bool
		text, bare = t.acrossEscapes(text)
		masked = masked || bare
	}
	if !masked {
		return false
	}
	// Reset, not truncate: strings String returned keep their bytes.
	s.text.Reset()
	s.text.WriteString(text)
	return true
}

// String returns the text: the chunks appended so far, redacted.
func (s *Stream) String() string { return s.text.String() }

// Len returns the length of the text in bytes.
func (s *Stream) Len() int { return s.text.Len() }

// Redactor returns the redactor the stream redacts with. A key it learns
// is masked in the whole text at the next Append; a caller whose
// redactor is another (With) starts a new Stream.
func (s *Stream) Redactor() *Redactor { return s.r }
