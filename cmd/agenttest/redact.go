package main

import (
	"bytes"
	"io"
	"strings"
)

// redactedText replaces a key wherever it would be printed.
const redactedText = "[REDACTED]"

// redactor is a writer that replaces API keys in what passes through it.
// The report views write whole lines and blocks, so a key is never split
// across two writes.
type redactor struct {
	w       io.Writer
	secrets [][]byte
}

func newRedactor(w io.Writer, secrets []string) io.Writer {
	r := &redactor{w: w}
	for _, s := range secrets {
		if s != "" {
			r.secrets = append(r.secrets, []byte(s))
		}
	}
	if len(r.secrets) == 0 {
		return w
	}
	return r
}

func (r *redactor) Write(p []byte) (int, error) {
	out := p
	for _, s := range r.secrets {
		if bytes.Contains(out, s) {
			out = bytes.ReplaceAll(out, s, []byte(redactedText))
		}
	}
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// streamRedactor replaces API keys in a stream whose writes may split a
// key, such as a report streamed through a buffered encoder: it holds back
// the last len(longest key)-1 bytes of every write, where a key may be
// starting, until the next write shows whether it is one. Flush writes
// what is held back once the stream is complete.
type streamRedactor struct {
	w       io.Writer
	secrets [][]byte
	// keep is how many trailing bytes may be the start of a key.
	keep int
	buf  []byte
	err  error
}

func newStreamRedactor(w io.Writer, secrets []string) *streamRedactor {
	r := &streamRedactor{w: w}
	for _, s := range secrets {
		if s != "" {
			r.secrets = append(r.secrets, []byte(s))
			r.keep = max(r.keep, len(s)-1)
		}
	}
	return r
}

func (r *streamRedactor) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(r.secrets) == 0 {
		_, r.err = r.w.Write(p)
		return len(p), r.err
	}
	r.buf = append(r.buf, p...)
	r.replace()
	if n := len(r.buf) - r.keep; n > 0 {
		if _, r.err = r.w.Write(r.buf[:n]); r.err != nil {
			return 0, r.err
		}
		r.buf = append(r.buf[:0], r.buf[n:]...)
	}
	return len(p), nil
}

// Flush writes the bytes held back; call it once, at the end.
func (r *streamRedactor) Flush() error {
	if r.err != nil || len(r.buf) == 0 {
		return r.err
	}
	r.replace()
	_, r.err = r.w.Write(r.buf)
	r.buf = r.buf[:0]
	return r.err
}

func (r *streamRedactor) replace() {
	for _, s := range r.secrets {
		if bytes.Contains(r.buf, s) {
			r.buf = bytes.ReplaceAll(r.buf, s, []byte(redactedText))
		}
	}
}

func redact(s string, secrets []string) string {
	for _, k := range secrets {
		if k != "" {
			s = strings.ReplaceAll(s, k, redactedText)
		}
	}
	return s
}
