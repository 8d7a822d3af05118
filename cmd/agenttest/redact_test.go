package main

import (
	"bytes"
	"strings"
	"testing"
)

// A report is streamed through the redactor in writes of any size, so a
// key may be split between two writes; it must be caught all the same.
func TestStreamRedactorKeySplitAcrossWrites(t *testing.T) {
	const key, other = "bk-0123456789abcdef", "rk-feedface"
	doc := `{"note":"the key bk-0123456789abcdef leaked","again":"bk-0123456789abcdef","rk":"rk-feedface","tail":"bk-0123"}`
	want := strings.NewReplacer(key, redactedText, other, redactedText).Replace(doc)
	for chunk := 1; chunk <= len(doc); chunk++ {
		var out bytes.Buffer
		r := newStreamRedactor(&out, []string{key, other, ""})
		for i := 0; i < len(doc); i += chunk {
			if _, err := r.Write([]byte(doc[i:min(i+chunk, len(doc))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("writes of %d bytes:\n got  %s\n want %s", chunk, out.String(), want)
		}
	}
}

func TestStreamRedactorWithoutKeysPassesThrough(t *testing.T) {
	var out bytes.Buffer
	r := newStreamRedactor(&out, nil)
	if _, err := r.Write([]byte("plain")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "plain" {
		t.Fatalf("got %q before Flush, want it written at once", out.String())
	}
	if err := r.Flush(); err != nil || out.String() != "plain" {
		t.Fatalf("after Flush: %q, %v", out.String(), err)
	}
}
