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

func redactBytes(b []byte, secrets []string) []byte {
	for _, s := range secrets {
		if s != "" && bytes.Contains(b, []byte(s)) {
			b = bytes.ReplaceAll(b, []byte(s), []byte(redactedText))
		}
	}
	return b
}

func redact(s string, secrets []string) string {
	for _, k := range secrets {
		if k != "" {
			s = strings.ReplaceAll(s, k, redactedText)
		}
	}
	return s
}
